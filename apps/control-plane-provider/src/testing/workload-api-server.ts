import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  issueClientCertificate,
  issueServerCertificate,
  loadCertificateAuthority,
  type ClusterCertificates,
} from '@capstan/pki';
import {
  resolveControlPlaneBinaries,
  startLocalEnvironment,
  startProcess,
  stopPid,
  waitUntilReady,
  type LocalEnvironment,
} from '@capstan/testing';
import { probeWorkloadApi } from '../k3scontrolplane/workload-probe.js';

export interface WorkloadApiServer {
  stop(): Promise<void>;
}

/**
 * A real kube-apiserver serving a workload cluster's API from its cluster certificates on 127.0.0.1:`port`,
 * as a K3s server started from its bootstrap data would: serving certificate from the server CA, clients
 * checked against the client CA, service account keys from `sa`. Backed by the shared test etcd (under a
 * prefix of its own) or a private one. Resolves once `/readyz` answers through `kubeconfig`.
 */
export async function startWorkloadApiServer(
  certificates: ClusterCertificates,
  port: number,
  kubeconfig: string,
): Promise<WorkloadApiServer> {
  const workDir = mkdtempSync(join(tmpdir(), 'capstan-workload-api-'));
  const dir = join(workDir, 'tls');
  mkdirSync(dir);
  const [serverCA, proxyCA] = await Promise.all([
    loadCertificateAuthority(certificates.ca, 'server CA'),
    loadCertificateAuthority(certificates.proxy, 'request-header CA'),
  ]);
  const serving = await issueServerCertificate(serverCA, {
    commonName: 'kube-apiserver',
    dnsNames: ['localhost', 'kubernetes', 'kubernetes.default.svc'],
    ipAddresses: ['127.0.0.1', '10.43.0.1'],
  });
  const proxyClient = await issueClientCertificate(proxyCA, { commonName: 'system:auth-proxy' });
  const files: Record<string, string> = {
    'client-ca.crt': certificates.cca.certPem,
    'request-header-ca.crt': certificates.proxy.certPem,
    'service.key': certificates.sa.keyPem,
    'serving.crt': serving.certPem + certificates.ca.certPem,
    'serving.key': serving.keyPem,
    'proxy-client.crt': proxyClient.certPem,
    'proxy-client.key': proxyClient.keyPem,
  };
  for (const [name, content] of Object.entries(files))
    writeFileSync(join(dir, name), content, { mode: 0o600 });

  let privateEnvironment: LocalEnvironment | undefined;
  let etcdUrl = process.env['CAPSTAN_TEST_ETCD_URL'];
  if (!etcdUrl) {
    privateEnvironment = await startLocalEnvironment();
    etcdUrl = privateEnvironment.etcdUrl;
  }
  const apiserver = startProcess({
    name: 'workload kube-apiserver',
    command: resolveControlPlaneBinaries().kubeApiserver,
    args: [
      `--etcd-servers=${etcdUrl}`,
      `--etcd-prefix=/capstan-workload-${randomBytes(4).toString('hex')}`,
      '--bind-address=127.0.0.1',
      '--advertise-address=127.0.0.1',
      `--secure-port=${port}`,
      `--cert-dir=${dir}`,
      `--tls-cert-file=${join(dir, 'serving.crt')}`,
      `--tls-private-key-file=${join(dir, 'serving.key')}`,
      `--client-ca-file=${join(dir, 'client-ca.crt')}`,
      `--service-account-key-file=${join(dir, 'service.key')}`,
      `--service-account-signing-key-file=${join(dir, 'service.key')}`,
      '--service-account-issuer=https://kubernetes.default.svc',
      `--requestheader-client-ca-file=${join(dir, 'request-header-ca.crt')}`,
      '--requestheader-allowed-names=system:auth-proxy',
      '--requestheader-username-headers=X-Remote-User',
      '--requestheader-group-headers=X-Remote-Group',
      '--requestheader-extra-headers-prefix=X-Remote-Extra-',
      `--proxy-client-cert-file=${join(dir, 'proxy-client.crt')}`,
      `--proxy-client-key-file=${join(dir, 'proxy-client.key')}`,
      '--authorization-mode=RBAC',
      '--service-cluster-ip-range=10.43.0.0/16',
      '--disable-admission-plugins=ServiceAccount',
      '--enable-priority-and-fairness=false',
      '--profiling=false',
    ],
    logFile: join(workDir, 'kube-apiserver.log'),
  });
  const stop = async () => {
    await stopPid(apiserver.pid);
    await privateEnvironment?.stop();
    rmSync(workDir, { recursive: true, force: true });
  };
  try {
    await waitUntilReady(apiserver, 'workload kube-apiserver', () => probeWorkloadApi(kubeconfig), 90_000);
  } catch (error) {
    await stop();
    throw error;
  }
  return { stop };
}
