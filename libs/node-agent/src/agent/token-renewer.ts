import type { Logger } from 'pino';
import { describeFailure, type KubeClient } from '@capstan/kube';
import { requestAgentToken } from '../access/plan-access.js';
import { writeBeneath } from '../apply/beneath-root.js';
import type { HostRoot } from '../apply/host-root.js';

/** What the agent needs to know of its token: when it was issued, when it expires, whose it is. */
export interface TokenClaims {
  issuedAt: number;
  expiresAt: number;
  namespace: string;
  serviceAccount: string;
}

/** A token longer than this is not a service account token the agent will parse. */
const MAX_TOKEN_LENGTH = 16 * 1024;
/** After a failed renewal, the next try (the token stays valid until it expires). */
const RETRY_MS = 30_000;

/** The claims of a service account JWT (not verified: the agent only times its renewal with them), or undefined. */
export function tokenClaims(token: string): TokenClaims | undefined {
  if (token.length > MAX_TOKEN_LENGTH) return undefined;
  try {
    const payload = JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString('utf8')) as {
      iat?: number;
      exp?: number;
      'kubernetes.io'?: { namespace?: string; serviceaccount?: { name?: string } };
    };
    const namespace = payload['kubernetes.io']?.namespace;
    const serviceAccount = payload['kubernetes.io']?.serviceaccount?.name;
    if (typeof payload.iat !== 'number' || typeof payload.exp !== 'number' || !namespace || !serviceAccount) return undefined;
    return { issuedAt: payload.iat * 1000, expiresAt: payload.exp * 1000, namespace, serviceAccount };
  } catch {
    return undefined;
  }
}

export interface TokenRenewerOptions {
  client: KubeClient;
  root: HostRoot;
  /** The machine path of the token file (the agent config's `tokenFile`). */
  tokenFile: string;
  /** Reads the token file as the agent's connection does. */
  readToken: () => string;
  logger: Logger;
  /** When in a token's life it is renewed (default 0.5: at half its lifetime). */
  renewAt?: number;
}

/**
 * Keeps the agent's token fresh without a restart: at half of its lifetime the agent asks the TokenRequest API for a
 * new token of its own ServiceAccount (its Role allows that one account, nothing else), with the same lifetime, and
 * writes it to its token file (mode 0600, never through a symlink), where its connection picks it up. A failure is
 * tried again every 30 s while the old token lasts; an agent offline past its token's expiry needs new bootstrap
 * credentials (its machine is replaced), as a kubelet whose client certificate expired does.
 */
export class TokenRenewer {
  private timer: NodeJS.Timeout | undefined;
  private readonly abort = new AbortController();

  constructor(private readonly options: TokenRenewerOptions) {}

  start(): void {
    this.schedule();
  }

  stop(): void {
    clearTimeout(this.timer);
    this.abort.abort();
  }

  private schedule(retry = false): void {
    if (this.abort.signal.aborted) return;
    const claims = this.currentClaims();
    if (!claims) {
      this.options.logger.warn('the agent token is not a service account token it can renew: it is used until it expires');
      return;
    }
    const renewAt = claims.issuedAt + (claims.expiresAt - claims.issuedAt) * (this.options.renewAt ?? 0.5);
    const delay = retry ? RETRY_MS : Math.max(0, renewAt - Date.now());
    this.timer = setTimeout(() => void this.renew(claims), delay);
    this.timer.unref();
  }

  private currentClaims(): TokenClaims | undefined {
    try {
      return tokenClaims(this.options.readToken());
    } catch {
      return undefined;
    }
  }

  private async renew(claims: TokenClaims): Promise<void> {
    const lifetimeSeconds = Math.max(600, Math.round((claims.expiresAt - claims.issuedAt) / 1000));
    try {
      const { token } = await requestAgentToken(
        this.options.client,
        claims.namespace,
        claims.serviceAccount,
        lifetimeSeconds,
        this.abort.signal,
      );
      writeBeneath(this.options.root, this.options.tokenFile, `${token}\n`, 0o600);
      const renewed = tokenClaims(token);
      this.options.logger.info(
        { expiresAt: renewed && new Date(renewed.expiresAt).toISOString() },
        'agent token renewed',
      );
      this.schedule();
    } catch (error) {
      if (this.abort.signal.aborted) return;
      this.options.logger.warn(
        { err: { message: describeFailure(error) }, expiresAt: new Date(claims.expiresAt).toISOString() },
        'agent token not renewed: tried again in 30 s',
      );
      this.schedule(true);
    }
  }
}
