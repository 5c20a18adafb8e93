import type { ClusterCertificatePurpose, ClusterCertificates, KeyPairPem } from '@capstan/pki';
import { K3S_SERVER_TLS_DIR } from './paths.js';

/**
 * The K3s server TLS material, by K3s's own file names under /var/lib/rancher/k3s/server/tls. The etcd
 * server and peer CAs are both the `<cluster>-etcd` CA; `service.key` is the `<cluster>-sa` private key.
 */
export interface K3sServerTls {
  serverCA: KeyPairPem;
  clientCA: KeyPairPem;
  requestHeaderCA: KeyPairPem;
  etcdServerCA: KeyPairPem;
  etcdPeerCA: KeyPairPem;
  serviceAccountKeyPem: string;
}

type KeyPairName = Exclude<keyof K3sServerTls, 'serviceAccountKeyPem'>;

/** File stem (without `.crt` / `.key`) and the cluster certificate each K3s CA comes from. */
export const K3S_CA_FILES: Readonly<
  Record<KeyPairName, { stem: string; purpose: ClusterCertificatePurpose }>
> = {
  serverCA: { stem: `${K3S_SERVER_TLS_DIR}/server-ca`, purpose: 'ca' },
  clientCA: { stem: `${K3S_SERVER_TLS_DIR}/client-ca`, purpose: 'cca' },
  requestHeaderCA: { stem: `${K3S_SERVER_TLS_DIR}/request-header-ca`, purpose: 'proxy' },
  etcdServerCA: { stem: `${K3S_SERVER_TLS_DIR}/etcd/server-ca`, purpose: 'etcd' },
  etcdPeerCA: { stem: `${K3S_SERVER_TLS_DIR}/etcd/peer-ca`, purpose: 'etcd' },
};

export const K3S_SERVICE_ACCOUNT_KEY_PATH = `${K3S_SERVER_TLS_DIR}/service.key`;

export const K3S_CA_NAMES = Object.keys(K3S_CA_FILES) as KeyPairName[];

/** Certificates are world-readable as K3s writes them; private keys are root-only. */
export const CERT_PERMISSIONS = '0644';
export const KEY_PERMISSIONS = '0600';

export interface TlsFile {
  path: string;
  permissions: string;
  content: string;
}

export function serverTlsFromClusterCertificates(certificates: ClusterCertificates): K3sServerTls {
  const pair = (name: KeyPairName) => certificates[K3S_CA_FILES[name].purpose];
  return {
    serverCA: pair('serverCA'),
    clientCA: pair('clientCA'),
    requestHeaderCA: pair('requestHeaderCA'),
    etcdServerCA: pair('etcdServerCA'),
    etcdPeerCA: pair('etcdPeerCA'),
    serviceAccountKeyPem: certificates.sa.keyPem,
  };
}

/** The files in a fixed order, so re-rendering produces the same document. */
export function serverTlsFiles(tls: K3sServerTls): TlsFile[] {
  return [
    ...K3S_CA_NAMES.flatMap((name) => [
      { path: `${K3S_CA_FILES[name].stem}.crt`, permissions: CERT_PERMISSIONS, content: tls[name].certPem },
      { path: `${K3S_CA_FILES[name].stem}.key`, permissions: KEY_PERMISSIONS, content: tls[name].keyPem },
    ]),
    { path: K3S_SERVICE_ACCOUNT_KEY_PATH, permissions: KEY_PERMISSIONS, content: tls.serviceAccountKeyPem },
  ];
}

export function isServerTlsPath(path: string): boolean {
  return path.startsWith(`${K3S_SERVER_TLS_DIR}/`);
}
