import { jetstream, jetstreamManager, type JetStreamClient, type JetStreamManager } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { BehaviorSubject, distinctUntilChanged, type Observable } from 'rxjs';
import { errorFields, silentLogger, type EventBusLogger } from '../logger.js';
import {
  redactServerUrl,
  serverList,
  toNatsConnectOptions,
  type NatsConnectionOptions,
} from './connection-options.js';

/** What readiness needs to know: only `connected` may publish and consume. */
export type ConnectionState = 'connected' | 'disconnected' | 'reconnecting' | 'closed';

export interface ConnectEventBusOptions extends NatsConnectionOptions {
  logger?: EventBusLogger;
  /** Request timeout of JetStream API calls and publish acknowledgements. */
  jetStreamTimeoutMs?: number;
}

/**
 * One NATS connection with its JetStream clients and a connection state for readiness. The client
 * reconnects forever (with jitter); the state follows it.
 */
export class EventBusConnection {
  private readonly state$ = new BehaviorSubject<ConnectionState>('connected');
  private managerPromise?: Promise<JetStreamManager>;
  readonly js: JetStreamClient;

  private constructor(
    readonly nc: NatsConnection,
    private readonly logger: EventBusLogger,
    private readonly jetStreamTimeoutMs: number,
  ) {
    this.js = jetstream(nc, { timeout: jetStreamTimeoutMs });
    void this.followStatus();
  }

  static async connect(options: ConnectEventBusOptions): Promise<EventBusConnection> {
    const logger = options.logger ?? silentLogger();
    const servers = serverList(options.servers).map(redactServerUrl);
    const nc = await connect(toNatsConnectOptions(options));
    logger.info({ servers, server: nc.info?.version, name: options.name }, 'connected to NATS');
    return new EventBusConnection(nc, logger, options.jetStreamTimeoutMs ?? 5000);
  }

  /** The current state; `connected` is what readiness checks. */
  get state(): ConnectionState {
    return this.state$.value;
  }

  get isConnected(): boolean {
    return this.state$.value === 'connected';
  }

  /** State changes, starting with the current one. */
  get status$(): Observable<ConnectionState> {
    return this.state$.pipe(distinctUntilChanged());
  }

  /** The server's version, e.g. `2.9.10`, to degrade where a feature needs a newer server. */
  get serverVersion(): string | undefined {
    return this.nc.info?.version;
  }

  jsm(): Promise<JetStreamManager> {
    this.managerPromise ??= jetstreamManager(this.nc, { timeout: this.jetStreamTimeoutMs }).catch(
      (error: unknown) => {
        this.managerPromise = undefined;
        throw error;
      },
    );
    return this.managerPromise;
  }

  /** Lets in-flight publishes and acks finish, then closes. */
  async drain(): Promise<void> {
    if (this.nc.isClosed()) return;
    await this.nc.drain();
  }

  async close(): Promise<void> {
    if (this.nc.isClosed()) return;
    await this.nc.close();
  }

  private async followStatus(): Promise<void> {
    try {
      for await (const status of this.nc.status()) {
        switch (status.type) {
          case 'disconnect':
            this.state$.next('disconnected');
            this.logger.warn({ server: redactServerUrl(status.server) }, 'disconnected from NATS');
            break;
          case 'reconnecting':
            this.state$.next('reconnecting');
            break;
          case 'reconnect':
            this.state$.next('connected');
            this.logger.info({ server: redactServerUrl(status.server) }, 'reconnected to NATS');
            break;
          case 'staleConnection':
            this.logger.warn('NATS connection is stale, reconnecting');
            break;
          case 'ldm':
            this.logger.warn(
              { server: redactServerUrl(status.server) },
              'NATS server entered lame duck mode',
            );
            break;
          case 'error':
            this.logger.warn(errorFields(status.error), 'NATS connection error');
            break;
          case 'close':
            this.state$.next('closed');
            break;
          default:
            break;
        }
      }
    } finally {
      // The status iterator ends when the connection closes.
      this.state$.next('closed');
      this.state$.complete();
    }
  }
}
