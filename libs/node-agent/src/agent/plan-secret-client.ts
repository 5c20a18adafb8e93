import type { V1Secret } from '@kubernetes/client-node';
import { isConflict, SECRETS, type KubeClient, type ResourceClient } from '@capstan/kube';
import { planChecksum } from '../plan/parse-plan.js';
import { decodeSecretData, encodeSecretData, PLAN_KEYS, type PlanData } from '../report/plan-secret.js';

/** Attempts of one report before it is left for the next sync. */
const WRITE_ATTEMPTS = 5;

/**
 * The agent's only access to the management cluster: read and update its own plan Secret. Every decision and every
 * write starts from a fresh GET, never from a watch event: a watch that delivers a version older than the agent's
 * own last write (after a relist, or from a lagging cache) can neither wedge the agent (Rancher's "secret received
 * was too old") nor make it act twice. An update that loses a race is redone on the newer Secret, and dropped when
 * the plan it reports on is no longer the Secret's plan.
 */
export class PlanSecretClient {
  private readonly secrets: ResourceClient<V1Secret>;

  constructor(
    client: KubeClient,
    readonly namespace: string,
    readonly name: string,
  ) {
    this.secrets = client.resource<V1Secret>(SECRETS);
  }

  async read(signal?: AbortSignal): Promise<{ data: PlanData; secret: V1Secret }> {
    const secret = await this.secrets.get({ namespace: this.namespace, name: this.name }, signal);
    return { data: decodeSecretData(secret.data), secret };
  }

  /**
   * Applies `change` to the Secret as it is now and writes it (PUT, conditional on the version read). `change`
   * returns undefined to write nothing. With `forChecksum`, a Secret whose plan changed meanwhile is left alone.
   * Returns the data written, or undefined when nothing was.
   */
  async update(
    change: (data: PlanData) => PlanData | undefined,
    options: { forChecksum?: string; signal?: AbortSignal } = {},
  ): Promise<PlanData | undefined> {
    for (let attempt = 1; ; attempt++) {
      const { data, secret } = await this.read(options.signal);
      if (options.forChecksum !== undefined) {
        const raw = data[PLAN_KEYS.plan];
        if (!raw || planChecksum(raw) !== options.forChecksum) return undefined;
      }
      const next = change(data);
      if (!next) return undefined;
      try {
        await this.secrets.replace({ ...secret, data: encodeSecretData(next) }, { signal: options.signal });
        return next;
      } catch (error) {
        if (!isConflict(error) || attempt >= WRITE_ATTEMPTS) throw error;
      }
    }
  }
}
