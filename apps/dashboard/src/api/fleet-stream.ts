import type { IncomingMessage as Request, ServerResponse as Response } from 'node:http';
import type { ReviewedUser } from '@capstan/observability';
import type { DashboardCallers } from '../auth/dashboard-callers.js';
import type { FleetChange, FleetView } from '../fleet/fleet-view.js';
import { ServerSentEvents } from './server-sent-events.js';

/**
 * One browser's live fleet (server-sent events): `snapshot` with the Clusters the user may list, then `upsert` and
 * `delete` as the shared informer sees changes, each passed only if the user may list that namespace (cached
 * reviews), in the order they happened; `signed-out` and `error` as server-sent-events.ts says.
 */
export class FleetStream {
  constructor(
    private readonly fleet: FleetView,
    private readonly callers: DashboardCallers,
    private readonly user: ReviewedUser,
    private readonly token: string,
  ) {}

  async serve(request: Request, response: Response): Promise<void> {
    const events = new ServerSentEvents(request, response, this.callers.reviews, this.token);
    events.open();
    const unsubscribe = this.fleet.subscribe((change) => events.enqueue(() => this.forward(events, change)));
    events.onClose(unsubscribe);
    // Subscribed first, then the snapshot: a change in between comes after it, never lost.
    await events.later(async () => {
      const visible = await this.callers.access.visibleNamespaces(this.user, this.fleet.namespaces());
      const items = this.fleet.list().filter((c) => visible === 'all' || visible.has(c.namespace));
      events.send('snapshot', { items });
    });
  }

  private async forward(events: ServerSentEvents, change: FleetChange): Promise<void> {
    const namespace = change.type === 'upsert' ? change.cluster.namespace : change.namespace;
    if (!(await this.callers.access.maySee(this.user, namespace))) return;
    events.send(
      change.type,
      change.type === 'upsert' ? change.cluster : { namespace: change.namespace, name: change.name },
    );
  }
}
