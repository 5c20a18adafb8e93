import type { V1Secret } from '@kubernetes/client-node';
import { isConflict, SECRETS, type KubeClient, type ResourceClient } from '@capstan/kube';
import { planChecksum } from '../plan/parse-plan.js';
import { decodeSecretData, encodeSecretData, PLAN_KEYS, type PlanData } from '../report/plan-secret.js';

/** Attempts of one report before it is left for the next sync. */
const WRITE_ATTEMPTS = 5;
/** How many of its own latest writes the client recognises in watch events (one sync writes at most a few). */
const OWN_VERSIONS_KEPT = 8;

/**
 * The agent's only access to the management cluster: read and update its own plan Secret. Every decision starts
 * from a fresh GET, never from a watch event: a watch that delivers a version older than the agent's own last write
 * (after a relist, or from a lagging cache) can neither wedge the agent (Rancher's "secret received was too old") nor
 * make it act twice. A write starts from the newest version the agent itself read or wrote and is conditional on it
 * (PUT with its resourceVersion), so a write on an outdated base fails and is redone on a fresh GET, and dropped when
 * the plan it reports on is no longer the Secret's plan. It also tells the agent's own writes from others' in the
 * watch: a sync that wrote a version has already decided on it.
 */
export class PlanSecretClient {
  private readonly secrets: ResourceClient<V1Secret>;
  /** The resourceVersions of this client's latest writes: their watch events are the agent's own. */
  private readonly ownVersions: string[] = [];
  private writesInFlight = 0;
  /** The newest Secret this client read or wrote: the base of its next write, which is conditional on its version. */
  private latest: V1Secret | undefined;
  /** Watch events seen while a write was in flight: the event can overtake the write's answer. */
  private held: { resourceVersion: string | undefined; changed: () => void }[] = [];

  constructor(
    client: KubeClient,
    readonly namespace: string,
    readonly name: string,
  ) {
    this.secrets = client.resource<V1Secret>(SECRETS);
  }

  /**
   * A watch event brought the Secret at `resourceVersion`: calls `changed` unless that version is one this client
   * wrote. While a write is in flight the answer waits for it.
   */
  observed(resourceVersion: string | undefined, changed: () => void): void {
    if (this.writesInFlight > 0) {
      this.held.push({ resourceVersion, changed });
      return;
    }
    if (resourceVersion === undefined || !this.ownVersions.includes(resourceVersion)) changed();
  }

  async read(signal?: AbortSignal): Promise<{ data: PlanData; secret: V1Secret }> {
    const secret = await this.secrets.get({ namespace: this.namespace, name: this.name }, signal);
    this.latest = secret;
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
      const base = attempt === 1 ? this.latest : undefined;
      const { data, secret } = base ? { data: decodeSecretData(base.data), secret: base } : await this.read(options.signal);
      if (options.forChecksum !== undefined) {
        const raw = data[PLAN_KEYS.plan];
        if (!raw || planChecksum(raw) !== options.forChecksum) return undefined;
      }
      const next = change(data);
      if (!next) return undefined;
      this.writesInFlight++;
      try {
        const written = await this.secrets.replace({ ...secret, data: encodeSecretData(next) }, { signal: options.signal });
        this.remember(written.metadata?.resourceVersion);
        this.latest = written;
        return next;
      } catch (error) {
        this.latest = undefined;
        // A remembered base may be outdated in any way (a newer version, the Secret deleted and created again): the
        // next attempt reads it fresh.
        if (!(base || isConflict(error)) || attempt >= WRITE_ATTEMPTS) throw error;
      } finally {
        this.writesInFlight--;
        this.release();
      }
    }
  }

  private remember(resourceVersion: string | undefined): void {
    if (resourceVersion === undefined) return;
    this.ownVersions.push(resourceVersion);
    if (this.ownVersions.length > OWN_VERSIONS_KEPT) this.ownVersions.shift();
  }

  private release(): void {
    if (this.writesInFlight > 0) return;
    const held = this.held;
    this.held = [];
    for (const event of held) this.observed(event.resourceVersion, event.changed);
  }
}
