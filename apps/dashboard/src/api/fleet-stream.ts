import type { IncomingMessage as Request, ServerResponse as Response } from 'node:http';
import type { ReviewedUser } from '@capstan/observability';
import type { DashboardCallers } from '../auth/dashboard-callers.js';
import type { FleetChange, FleetView } from '../fleet/fleet-view.js';

/** A comment line this often keeps proxies from closing an idle stream; the token is checked again each time. */
const HEARTBEAT_MS = 15_000;
/** Changes waiting for a slow reader before the stream is cut (the browser reconnects and gets a fresh snapshot). */
const MAX_PENDING_CHANGES = 10_000;

/**
 * One browser's live fleet (server-sent events): `snapshot` with the Clusters the user may list, then `upsert` and
 * `delete` as the shared informer sees changes, each passed only if the user may list that namespace (cached
 * reviews), in the order they happened. `signed-out` ends it when the token stops being accepted (expired, revoked).
 * Served with fetch streaming by the page, so the token travels as a header as on every other call.
 */
export class FleetStream {
  private chain: Promise<void> = Promise.resolve();
  private pending = 0;
  private closed = false;

  constructor(
    private readonly fleet: FleetView,
    private readonly callers: DashboardCallers,
    private readonly user: ReviewedUser,
    private readonly token: string,
  ) {}

  async serve(request: Request, response: Response): Promise<void> {
    response.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-store',
      'x-accel-buffering': 'no',
    });
    const unsubscribe = this.fleet.subscribe((change) => this.enqueue(response, change));
    const heartbeat = setInterval(
      () => void this.later(() => this.heartbeat(response), response),
      HEARTBEAT_MS,
    );
    heartbeat.unref();
    const close = () => {
      this.closed = true;
      unsubscribe();
      clearInterval(heartbeat);
    };
    request.once('close', close);
    response.once('close', close);
    // Subscribed first, then the snapshot: a change in between comes after it, never lost.
    await this.later(async () => {
      const visible = await this.callers.access.visibleNamespaces(this.user, this.fleet.namespaces());
      const items = this.fleet.list().filter((c) => visible === 'all' || visible.has(c.namespace));
      this.send(response, 'snapshot', { items });
    }, response);
  }

  private enqueue(response: Response, change: FleetChange): void {
    if (this.pending >= MAX_PENDING_CHANGES) {
      response.destroy();
      return;
    }
    this.pending++;
    void this.later(async () => {
      this.pending--;
      const namespace = change.type === 'upsert' ? change.cluster.namespace : change.namespace;
      if (!(await this.callers.access.maySee(this.user, namespace))) return;
      this.send(
        response,
        change.type,
        change.type === 'upsert' ? change.cluster : { namespace: change.namespace, name: change.name },
      );
    }, response);
  }

  private async heartbeat(response: Response): Promise<void> {
    if (!(await this.callers.reviews.authenticate(this.token))) {
      this.send(response, 'signed-out', { message: 'the token is no longer accepted: sign in again' });
      response.end();
      return;
    }
    if (!this.closed) response.write(': ping\n\n');
  }

  /**
   * Runs `step` after the previous ones: events go out in the order their changes came. A step that fails (a review
   * the API server did not answer) ends the stream saying so: the page reconnects and starts from a new snapshot, so
   * no change is silently skipped.
   */
  private later(step: () => Promise<void>, response?: Response): Promise<void> {
    this.chain = this.chain
      .then(() => (this.closed ? undefined : step()))
      .catch((error: unknown) => {
        if (!response) return;
        this.send(response, 'error', {
          message: `the live view stopped: ${error instanceof Error ? error.message : String(error)}`,
        });
        response.end();
      });
    return this.chain;
  }

  private send(response: Response, event: string, data: unknown): void {
    if (this.closed) return;
    response.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
  }
}
