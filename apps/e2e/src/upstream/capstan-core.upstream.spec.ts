import 'reflect-metadata';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { getCondition, RESOURCES, type Machine } from '@capstan/api';
import { createKubeClient, type KubeClient } from '@capstan/kube';
import { deployDir, installCrds, loadKustomization, ManifestApplier } from '@capstan/manifests';
import {
  eventually,
  inMemoryQuickStart,
  resolveUpstreamClusterApi,
  startLocalEnvironment,
  startLocalServices,
  startUpstreamManagers,
  stopLocalServices,
  stopUpstreamManagers,
  upstreamCrds,
  type LocalEnvironment,
  type LocalService,
  type ManagedProcess,
} from '@capstan/testing';

import { deleteClusterAndWait, waitForClusterAvailable } from '../sim-cluster-fixture.js';

// Capstan's core in place of upstream's, with upstream Cluster API v1.14.2's own providers: the kubeadm bootstrap and
// control plane managers and the docker provider's in-memory backend (which serves each workload cluster's API
// server and etcd in its process). Upstream's in-memory quick-start, applied as it is, must become Available and be
// deleted again, on a management cluster of its own with Capstan's CRDs for the core kinds.

const CLUSTER = 'in-memory';
const NAMESPACE = 'default';
const TIMEOUT_MS = 240_000;

describe("Capstan's core with upstream's kubeadm providers and in-memory infrastructure", () => {
  let env: LocalEnvironment;
  let workDir: string;
  let managers: ManagedProcess[] = [];
  let services: LocalService[] = [];
  let client: KubeClient;

  beforeAll(async () => {
    const upstream = resolveUpstreamClusterApi();
    env = await startLocalEnvironment();
    workDir = mkdtempSync(join(tmpdir(), 'capstan-core-upstream-providers-'));
    const kc = new KubeConfig();
    kc.loadFromString(env.kubeconfig);
    client = createKubeClient(kc);
    const applier = new ManifestApplier(kc);
    const crds = [
      ...loadKustomization(join(deployDir(), 'crds')),
      ...upstreamCrds(upstream, ['kubeadm-bootstrap', 'kubeadm-control-plane', 'docker']),
    ];
    await installCrds(kc, applier, crds, { fieldManager: 'capstan-test' });
    services = await startLocalServices({
      kubeconfigPath: env.kubeconfigPath,
      natsUrl: env.natsUrl,
      logDir: join(workDir, 'logs'),
      simStateDir: env.simStateDir,
      // Upstream's providers publish no hand-off events: the core watches the kinds the Cluster and Machines
      // reference, as upstream's core does.
      env: { WATCH_EXTERNAL_PROVIDERS: 'true' },
      services: ['core'],
    });
    managers = await startUpstreamManagers({
      upstream,
      kubeconfigPath: env.kubeconfigPath,
      workDir,
      managers: ['kubeadm-bootstrap', 'kubeadm-control-plane', 'docker'],
    });
    const quickStart = inMemoryQuickStart({
      name: CLUSTER,
      namespace: NAMESPACE,
      version: 'v1.34.4',
      controlPlaneReplicas: 1,
      workerReplicas: 2,
      vmStartupSeconds: 2,
      componentStartupSeconds: 1,
    });
    for (const manifest of quickStart) await applier.apply(manifest, { fieldManager: 'capstan-test' });
  }, TIMEOUT_MS);

  afterAll(async () => {
    await client?.close();
    await stopLocalServices(services);
    await stopUpstreamManagers(managers);
    await env?.stop();
    // UPSTREAM_KEEP_LOGS=1 keeps every manager's log for a look after a failure.
    if (process.env['UPSTREAM_KEEP_LOGS'] === '1') process.stdout.write(`logs: ${workDir}\n`);
    else if (workDir) rmSync(workDir, { recursive: true, force: true });
  }, TIMEOUT_MS);

  it(
    'provisions the in-memory quick-start to Available, every Machine with its Node and up to date',
    async () => {
      const cluster = await waitForClusterAvailable(client, NAMESPACE, CLUSTER, TIMEOUT_MS);
      expect(cluster.status?.initialization?.controlPlaneInitialized).toBe(true);
      expect(getCondition(cluster.status?.conditions, 'ControlPlaneAvailable')?.status).toBe('True');
      expect(getCondition(cluster.status?.conditions, 'WorkersAvailable')?.status).toBe('True');
      const machines = await eventually(
        async () => {
          const items = (await client.resource<Machine>(RESOURCES.Machine).list({ namespace: NAMESPACE })).items;
          const done = items.filter(
            (machine) =>
              machine.status?.nodeRef?.name &&
              getCondition(machine.status.conditions, 'Ready')?.status === 'True' &&
              getCondition(machine.status.conditions, 'UpToDate')?.status === 'True',
          );
          return done.length === 3 && items.length === 3 && items;
        },
        { message: 'three Machines with their Nodes, Ready and up to date', timeoutMs: TIMEOUT_MS },
      );
      for (const machine of machines) expect(machine.status?.phase).toBe('Running');
      expect(machines.filter((machine) => machine.metadata?.labels?.['cluster.x-k8s.io/control-plane'] !== undefined)).toHaveLength(1);
    },
    TIMEOUT_MS,
  );

  it(
    'deletes the cluster with its Machines and upstream providers objects',
    async () => {
      await deleteClusterAndWait(client, NAMESPACE, CLUSTER);
      const left = await client.resource<Machine>(RESOURCES.Machine).list({ namespace: NAMESPACE });
      expect(left.items).toEqual([]);
    },
    TIMEOUT_MS,
  );
});
