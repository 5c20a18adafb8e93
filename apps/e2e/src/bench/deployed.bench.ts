// `npm run bench:deployed [-- --clusters 30 --workers 3 --timeout-minutes 20]`: Capstan as deploy/ runs it (the images
// built here, a real node, `capstan init`), under bench:upstream's workload: N clusters of 1 control plane machine and
// a MachineDeployment of --workers, created at once, the sim in shared mode with its node agents in-process (as
// bench:upstream runs it), until every Machine is Running and every Cluster Available, then all deleted. Reports each
// pod's working set at idle and its peak (from its memory cgroup, sampled every second), restarts and OOM kills: the
// figures deploy/'s memory limits come from (docs/deploy.md).
import 'reflect-metadata';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { KubeConfig } from '@kubernetes/client-node';
import { createKubeClient } from '@capstan/kube';
import { deployCapstan, type DeployedCapstan } from '../deploy/deployed-capstan.js';
import { memoryByService, PodMemorySampler, PodServices } from '../deploy/pod-memory.js';
import { createSimK3sCluster } from '../sim-cluster-fixture.js';
import { log, sleep, stopOnInterrupt } from './bench-machine.js';
import { BENCH_SIM_ENV, ClusterWorkload } from './cluster-workload.js';
import { positiveInteger } from './upstream-report.js';

const { values } = parseArgs({
  options: {
    clusters: { type: 'string', default: '30' },
    workers: { type: 'string', default: '3' },
    'timeout-minutes': { type: 'string', default: '20' },
  },
  strict: true,
});
const CLUSTERS = positiveInteger(values.clusters, 'clusters');
const WORKERS = positiveInteger(values.workers, 'workers');
const TIMEOUT_MS = positiveInteger(values['timeout-minutes'], 'timeout-minutes') * 60_000;
const NAMESPACE = 'bench';
const mib = (bytes: number | undefined) =>
  bytes === undefined ? '-' : `${(bytes / 2 ** 20).toFixed(0)} MiB`;

interface PodStatus {
  items: {
    metadata: { name: string; namespace: string; uid: string; labels?: Record<string, string> };
    status: {
      containerStatuses?: {
        name: string;
        restartCount: number;
        lastState?: { terminated?: { reason?: string; exitCode?: number; finishedAt?: string } };
      }[];
    };
  }[];
}

/** The last lines a container wrote before it was restarted (its first log under the node's pod log folder). */
function previousLog(
  podLogsDir: string,
  namespace: string,
  pod: string,
  uid: string,
  container: string,
): string {
  const path = join(podLogsDir, `${namespace}_${pod}_${uid}`, container, '0.log');
  if (!existsSync(path)) return '(no log kept)';
  return readFileSync(path, 'utf8').trimEnd().split('\n').slice(-6).join('\n');
}

const setInterruptStop = stopOnInterrupt();
let deployed: DeployedCapstan | undefined;
try {
  deployed = await deployCapstan(log);
  setInterruptStop(() => deployed!.stop());
  const { kubectl } = deployed;
  // As bench:upstream runs the sim: node agents in the provider's process, no random boot delays.
  await kubectl(
    '-n',
    'capstan-system',
    'set',
    'env',
    'deployment/capstan-machine-provider',
    ...Object.entries(BENCH_SIM_ENV).map(([k, v]) => `${k}=${v}`),
  );
  await kubectl(
    '-n',
    'capstan-system',
    'rollout',
    'status',
    'deployment/capstan-machine-provider',
    '--timeout=300s',
  );
  const sampler = new PodMemorySampler(1000);
  const pods = new PodServices(kubectl);
  await pods.refresh();
  pods.start();
  await sleep(20_000);
  await pods.refresh();
  const idle = memoryByService(sampler, pods, true);

  const kc = new KubeConfig();
  kc.loadFromString(deployed.environment.kubeconfig);
  const client = createKubeClient(kc, { fieldManager: 'capstan-bench' });
  await kubectl('create', 'namespace', NAMESPACE);
  const workload = new ClusterWorkload(client, NAMESPACE);
  await workload.start();
  log(`creating ${CLUSTERS} shared clusters of 1 + ${WORKERS} machines against the pods`);
  const provisioned = await workload.provision({
    expectedClusters: CLUSTERS,
    expectedMachines: CLUSTERS * (WORKERS + 1),
    timeoutMs: TIMEOUT_MS,
    create: async () => {
      await Promise.all(
        Array.from({ length: CLUSTERS }, (_, i) =>
          createSimK3sCluster(client, {
            namespace: NAMESPACE,
            name: `bench-${i}`,
            version: 'v1.34.4',
            controlPlaneReplicas: 1,
            workers: WORKERS,
            mode: 'shared',
          }),
        ),
      );
    },
  });
  log(
    `provisioned: ${provisioned.progress}; Running ${provisioned.machinesRunningSeconds?.toFixed(1) ?? '-'} s, Available ${provisioned.clustersAvailableSeconds?.toFixed(1) ?? '-'} s`,
  );
  const deleted = await workload.deleteAll({ timeoutMs: TIMEOUT_MS });
  log(
    `deleted: Machines gone ${deleted.machinesGoneSeconds?.toFixed(1) ?? '-'} s, Clusters gone ${deleted.clustersGoneSeconds?.toFixed(1) ?? '-'} s`,
  );
  await workload.stop();
  await pods.refresh();
  const peak = memoryByService(sampler, pods, false);
  sampler.stop();
  pods.stop();

  const status = JSON.parse(await kubectl('get', 'pods', '-A', '-o', 'json')) as PodStatus;
  const restarts = new Map<string, { restarts: number; oomKilled: number }>();
  for (const pod of status.items) {
    const service =
      pod.metadata.labels?.['app.kubernetes.io/name'] ?? pod.metadata.labels?.['k8s-app'] ?? '?';
    const entry = restarts.get(service) ?? { restarts: 0, oomKilled: 0 };
    for (const c of pod.status.containerStatuses ?? []) {
      entry.restarts += c.restartCount;
      if (c.lastState?.terminated?.reason === 'OOMKilled') entry.oomKilled += 1;
      if (c.restartCount > 0) {
        const last = c.lastState?.terminated;
        log(
          `${pod.metadata.name} restarted ${c.restartCount}x; last: ${last?.reason ?? '?'} (exit ${last?.exitCode ?? '?'}) at ${last?.finishedAt ?? '?'}`,
        );
        const podLogs = join(deployed.environment.workDir, 'node', 'kubelet', 'pod-logs');
        log(previousLog(podLogs, pod.metadata.namespace, pod.metadata.name, pod.metadata.uid, c.name));
      }
    }
    restarts.set(service, entry);
  }
  log(`N = ${CLUSTERS} (${CLUSTERS * (WORKERS + 1)} machines), shared mode, pods on the real node`);
  log(`${'pod'.padEnd(34)} ${'idle'.padStart(9)} ${'peak'.padStart(9)}  restarts  OOM-killed`);
  for (const service of [...new Set([...idle.keys(), ...peak.keys()])].sort()) {
    const r = restarts.get(service) ?? { restarts: 0, oomKilled: 0 };
    log(
      `${service.padEnd(34)} ${mib(idle.get(service)).padStart(9)} ${mib(peak.get(service)).padStart(9)}  ${String(r.restarts).padStart(8)}  ${String(r.oomKilled).padStart(10)}`,
    );
  }
  process.exitCode = provisioned.clustersAvailableSeconds === undefined ? 1 : 0;
} finally {
  await deployed?.stop();
}
