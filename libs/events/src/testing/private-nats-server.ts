import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, type NodeConnectionOptions } from '@nats-io/transport-node';
import { freePort, resolveNatsServer, startProcess, stopPid, type ManagedProcess } from '@capstan/testing';

export interface PrivateNatsServerOptions {
  /** Extra configuration (nats-server config syntax), e.g. an `authorization { ... }` or `tls { ... }` block. */
  config?: string;
  /** Options the readiness probe connects with (credentials, TLS) when the config requires them. */
  probe?: Omit<NodeConnectionOptions, 'servers'>;
}

/**
 * A nats-server with JetStream of one's own, on a free port with its store in a temp dir, for tests
 * and benchmarks that stop it, restart it, or configure authentication. Not exported from the library.
 */
export class PrivateNatsServer {
  readonly dir = mkdtempSync(join(tmpdir(), 'capstan-nats-'));
  private process?: ManagedProcess;

  private constructor(
    readonly port: number,
    private readonly options: PrivateNatsServerOptions,
  ) {
    writeFileSync(
      join(this.dir, 'nats.conf'),
      [
        `host: 127.0.0.1`,
        `port: ${port}`,
        `jetstream { store_dir: "${join(this.dir, 'store')}" }`,
        options.config ?? '',
      ].join('\n'),
    );
  }

  static async start(options: PrivateNatsServerOptions = {}): Promise<PrivateNatsServer> {
    const server = new PrivateNatsServer(await freePort(), options);
    try {
      await server.start();
    } catch (error) {
      await server.remove();
      throw error;
    }
    return server;
  }

  get url(): string {
    return `nats://127.0.0.1:${this.port}`;
  }

  /** Starts (again, on the same port and store). */
  async start(): Promise<void> {
    this.process = startProcess({
      name: 'nats-server',
      command: resolveNatsServer(),
      args: ['-c', join(this.dir, 'nats.conf')],
      logFile: join(this.dir, 'nats-server.log'),
    });
    const deadline = Date.now() + 15_000;
    for (;;) {
      const probe = await connect({
        ...this.options.probe,
        servers: this.url,
        reconnect: false,
        timeout: 500,
      }).catch(() => undefined);
      if (probe) {
        await probe.close();
        return;
      }
      if (Date.now() > deadline) throw new Error(`nats-server did not accept connections on ${this.url}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  /** Freezes the server (SIGSTOP): connections stay open but nothing answers, as in a long GC or VM pause. */
  freeze(): void {
    if (this.process) process.kill(this.process.pid, 'SIGSTOP');
  }

  thaw(): void {
    if (this.process) process.kill(this.process.pid, 'SIGCONT');
  }

  async stop(): Promise<void> {
    this.thaw();
    if (this.process) await stopPid(this.process.pid);
    this.process = undefined;
  }

  async remove(): Promise<void> {
    await this.stop();
    rmSync(this.dir, { recursive: true, force: true });
  }
}
