import { createHash } from 'node:crypto';
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { join } from 'node:path';
import {
  issueClientCertificate,
  issueServerCertificate,
  loadCertificateAuthority,
  ONE_DAY_MS,
} from '@capstan/pki';
import type { K3sServerTls } from '@capstan/k3s-bootstrap';
import { PROXY_CLIENT_COMMON_NAME, type ApiServerFiles } from './api-server-args.js';
import { SimError } from './errors.js';
import { apiServiceIPs } from './service-network.js';
import { tokenAuthFileLine } from './token-file.js';

/** What a cluster's API server serves with: the bootstrap data's CAs and keys, plus where it answers. */
export interface ApiServerIdentity {
  tls: K3sServerTls;
  /** The join token the nodes authenticate with. */
  token: string;
  endpointHost: string;
  /** The server's `tls-san` entries (the renderer adds the endpoint host). */
  tlsSANs: readonly string[];
  serviceCIDR: string;
  /** Pod network: the controller manager gives every Node a slice of it (`spec.podCIDR`). */
  clusterCIDR: string;
  clusterDomain: string;
}

/** Names the serving certificate carries, as a K3s server's does: its SANs, the kubernetes Service, localhost. */
export function servingCertificateNames(identity: Omit<ApiServerIdentity, 'tls' | 'token'>): {
  dnsNames: string[];
  ipAddresses: string[];
} {
  const names = new Set<string>([
    identity.endpointHost,
    ...identity.tlsSANs,
    'localhost',
    '127.0.0.1',
    'kubernetes',
    'kubernetes.default',
    'kubernetes.default.svc',
    `kubernetes.default.svc.${identity.clusterDomain}`,
    ...apiServiceIPs(identity.serviceCIDR),
  ]);
  const all = [...names].filter((name) => name !== '');
  return {
    dnsNames: all.filter((name) => isIP(name) === 0).sort(),
    ipAddresses: all.filter((name) => isIP(name) !== 0).sort(),
  };
}

/** A digest of the identity: equal digests mean the files written for it are still right. */
export function identityDigest(identity: ApiServerIdentity): string {
  return createHash('sha256').update(JSON.stringify(identity)).digest('hex');
}

export function apiServerFilesIn(dir: string): ApiServerFiles {
  return {
    servingCert: join(dir, 'serving.crt'),
    servingKey: join(dir, 'serving.key'),
    clientCA: join(dir, 'client-ca.crt'),
    requestHeaderCA: join(dir, 'request-header-ca.crt'),
    proxyClientCert: join(dir, 'proxy-client.crt'),
    proxyClientKey: join(dir, 'proxy-client.key'),
    serviceAccountKey: join(dir, 'service.key'),
    tokenFile: join(dir, 'tokens.csv'),
    certDir: dir,
  };
}

export interface ApiServerFileOptions {
  /**
   * A cluster's first certificates are issued as if this many days had passed since (CAPSTAN_SIM_CERTIFICATE_AGE_DAYS:
   * certificate rotation exercised without waiting a year). Certificates issued later are issued now.
   */
  firstIssueDaysAgo?: number;
  /** Issue new leaf certificates even when the identity is unchanged (`k3s certificate rotate`). */
  renew?: boolean;
}

/**
 * Writes what the API server reads, issuing its serving certificate from the server CA and its front-proxy
 * client certificate from the request-header CA, as K3s does on start. Files written for the same identity
 * are kept (a restarted provider adopts the API server that reads them) unless `renew` asks for new leaves; each
 * file is replaced whole (the API server reloads its serving certificate when the file changes). Returns the
 * identity digest.
 */
export async function writeApiServerFiles(
  dir: string,
  identity: ApiServerIdentity,
  options: ApiServerFileOptions = {},
): Promise<string> {
  const digest = identityDigest(identity);
  const digestFile = join(dir, 'identity.sha256');
  const files = apiServerFilesIn(dir);
  const current =
    existsSync(digestFile) &&
    readFileSync(digestFile, 'utf8') === digest &&
    Object.values(files).every((path) => existsSync(path));
  if (current && !options.renew) return digest;
  const first = !existsSync(files.servingCert);
  const now = new Date(Date.now() - (first ? (options.firstIssueDaysAgo ?? 0) * ONE_DAY_MS : 0));
  const tokenLine = tokenAuthFileLine(identity.token);
  let serverCA, requestHeaderCA;
  try {
    [serverCA, requestHeaderCA] = await Promise.all([
      loadCertificateAuthority(identity.tls.serverCA, 'server CA'),
      loadCertificateAuthority(identity.tls.requestHeaderCA, 'request-header CA'),
    ]);
  } catch (error) {
    throw new SimError(
      `the bootstrap data's CA material is unusable: ${(error as Error).message}`,
      'InvalidServerTls',
    );
  }
  const [serving, proxyClient] = await Promise.all([
    issueServerCertificate(serverCA, {
      commonName: 'kube-apiserver',
      ...servingCertificateNames(identity),
      now,
    }),
    issueClientCertificate(requestHeaderCA, { commonName: PROXY_CLIENT_COMMON_NAME, now }),
  ]);
  const write = (path: string, content: string) => {
    writeFileSync(`${path}.new`, content, { mode: 0o600 });
    renameSync(`${path}.new`, path);
  };
  // The key first: the API server's reload pairs the certificate it finds with the key beside it.
  write(files.servingKey, serving.keyPem);
  write(files.servingCert, serving.certPem + identity.tls.serverCA.certPem);
  write(files.clientCA, identity.tls.clientCA.certPem);
  write(files.requestHeaderCA, identity.tls.requestHeaderCA.certPem);
  write(files.proxyClientCert, proxyClient.certPem);
  write(files.proxyClientKey, proxyClient.keyPem);
  write(files.serviceAccountKey, identity.tls.serviceAccountKeyPem);
  write(files.tokenFile, tokenLine);
  write(digestFile, digest);
  return digest;
}
