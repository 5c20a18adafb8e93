import { readFileSync } from 'node:fs';
import {
  credsAuthenticator,
  nkeyAuthenticator,
  tokenAuthenticator,
  usernamePasswordAuthenticator,
  type Authenticator,
  type NodeConnectionOptions,
} from '@nats-io/transport-node';
import { ConnectionOptionsError } from '../errors.js';

export interface NatsTlsOptions {
  /** PEM file of the CA that signed the server certificate (default: the system roots). */
  caFile?: string;
  /** Client certificate and key for mutual TLS; both or neither. */
  certFile?: string;
  keyFile?: string;
}

export interface NatsConnectionOptions {
  /** One URL, a comma-separated list, or an array (`nats://host:4222`, `tls://host:4222`). */
  servers: string | string[];
  /** Shown by the server's monitoring for this client, e.g. the service name. */
  name?: string;
  user?: string;
  password?: string;
  token?: string;
  /** An nkey user seed (`SU...`). */
  nkeySeed?: string;
  /** A `.creds` file (user JWT + nkey seed), as issued by `nsc`. */
  credsFile?: string;
  /** `true` requires TLS with the system roots; an object configures CA and client certificate. */
  tls?: boolean | NatsTlsOptions;
  /** Base wait between reconnect attempts; a random jitter up to `reconnectJitterMs` is added. */
  reconnectTimeWaitMs?: number;
  reconnectJitterMs?: number;
  /** Handshake timeout per attempt. */
  connectTimeoutMs?: number;
  /** Client pings; after `maxPingOut` unanswered the connection counts as stale and reconnects. */
  pingIntervalMs?: number;
  maxPingOut?: number;
  /**
   * Keep trying when the first connection fails instead of rejecting. Off by default: a wrong URL at
   * start-up should fail the process loudly; once connected, reconnecting never gives up.
   */
  waitOnFirstConnect?: boolean;
}

const DEFAULTS = {
  reconnectTimeWaitMs: 1000,
  reconnectJitterMs: 1000,
  connectTimeoutMs: 5000,
  pingIntervalMs: 20_000,
  maxPingOut: 3,
};

export function serverList(servers: string | string[]): string[] {
  const list = (Array.isArray(servers) ? servers : servers.split(','))
    .map((server) => server.trim())
    .filter((server) => server.length > 0);
  if (list.length === 0) throw new ConnectionOptionsError('at least one NATS server URL is required');
  return list;
}

/** A server URL fit for logs: any `user:password@` part removed. */
export function redactServerUrl(url: string): string {
  return url.replace(/^([a-z]+:\/\/)[^@/]*@/i, '$1');
}

/** Translates Capstan's options into the client's: reconnect forever with jitter, authenticators, TLS files. */
export function toNatsConnectOptions(options: NatsConnectionOptions): NodeConnectionOptions {
  const authenticators = buildAuthenticators(options);
  return {
    servers: serverList(options.servers),
    name: options.name,
    authenticator: authenticators.length > 0 ? authenticators : undefined,
    tls: buildTls(options.tls),
    reconnect: true,
    maxReconnectAttempts: -1,
    reconnectTimeWait: options.reconnectTimeWaitMs ?? DEFAULTS.reconnectTimeWaitMs,
    reconnectJitter: options.reconnectJitterMs ?? DEFAULTS.reconnectJitterMs,
    reconnectJitterTLS: options.reconnectJitterMs ?? DEFAULTS.reconnectJitterMs,
    timeout: options.connectTimeoutMs ?? DEFAULTS.connectTimeoutMs,
    pingInterval: options.pingIntervalMs ?? DEFAULTS.pingIntervalMs,
    maxPingOut: options.maxPingOut ?? DEFAULTS.maxPingOut,
    waitOnFirstConnect: options.waitOnFirstConnect ?? false,
    // A credential that stops working (rotated secret) must not end the process' reconnect loop.
    ignoreAuthErrorAbort: true,
    // Otherwise every request (each publish waits for its ack) builds an Error up front for a stack trace.
    noAsyncTraces: true,
  };
}

function buildAuthenticators(options: NatsConnectionOptions): Authenticator[] {
  const authenticators: Authenticator[] = [];
  if (options.password !== undefined && options.user === undefined) {
    throw new ConnectionOptionsError('a NATS password needs a user');
  }
  if (options.nkeySeed !== undefined && options.credsFile !== undefined) {
    throw new ConnectionOptionsError(
      'give either an nkey seed or a creds file, not both (a creds file holds its own seed)',
    );
  }
  if (options.user !== undefined)
    authenticators.push(usernamePasswordAuthenticator(options.user, options.password));
  if (options.token !== undefined) authenticators.push(tokenAuthenticator(options.token));
  if (options.nkeySeed !== undefined) {
    if (!options.nkeySeed.startsWith('SU'))
      throw new ConnectionOptionsError('an nkey user seed starts with "SU"');
    authenticators.push(nkeyAuthenticator(new TextEncoder().encode(options.nkeySeed)));
  }
  if (options.credsFile !== undefined) {
    const credsFile = options.credsFile;
    // Read on every (re)connect so a rotated creds file is picked up without a restart.
    authenticators.push(credsAuthenticator(() => readFileOrThrow(credsFile, 'creds file')));
    readFileOrThrow(credsFile, 'creds file');
  }
  return authenticators;
}

function buildTls(tls: NatsConnectionOptions['tls']): NodeConnectionOptions['tls'] {
  if (tls === undefined || tls === false) return undefined;
  if (tls === true) return {};
  if ((tls.certFile === undefined) !== (tls.keyFile === undefined)) {
    throw new ConnectionOptionsError('a TLS client certificate needs its key, and a key its certificate', {
      certFile: tls.certFile,
      keyFile: tls.keyFile,
    });
  }
  return { caFile: tls.caFile, certFile: tls.certFile, keyFile: tls.keyFile };
}

function readFileOrThrow(path: string, what: string): Uint8Array {
  try {
    return readFileSync(path);
  } catch (error) {
    throw new ConnectionOptionsError(`cannot read the NATS ${what}`, {
      path,
      cause: (error as NodeJS.ErrnoException).code,
    });
  }
}

/**
 * Options from the environment, named as the `nats` CLI names them: NATS_URL, NATS_USER, NATS_PASSWORD,
 * NATS_TOKEN, NATS_NKEY (seed file) or NATS_NKEY_SEED, NATS_CREDS, NATS_CA, NATS_CERT, NATS_KEY; plus
 * NATS_NAME. Returns undefined without NATS_URL.
 */
export function natsOptionsFromEnv(env: NodeJS.ProcessEnv = process.env): NatsConnectionOptions | undefined {
  const servers = env['NATS_URL'];
  if (!servers) return undefined;
  const nkeyFile = env['NATS_NKEY'];
  const ca = env['NATS_CA'];
  const cert = env['NATS_CERT'];
  const key = env['NATS_KEY'];
  return {
    servers,
    name: env['NATS_NAME'] || undefined,
    user: env['NATS_USER'] || undefined,
    password: env['NATS_PASSWORD'] || undefined,
    token: env['NATS_TOKEN'] || undefined,
    nkeySeed:
      env['NATS_NKEY_SEED'] ||
      (nkeyFile ? new TextDecoder().decode(readFileOrThrow(nkeyFile, 'nkey seed file')).trim() : undefined),
    credsFile: env['NATS_CREDS'] || undefined,
    tls:
      ca || cert || key
        ? { caFile: ca || undefined, certFile: cert || undefined, keyFile: key || undefined }
        : undefined,
  };
}
