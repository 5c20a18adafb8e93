import type { IncomingMessage as Request, ServerResponse as Response } from 'node:http';
import { describeAccess, type ReviewedUser } from '@capstan/observability';
import type { DashboardCallers } from '../auth/dashboard-callers.js';
import { FleetAccess } from '../auth/fleet-access.js';
import type { FleetChange, FleetView } from '../fleet/fleet-view.js';
import type { MachineView } from '../machines/machine-view.js';
import type { EventHistory } from '../timeline/event-history.js';
import type { TimelineStep } from '../timeline/timeline-step.js';
import { ServerSentEvents } from './server-sent-events.js';

/** A Cluster whose Machines change all at once (a rollout) is sent at most this often, each time as it is then. */
export const MACHINES_COALESCE_MS = 250;

/** What one open Cluster page is fed from. */
export interface ClusterStreamSources {
  fleet: FleetView;
  machines: MachineView;
  history: EventHistory;
  callers: DashboardCallers;
}

/**
 * One open Cluster page, live (server-sent events, framed and re-authenticated as the fleet stream is):
 * - `cluster`: the Cluster's fleet summary, first and whenever it changes; `cluster-deleted` when it is gone;
 * - `machines`: `{machines: MachineRow[]}`, every Machine of the Cluster, first and whenever one changes, at most
 *   once per MACHINES_COALESCE_MS;
 * - `timeline`: `{steps: [step]}` as new events of the Cluster arrive on the event bus (a live ordered consumer from
 *   now on; the past is `GET .../timeline`), or `timeline-unavailable` `{message}` once when the bus cannot be read.
 * Everything comes from the shared informers and the bus, read with the dashboard's credentials, so each event is
 * sent only while the user may get the Cluster and list its namespace's Machines (cached reviews); when they no longer
 * may, the stream ends with `error`. No polling: every event follows a change.
 */
export class ClusterStream {
  private events?: ServerSentEvents;
  private machinesTimer?: NodeJS.Timeout;
  private machinesSentAt = 0;

  constructor(
    private readonly sources: ClusterStreamSources,
    private readonly user: ReviewedUser,
    private readonly token: string,
    private readonly namespace: string,
    private readonly name: string,
  ) {}

  /** Whether the user may follow this Cluster's page: the refusal's message, or undefined when they may. */
  async refusal(): Promise<string | undefined> {
    for (const attributes of [
      FleetAccess.getCluster(this.namespace, this.name),
      FleetAccess.listMachines(this.namespace),
    ])
      if (!(await this.sources.callers.access.allowed(this.user, attributes)))
        return `${this.user.username} may not ${describeAccess(attributes)}`;
    return undefined;
  }

  async serve(request: Request, response: Response): Promise<void> {
    const { fleet, machines, history, callers } = this.sources;
    const events = new ServerSentEvents(request, response, callers.reviews, this.token);
    this.events = events;
    events.open();
    const following = new AbortController();
    const unsubscribeFleet = fleet.subscribe((change) => {
      if (this.isThisCluster(change)) events.enqueue(() => this.sendCluster(change));
    });
    const unsubscribeMachines = machines.subscribe(this.namespace, this.name, () => this.machinesChanged());
    events.onClose(() => {
      unsubscribeFleet();
      unsubscribeMachines();
      clearTimeout(this.machinesTimer);
      following.abort();
    });
    // Subscribed first, then the snapshot: a change in between comes after it, never lost.
    await events.later(async () => {
      if (!(await this.stillAllowed())) return;
      const cluster = fleet.get(this.namespace, this.name);
      if (cluster) events.send('cluster', cluster);
      this.sendMachines();
    });
    this.followTimeline(history, following.signal);
  }

  private isThisCluster(change: FleetChange): boolean {
    const { namespace, name } = change.type === 'upsert' ? change.cluster : change;
    return namespace === this.namespace && name === this.name;
  }

  private async sendCluster(change: FleetChange): Promise<void> {
    if (!(await this.stillAllowed())) return;
    if (change.type === 'upsert') this.events?.send('cluster', change.cluster);
    else this.events?.send('cluster-deleted', { namespace: this.namespace, name: this.name });
  }

  /** A Machine changed: the rows go out once the coalescing window since the last send has passed. */
  private machinesChanged(): void {
    if (this.machinesTimer) return;
    const wait = Math.max(0, this.machinesSentAt + MACHINES_COALESCE_MS - Date.now());
    this.machinesTimer = setTimeout(() => {
      this.machinesTimer = undefined;
      this.events?.enqueue(async () => {
        if (await this.stillAllowed()) this.sendMachines();
      });
    }, wait);
  }

  private sendMachines(): void {
    this.machinesSentAt = Date.now();
    this.events?.send('machines', { machines: this.sources.machines.machinesOf(this.namespace, this.name) });
  }

  private followTimeline(history: EventHistory, signal: AbortSignal): void {
    const unavailable = history.unavailable();
    if (unavailable) {
      this.events?.enqueue(() => this.events?.send('timeline-unavailable', { message: unavailable }));
      return;
    }
    const onStep = (step: TimelineStep) =>
      this.events?.enqueue(async () => {
        if (await this.stillAllowed()) this.events?.send('timeline', { steps: [step] });
      });
    history.follow(this.namespace, this.name, onStep, signal).catch((error: unknown) => {
      if (signal.aborted) return;
      const message = `the event bus stopped: ${error instanceof Error ? error.message : String(error)}`;
      this.events?.enqueue(() => this.events?.send('timeline-unavailable', { message }));
    });
  }

  /** Whether the user still may (cached reviews); if not, the stream ends saying why. */
  private async stillAllowed(): Promise<boolean> {
    const refusal = await this.refusal();
    if (refusal) this.events?.fail(refusal);
    return refusal === undefined;
  }
}
