import 'reflect-metadata';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { V1Secret } from '@kubernetes/client-node';
import { createKubeClient, SECRETS, type KubeClient } from '@capstan/kube';
import {
  eventually,
  repoRoot,
  resolveUpstreamClusterApi,
  startCapstan,
  type CapstanUnderTest,
  type UpstreamClusterApi,
} from '@capstan/testing';
import { createSimK3sCluster, deleteClusterAndWait, FAST_SIM_ENV, waitForClusterAvailable } from '../sim-cluster-fixture.js';

// Upstream Cluster API v1.14.2's clusterctl against a cluster Capstan made: it finds every kind it asks for, and
// `capstan describe cluster` prints what it prints.

const CLUSTER = 'compat';
const TIMEOUT_MS = 240_000;
const run = promisify(execFile);

/** The table without the SINCE column: two runs a second apart print different ages. */
function withoutAges(table: string): string[] {
  const lines = table.trimEnd().split('\n');
  const since = lines[0]!.indexOf('SINCE');
  const message = lines[0]!.indexOf('MESSAGE');
  return lines.map((line) => `${line.slice(0, since)}|${line.slice(message).trimEnd()}`);
}

describe('upstream clusterctl v1.14 on a Capstan cluster', () => {
  let capstan: CapstanUnderTest;
  let client: KubeClient;
  let upstream: UpstreamClusterApi;
  let namespace: string;
  const kubeconfig = () => process.env['CAPSTAN_TEST_KUBECONFIG']!;

  beforeAll(async () => {
    upstream = resolveUpstreamClusterApi();
    capstan = await startCapstan('upstream', {
      env: FAST_SIM_ENV,
    });
    namespace = capstan.namespace.name;
    client = createKubeClient(capstan.namespace.kc);
    await createSimK3sCluster(client, { namespace, name: CLUSTER, version: 'v1.34.4', controlPlaneReplicas: 1, workers: 2 });
    await waitForClusterAvailable(client, namespace, CLUSTER, TIMEOUT_MS);
  }, TIMEOUT_MS);

  afterAll(async () => {
    try {
      if (client) await deleteClusterAndWait(client, namespace, CLUSTER);
    } finally {
      await client?.close();
      await capstan?.stop();
    }
  }, TIMEOUT_MS);

  it(
    'describe cluster works, and capstan describe cluster prints the same tree, names, columns and rows',
    async () => {
      const args = ['describe', 'cluster', CLUSTER, '-n', namespace, '--kubeconfig', kubeconfig()];
      // Both describe the cluster once it has settled: the rows must not change between the two runs.
      await eventually(
        async () => {
          const theirs = await run(upstream.binaries.clusterctl, args, { timeout: 60_000 });
          const ours = await run(process.execPath, [join(repoRoot(), 'apps', 'cli', 'bin', 'capstan.js'), ...args], {
            timeout: 60_000,
          });
          return JSON.stringify(withoutAges(ours.stdout)) === JSON.stringify(withoutAges(theirs.stdout));
        },
        { message: 'capstan describe cluster and clusterctl describe cluster print the same rows', timeoutMs: 60_000, intervalMs: 2000 },
      );
      const { stdout } = await run(upstream.binaries.clusterctl, args, { timeout: 60_000 });
      expect(stdout).toContain(`Cluster ${namespace}/${CLUSTER}`);
      expect(stdout).toContain('2 Machines...');
    },
    TIMEOUT_MS,
  );

  it('get kubeconfig returns the cluster admin kubeconfig Capstan wrote', async () => {
    const { stdout } = await run(
      upstream.binaries.clusterctl,
      ['get', 'kubeconfig', CLUSTER, '-n', namespace, '--kubeconfig', kubeconfig()],
      { timeout: 60_000 },
    );
    const secret = await client.resource<V1Secret>(SECRETS).get({ namespace, name: `${CLUSTER}-kubeconfig` });
    expect(stdout.trim()).toBe(Buffer.from(secret.data!['value']!, 'base64').toString('utf8').trim());
  });
});
