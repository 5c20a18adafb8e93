import { getControllerOf, type ControllerSource, type Lease } from '@capstan/kube';
import { AGENT_LEASE_SECONDS } from '@capstan/node-agent';
import { RESOURCES } from '@capstan/api';

interface Seen {
  renewTime: string | undefined;
  /** When this provider saw `renewTime` change: its own clock, never the agent's. */
  observedAt: number;
  durationMs: number;
  silent: boolean;
  /** The K3sConfig the Lease belongs to (`namespace/name`). */
  config: string | undefined;
}

/** How often silent agents are looked for. */
const SWEEP_MS = 2_000;

/**
 * Which machines' node agents stopped reporting, from their heartbeat Leases (agent-heartbeat.ts), as the node
 * lifecycle controller tells a dead kubelet: a Lease whose `renewTime` this provider has not seen change for the
 * Lease's duration, timed on its own clock from when it saw the last change (the agent's clock is never compared
 * with this one). A renewal only updates memory; the K3sConfig is reconciled when its agent goes silent or comes
 * back, so a thousand heartbeats cost no reconcile. After a provider start every Lease counts as just renewed.
 */
export class AgentLiveness {
  private readonly seen = new Map<string, Seen>();
  private enqueue: (configKey: string) => void = () => undefined;

  constructor(
    private readonly leases: ControllerSource<Lease>,
    private readonly now: () => number = Date.now,
  ) {}

  /** Watches the Leases and wakes the K3sConfig whose agent goes silent or comes back (a controller's WakeSource). */
  start(wake: (configKey: string) => void): () => void {
    this.enqueue = wake;
    const off = this.leases.addEventHandler({
      onAdd: (lease) => this.observe(lease),
      onUpdate: (_old, lease) => this.observe(lease),
      onDelete: (lease) => this.seen.delete(keyOf(lease)),
    });
    const timer = setInterval(() => this.sweep(), SWEEP_MS);
    timer.unref();
    return () => {
      off();
      clearInterval(timer);
    };
  }

  /**
   * The duration (seconds) of the Lease the agent of a machine's plan Secret did not renew, when it is silent;
   * undefined when it reports, or never reported (an agent not started yet is `WaitingForAgent`, not silent). A
   * figure that does not grow with time, so a condition built from it does not change on every reconcile.
   */
  silentPast(namespace: string, secretName: string): number | undefined {
    const seen = this.seen.get(`${namespace}/${secretName}`);
    return seen?.silent ? seen.durationMs / 1000 : undefined;
  }

  private observe(lease: Lease): void {
    const key = keyOf(lease);
    const renewTime = lease.spec?.renewTime;
    const previous = this.seen.get(key);
    const owner = getControllerOf(lease);
    const config =
      owner?.kind === RESOURCES.K3sConfig.kind ? `${lease.metadata?.namespace}/${owner.name}` : undefined;
    const durationMs = (lease.spec?.leaseDurationSeconds ?? AGENT_LEASE_SECONDS) * 1000;
    if (previous && previous.renewTime === renewTime) {
      this.seen.set(key, { ...previous, durationMs, config });
      return;
    }
    this.seen.set(key, { renewTime, observedAt: this.now(), durationMs, silent: false, config });
    if (previous?.silent && config) this.enqueue(config);
  }

  private sweep(): void {
    const now = this.now();
    for (const seen of this.seen.values()) {
      if (seen.silent || seen.renewTime === undefined || now - seen.observedAt < seen.durationMs) continue;
      seen.silent = true;
      if (seen.config) this.enqueue(seen.config);
    }
  }
}

const keyOf = (lease: Lease) => `${lease.metadata?.namespace}/${lease.metadata?.name}`;
