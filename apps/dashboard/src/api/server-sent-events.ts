import type { IncomingMessage as Request, ServerResponse as Response } from 'node:http';
import type { CallerReviews } from '@capstan/observability';

/** A comment line this often keeps proxies from closing an idle stream; the token is checked again each time. */
export const HEARTBEAT_MS = 15_000;
/** Steps waiting for a slow reader before the stream is cut (the browser reconnects and starts afresh). */
export const MAX_PENDING_STEPS = 10_000;

/**
 * One browser's server-sent event stream, as the dashboard's live views share it: the framing (`event:` and `data:`
 * lines), a heartbeat that checks the user's token again and sends `signed-out` when it is no longer accepted
 * (expired, revoked), and one queue of steps run in order, so events go out in the order their changes came. A step
 * that fails (a review the API server did not answer) ends the stream with `error`: the page reconnects and starts
 * from a fresh snapshot, so nothing is skipped silently. Served with fetch streaming by the page, so the token travels
 * as a header as on every other call.
 */
export class ServerSentEvents {
  private chain: Promise<void> = Promise.resolve();
  private pending = 0;
  private isClosed = false;
  private readonly closeHandlers: (() => void)[] = [];

  constructor(
    private readonly request: Request,
    private readonly response: Response,
    private readonly reviews: CallerReviews,
    private readonly token: string,
  ) {}

  /** Sends the head and starts the heartbeat; `onClose` handlers run once the browser has gone or the stream ended. */
  open(): void {
    this.response.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-store',
      'x-accel-buffering': 'no',
    });
    const heartbeat = setInterval(() => void this.later(() => this.heartbeat()), HEARTBEAT_MS);
    heartbeat.unref();
    this.onClose(() => clearInterval(heartbeat));
    const close = () => this.close();
    this.request.once('close', close);
    this.response.once('close', close);
  }

  onClose(handler: () => void): void {
    if (this.isClosed) handler();
    else this.closeHandlers.push(handler);
  }

  /**
   * Queues `step` for a change as it happens; a reader so far behind that MAX_PENDING_STEPS wait is cut off (it
   * reconnects and gets a fresh snapshot).
   */
  enqueue(step: () => Promise<void> | void): void {
    if (this.pending >= MAX_PENDING_STEPS) {
      this.response.destroy();
      return;
    }
    this.pending++;
    void this.later(async () => {
      this.pending--;
      await step();
    });
  }

  /** Runs `step` after the earlier ones (not at all once the stream is closed); a failure ends the stream. */
  later(step: () => Promise<void> | void): Promise<void> {
    this.chain = this.chain
      .then(() => (this.isClosed ? undefined : step()))
      .catch((error: unknown) => {
        this.fail(`the live view stopped: ${error instanceof Error ? error.message : String(error)}`);
      });
    return this.chain;
  }

  send(event: string, data: unknown): void {
    if (this.isClosed) return;
    this.response.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
  }

  /** Ends the stream with `error` saying why (the page reconnects, or shows a refusal it gets then). */
  fail(message: string): void {
    this.endWith('error', { message });
  }

  private async heartbeat(): Promise<void> {
    if (!(await this.reviews.authenticate(this.token))) {
      this.endWith('signed-out', { message: 'the token is no longer accepted: sign in again' });
      return;
    }
    if (!this.isClosed) this.response.write(': ping\n\n');
  }

  /** Sends a last event and ends the response; nothing is written after it. */
  private endWith(event: string, data: unknown): void {
    if (this.isClosed) return;
    this.send(event, data);
    this.response.end();
    this.close();
  }

  private close(): void {
    if (this.isClosed) return;
    this.isClosed = true;
    for (const handler of this.closeHandlers.splice(0)) handler();
  }
}
