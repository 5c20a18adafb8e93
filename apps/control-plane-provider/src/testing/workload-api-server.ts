import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { serverTlsFromClusterCertificates } from '@capstan/k3s-bootstrap';
import type { ApiEndpoint, ClusterCertificates } from '@capstan/pki';
import { DedicatedClusterApi, externalEtcd, SimStateDir } from '@capstan/sim';
import { resolveControlPlaneBinaries, startLocalEnvironment, type LocalEnvironment } from '@capstan/testing';

export interface WorkloadApiServer {
  stop(): Promise<void>;
}

/**
 * A real kube-apiserver serving a workload cluster's API on `endpoint` from its cluster certificates, the
 * way a sim server machine serves it from its bootstrap data (libs/sim's dedicated cluster API). Backed by
 * the shared test etcd, or a private one. Resolves once it answers.
 */
export async function startWorkloadApiServer(
  clusterName: string,
  certificates: ClusterCertificates,
  endpoint: ApiEndpoint,
): Promise<WorkloadApiServer> {
  const root = mkdtempSync(join(tmpdir(), 'capstan-workload-api-'));
  let privateEnvironment: LocalEnvironment | undefined;
  let etcdUrl = process.env['CAPSTAN_TEST_ETCD_URL'];
  if (!etcdUrl) {
    privateEnvironment = await startLocalEnvironment();
    etcdUrl = privateEnvironment.etcdUrl;
  }
  const etcd = externalEtcd(etcdUrl);
  const api = new DedicatedClusterApi(
    {
      namespace: `test-${randomBytes(4).toString('hex')}`,
      clusterName,
      mode: 'dedicated',
      endpoint,
      identity: {
        tls: serverTlsFromClusterCertificates(certificates),
        token: randomBytes(16).toString('hex'),
        endpointHost: endpoint.host,
        tlsSANs: [],
        serviceCIDR: '10.43.0.0/16',
        clusterCIDR: '10.42.0.0/16',
        clusterDomain: 'cluster.local',
      },
    },
    {
      kubeApiserver: resolveControlPlaneBinaries().kubeApiserver,
      etcd: async () => etcd,
      stateDir: new SimStateDir(root),
      memoryLimitMiB: 0,
      startTimeoutMs: 90_000,
      logger: pino({ level: 'silent' }),
      onExit: () => undefined,
    },
  );
  const stop = async () => {
    await api.destroy();
    await privateEnvironment?.stop();
    rmSync(root, { recursive: true, force: true });
  };
  try {
    await api.start({ fresh: true });
  } catch (error) {
    await stop();
    throw error;
  }
  return { stop };
}
