import { timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import {
  createSecureServer,
  type ClientHttp2Stream,
  type Http2SecureServer,
  type Http2ServerRequest,
  type Http2ServerResponse,
  type IncomingHttpStatusHeader,
} from 'node:http2';
import type { TLSSocket } from 'node:tls';
import type { Logger } from 'pino';
import { scopeNodeCollection } from './shared-cluster-nodes.js';
import { NODE_TOKEN_GROUPS, NODE_TOKEN_USER } from './token-file.js';
import { UpstreamSessions } from './upstream-sessions.js';

export interface FrontProxyUpstream {
  host: string;
  port: number;
  /** CA of the upstream's serving certificate. */
  caPem: string;
  /** Client certificate signed by the upstream's request-header CA (CN in its allowed names). */
  certPem: string;
  keyPem: string;
}

export interface ClusterFrontProxyOptions {
  bindAddress: string;
  port: number;
  /** Serving certificate issued from the cluster's own server CA, so its kubeconfig trusts the proxy. */
  servingCertPem: string;
  servingKeyPem: string;
  /** The cluster's client CA: admin and other client certificates are checked against it. */
  clientCAPem: string;
  /** The cluster's join token, which authenticates nodes (as on a dedicated server). */
  token: string;
  upstream: FrontProxyUpstream;
  /** The label selector of the cluster's own Nodes: lists, watches and collection deletes of Nodes see only them. */
  nodeSelector: string;
  logger: Logger;
}

interface Identity {
  user: string;
  groups: string[];
}

const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-authenticate',
  'proxy-authorization',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'host',
]);

/** The headers a request or answer carries on to the other side: not hop-by-hop, not HTTP/2 pseudo-headers (`:path`). */
function forwardable(headers: IncomingHttpHeaders): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined || HOP_BY_HOP.has(name) || name.startsWith(':') || name.startsWith('x-remote-')) continue;
    out[name] = value;
  }
  return out;
}

function asList(value: string | string[] | undefined): string[] {
  if (value === undefined) return [];
  return Array.isArray(value) ? value : [value];
}

function sameToken(presented: string, expected: string): boolean {
  const a = Buffer.from(presented);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

/**
 * The endpoint of one cluster in shared mode: a TLS listener that presents the cluster's own serving
 * certificate and authenticates with the cluster's own client CA and join token, then forwards to the one
 * shared kube-apiserver, which trusts it as an authenticating front proxy (X-Remote-User / X-Remote-Group,
 * as kube-aggregator does). Clients of every cluster therefore keep their own kubeconfig and credentials,
 * and a cluster is added or removed without restarting the shared API server. Bearer tokens it does not
 * know (service account tokens) pass through for the API server to check. Lists and watches of Nodes are scoped to the
 * cluster's own (shared-cluster-nodes.ts).
 *
 * It speaks HTTP/2 to clients that offer it, as a kube-apiserver does (HTTP/1.1 to those that do not), and HTTP/2 to
 * the shared server: a client's watches and requests to the cluster then share one connection each way instead of
 * holding one each.
 */
export class ClusterFrontProxy {
  private readonly server: Http2SecureServer;
  private readonly upstream: UpstreamSessions;
  /** Every client connection (an HTTP/2 session's or HTTP/1.1's), to cut on close. */
  private readonly sockets = new Set<TLSSocket>();

  constructor(private readonly options: ClusterFrontProxyOptions) {
    const { upstream, logger } = options;
    this.upstream = new UpstreamSessions(
      `https://${upstream.host}:${upstream.port}`,
      { ca: upstream.caPem, cert: upstream.certPem, key: upstream.keyPem },
      (error) => logger.debug({ err: error }, 'connection to the shared API server failed'),
    );
    this.server = createSecureServer(
      {
        cert: options.servingCertPem,
        key: options.servingKeyPem,
        ca: options.clientCAPem,
        requestCert: true,
        rejectUnauthorized: false,
        allowHTTP1: true,
      },
      (req, res) => this.forward(req, res),
    );
    // Watches stay open for as long as the client wants (HTTP/1.1 requests are otherwise cut after 5 minutes).
    (this.server as unknown as { requestTimeout: number }).requestTimeout = 0;
    this.server.on('secureConnection', (socket: TLSSocket) => {
      this.sockets.add(socket);
      socket.once('close', () => this.sockets.delete(socket));
    });
  }

  listen(): Promise<void> {
    return new Promise((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(this.options.port, this.options.bindAddress, () => {
        this.server.off('error', reject);
        resolve();
      });
    });
  }

  get listening(): boolean {
    return this.server.listening;
  }

  async close(): Promise<void> {
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    for (const socket of this.sockets) socket.destroy();
    this.upstream.close();
    await closed;
  }

  private authenticate(req: Http2ServerRequest): Identity | undefined {
    const socket = req.socket as TLSSocket;
    if (socket.authorized) {
      const subject = socket.getPeerCertificate().subject as unknown as Record<
        string,
        string | string[] | undefined
      >;
      const user = asList(subject['CN'])[0];
      if (user) return { user, groups: asList(subject['O']) };
    }
    const header = req.headers.authorization;
    const match = header ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
    if (match && sameToken(match[1]!, this.options.token))
      return { user: NODE_TOKEN_USER, groups: [...NODE_TOKEN_GROUPS] };
    return undefined;
  }

  private forward(req: Http2ServerRequest, res: Http2ServerResponse): void {
    const identity = this.authenticate(req);
    const headers = forwardable(req.headers);
    if (identity) {
      delete headers['authorization'];
      headers['x-remote-user'] = identity.user;
      headers['x-remote-group'] = identity.groups.length > 0 ? identity.groups : ['system:authenticated'];
    } else if (!req.headers.authorization) {
      res.writeHead(401, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          kind: 'Status',
          apiVersion: 'v1',
          status: 'Failure',
          message: 'Unauthorized',
          reason: 'Unauthorized',
          code: 401,
        }),
      );
      return;
    }
    let outgoing: ClientHttp2Stream;
    try {
      outgoing = this.upstream.request({
        ...headers,
        ':method': req.method,
        ':path': scopeNodeCollection(req.method, req.url, this.options.nodeSelector),
      });
    } catch (error) {
      this.unavailable(res, error);
      return;
    }
    outgoing.once('response', (answer: IncomingHttpHeaders & IncomingHttpStatusHeader) => {
      res.writeHead(answer[':status'] ?? 502, forwardable(answer));
      outgoing.pipe(res);
    });
    outgoing.on('error', (error) => this.unavailable(res, error));
    // A client that goes away (a watch closed) ends the upstream request too: destroyed (RST_STREAM CANCEL), not
    // closed, which would wait for its unread data to be read before the stream counts as gone.
    res.on('close', () => {
      if (!res.writableFinished) outgoing.destroy();
    });
    req.pipe(outgoing);
  }

  private unavailable(res: Http2ServerResponse, error: unknown): void {
    this.options.logger.debug({ err: error }, 'shared API server request failed');
    if (!res.headersSent) {
      res.writeHead(502, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          kind: 'Status',
          apiVersion: 'v1',
          status: 'Failure',
          message: 'the shared API server does not answer',
          reason: 'ServiceUnavailable',
          code: 502,
        }),
      );
    } else {
      res.destroy();
    }
  }
}
