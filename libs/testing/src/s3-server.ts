import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { resolveS3Server } from './binaries.js';
import { TestEnvironmentError } from './errors.js';
import { startProcess, stopPid, tailLog, waitUntilReady, type ManagedProcess } from './processes.js';

/** A running S3-compatible server (tools/s3-server) and the one key pair it accepts. */
export interface TestS3Server {
  /** `host:port`, as K3s's `etcd-s3-endpoint` takes it. */
  readonly endpoint: string;
  /** `http` or `https` (with `tls`). */
  readonly scheme: 'http' | 'https';
  readonly accessKey: string;
  readonly secretKey: string;
  readonly process: ManagedProcess;
  stop(): Promise<void>;
}

export interface StartS3ServerOptions {
  /** Buckets that exist from the start. */
  buckets: readonly string[];
  /** Serve HTTPS with this certificate and key (PEM). */
  tls?: { certPem: string; keyPem: string };
  log?: (line: string) => void;
}

/**
 * Starts the S3-compatible server on a free loopback port, with a fresh key pair. Every request must be signed with
 * it (AWS Signature V4), as on a real object store: a wrong key is refused.
 */
export async function startS3Server(options: StartS3ServerOptions): Promise<TestS3Server> {
  const binary = resolveS3Server(options.log);
  const dir = mkdtempSync(join(tmpdir(), 'capstan-s3-'));
  const accessKey = `capstan${randomBytes(6).toString('hex')}`;
  const secretKey = randomBytes(24).toString('base64url');
  const args = ['--address=127.0.0.1:0', ...options.buckets.map((bucket) => `--bucket=${bucket}`)];
  if (options.tls) {
    writeFileSync(join(dir, 'tls.crt'), options.tls.certPem);
    writeFileSync(join(dir, 'tls.key'), options.tls.keyPem, { mode: 0o600 });
    args.push(`--tls-cert=${join(dir, 'tls.crt')}`, `--tls-key=${join(dir, 'tls.key')}`);
  }
  const logFile = join(dir, 's3-server.log');
  const process = startProcess({
    name: 's3-server',
    command: binary,
    args,
    logFile,
    env: { S3_ACCESS_KEY: accessKey, S3_SECRET_KEY: secretKey },
  });
  let address: RegExpExecArray | null = null;
  await waitUntilReady(
    process,
    's3-server',
    async () => {
      address = /listening on (https?):\/\/(\S+)/.exec(readFileSync(logFile, 'utf8'));
      return address !== null;
    },
    10_000,
  );
  const [, scheme, endpoint] = address ?? [];
  if (!endpoint)
    throw new TestEnvironmentError(`s3-server did not say where it listens:\n${tailLog(logFile)}`);
  return {
    endpoint,
    scheme: scheme as 'http' | 'https',
    accessKey,
    secretKey,
    process,
    stop: async () => {
      await stopPid(process.pid);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
