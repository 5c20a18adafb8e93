import {
  connect,
  type ClientHttp2Session,
  type ClientHttp2Stream,
  type OutgoingHttpHeaders,
  type SecureClientSessionOptions,
} from 'node:http2';

/** Streams one session carries at most, under the server's own limit (kube-apiserver's is larger). */
const MAX_STREAMS_PER_SESSION = 100;
/** Flow-control windows: a watch's burst or a large list does not wait for a window update per 64 KiB. */
const STREAM_WINDOW_BYTES = 1 << 20;
const SESSION_WINDOW_BYTES = 16 << 20;

/**
 * HTTP/2 sessions to one upstream server, opened as its requests need them: each request is a stream of a session
 * with room for one, so many long-lived watches through a front proxy hold a connection or two, not one each. A
 * session that fails or is told to go away takes no new streams; the next request opens another.
 */
export class UpstreamSessions {
  private readonly open = new Map<ClientHttp2Session, { streams: number }>();
  private closed = false;

  constructor(
    private readonly authority: string,
    private readonly options: SecureClientSessionOptions,
    private readonly onSessionError: (error: Error) => void,
  ) {}

  /** Starts a request: the stream's 'response' gives the answer's headers, its data the body. */
  request(headers: OutgoingHttpHeaders): ClientHttp2Stream {
    if (this.closed) throw new Error('the upstream sessions are closed');
    const [session, usage] = this.sessionWithRoom();
    usage.streams++;
    const stream = session.request(headers);
    stream.once('close', () => usage.streams--);
    return stream;
  }

  /** Ends every session and its streams. */
  close(): void {
    this.closed = true;
    for (const session of this.open.keys()) session.destroy();
    this.open.clear();
  }

  /** How many sessions are open (for tests). */
  get size(): number {
    return this.open.size;
  }

  private sessionWithRoom(): [ClientHttp2Session, { streams: number }] {
    for (const [session, usage] of this.open) {
      const limit = Math.min(session.remoteSettings.maxConcurrentStreams ?? MAX_STREAMS_PER_SESSION, MAX_STREAMS_PER_SESSION);
      if (!session.closed && !session.destroyed && usage.streams < limit) return [session, usage];
    }
    const session = connect(this.authority, { ...this.options, settings: { initialWindowSize: STREAM_WINDOW_BYTES } });
    const usage = { streams: 0 };
    this.open.set(session, usage);
    const retire = () => this.open.delete(session);
    session.once('connect', () => session.setLocalWindowSize(SESSION_WINDOW_BYTES));
    session.on('error', (error: Error) => {
      retire();
      this.onSessionError(error);
    });
    session.once('goaway', retire);
    session.once('close', retire);
    return [session, usage];
  }
}
