import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import { isIP } from 'node:net';
import { hostname } from 'node:os';
import type { TLSSocket } from 'node:tls';
import { createCertificateAuthority, issueServerCertificate } from '@capstan/pki';

/** The admin API's serving certificate and the CA a client verifies it with. */
export interface AdminTls {
  certPem: string;
  keyPem: string;
  /** What a client trusts: the given certificate file's chain, or the CA of a self-signed one. */
  caPem: string;
  selfSigned: boolean;
}

/** A certificate file given without its key, or the other way round. */
export class AdminTlsConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'AdminTlsConfigError';
  }
}

/**
 * The admin API's certificate: from `--admin-tls-cert-file`/`--admin-tls-key-file` (a mounted Secret, cert-manager's
 * or `capstan init`'s), else made at start for this process, as the kubelet serves a self-signed certificate when
 * given none: the admin API is never served in the clear, even where nobody provisioned a certificate.
 */
export async function loadAdminTls(options: { certFile?: string; keyFile?: string; host: string; service: string }): Promise<AdminTls> {
  if (options.certFile || options.keyFile) {
    if (!options.certFile || !options.keyFile) {
      throw new AdminTlsConfigError('--admin-tls-cert-file and --admin-tls-key-file go together');
    }
    const certPem = readFileSync(options.certFile, 'utf8');
    return { certPem, keyPem: readFileSync(options.keyFile, 'utf8'), caPem: certPem, selfSigned: false };
  }
  const ca = await createCertificateAuthority({ commonName: `capstan-${options.service}-admin-ca` });
  const names = [options.host, '127.0.0.1', '::1', 'localhost', hostname()].filter((name) => name && name !== '0.0.0.0' && name !== '::');
  const serving = await issueServerCertificate(ca, {
    commonName: `capstan-${options.service}-admin`,
    dnsNames: [...new Set(names.filter((name) => isIP(name) === 0))],
    ipAddresses: [...new Set(names.filter((name) => isIP(name) !== 0))],
  });
  return { certPem: serving.certPem, keyPem: serving.keyPem, caPem: ca.certPem, selfSigned: true };
}

/** The HTTPS server of the admin API, answering with the service's own request handler. */
export function adminServer(tls: AdminTls, handler: Parameters<typeof createServer>[1]): Server {
  return createServer({ cert: tls.certPem, key: tls.keyPem, minVersion: 'TLSv1.2' }, handler);
}

/** Whether a request came over TLS (the admin listener) rather than the plain health and metrics port. */
export function cameOverTls(socket: unknown): boolean {
  return (socket as Partial<TLSSocket> | undefined)?.encrypted === true;
}
