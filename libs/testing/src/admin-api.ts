import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import type { IncomingHttpHeaders } from 'node:http';
import { request } from 'node:https';
import { join } from 'node:path';
import { createCertificateAuthority, issueServerCertificate } from '@capstan/pki';

/** Where a service's admin API answers and the CA its certificate is verified with. */
export interface AdminEndpoint {
  adminUrl: string;
  adminCaPem: string;
}

/** The admin API certificate local services are started with (`--admin-tls-cert-file` / `--admin-tls-key-file`). */
export interface LocalAdminTls {
  certFile: string;
  keyFile: string;
  caPem: string;
}

/**
 * The admin API certificate of the local services logging to `dir`: a CA and a serving certificate for 127.0.0.1,
 * made once and kept, so a service restarted later serves the same one. Keys are written 0600.
 */
export async function localAdminTls(dir: string): Promise<LocalAdminTls> {
  const tlsDir = join(dir, 'admin-tls');
  const files = { certFile: join(tlsDir, 'tls.crt'), keyFile: join(tlsDir, 'tls.key'), caFile: join(tlsDir, 'ca.crt') };
  if (!existsSync(files.caFile)) {
    mkdirSync(tlsDir, { recursive: true, mode: 0o700 });
    const ca = await createCertificateAuthority({ commonName: 'capstan-local-admin-ca' });
    const serving = await issueServerCertificate(ca, { commonName: 'capstan-local-admin', ipAddresses: ['127.0.0.1'], dnsNames: ['localhost'] });
    writeFileSync(files.certFile, serving.certPem, { mode: 0o600 });
    writeFileSync(files.keyFile, serving.keyPem, { mode: 0o600 });
    // Last: its presence says the pair is complete.
    writeFileSync(files.caFile, ca.certPem, { mode: 0o600 });
  }
  return { certFile: files.certFile, keyFile: files.keyFile, caPem: readFileSync(files.caFile, 'utf8') };
}

/**
 * A request to a service's admin API over HTTPS, verified with its CA, with a bearer token and a JSON body when given;
 * bounded by `timeoutMs`. Resolves with the status, headers and body whatever the status.
 */
export function adminApiRequest(
  endpoint: AdminEndpoint,
  path: string,
  options: { token?: string; method?: 'GET' | 'POST'; body?: unknown; timeoutMs?: number } = {},
): Promise<{ status: number; headers: IncomingHttpHeaders; body: string; json<T>(): T }> {
  return new Promise((resolve, reject) => {
    const req = request(
      new URL(path, endpoint.adminUrl),
      {
        method: options.method ?? 'GET',
        ca: endpoint.adminCaPem,
        headers: {
          ...(options.token ? { authorization: `Bearer ${options.token}` } : {}),
          ...(options.body !== undefined ? { 'content-type': 'application/json' } : {}),
        },
        timeout: options.timeoutMs ?? 5_000,
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => {
          const body = Buffer.concat(chunks).toString('utf8');
          resolve({ status: response.statusCode ?? 0, headers: response.headers, body, json: <T>() => JSON.parse(body) as T });
        });
        response.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error(`${path}: no answer within ${options.timeoutMs ?? 5_000} ms`)));
    req.on('error', reject);
    req.end(options.body !== undefined ? JSON.stringify(options.body) : undefined);
  });
}
