import type { Logger } from 'pino';
import { describeFailure, isNotFound, LEASES_V1, microTime, type KubeClient, type Lease, type ResourceClient } from '@capstan/kube';
import { AGENT_LEASE_SECONDS } from '../access/plan-access.js';

/** The shortest renewal period, whatever the Lease says (a Lease of 1 s must not make the agent spin). */
const MIN_RENEW_MS = 1_000;

/**
 * The agent's heartbeat, as a kubelet's node Lease: it renews the Lease named after its plan Secret every third of
 * the Lease's duration, so the bootstrap provider can tell a silent agent from one with nothing to do (an agent's
 * plan Secret alone says nothing once the plan is applied). The provider creates the Lease; the agent may only read
 * and update it. A missing Lease (an older provider, or not made yet) is looked for again at the next beat.
 */
export class AgentHeartbeat {
  private readonly leases: ResourceClient<Lease>;
  private timer: NodeJS.Timeout | undefined;
  private readonly abort = new AbortController();
  private durationSeconds = AGENT_LEASE_SECONDS;

  constructor(
    client: KubeClient,
    private readonly namespace: string,
    private readonly name: string,
    private readonly logger: Logger,
  ) {
    this.leases = client.resource<Lease>(LEASES_V1);
  }

  start(): void {
    void this.beat();
  }

  stop(): void {
    clearTimeout(this.timer);
    this.abort.abort();
  }

  private async beat(): Promise<void> {
    try {
      const lease = await this.leases.get({ namespace: this.namespace, name: this.name }, this.abort.signal);
      this.durationSeconds = lease.spec?.leaseDurationSeconds ?? AGENT_LEASE_SECONDS;
      await this.leases.replace({ ...lease, spec: { ...lease.spec, renewTime: microTime() } }, { signal: this.abort.signal });
    } catch (error) {
      if (this.abort.signal.aborted) return;
      if (!isNotFound(error)) this.logger.debug({ err: { message: describeFailure(error) } }, 'heartbeat not written');
    }
    if (this.abort.signal.aborted) return;
    this.timer = setTimeout(() => void this.beat(), Math.max(MIN_RENEW_MS, (this.durationSeconds * 1000) / 3));
    this.timer.unref();
  }
}
