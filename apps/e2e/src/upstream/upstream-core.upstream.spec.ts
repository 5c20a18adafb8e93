import 'reflect-metadata';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { KubeConfig } from '@kubernetes/client-node';
import { parseAllDocuments } from 'yaml';
import { getCondition, RESOURCES, type Cluster, type Machine } from '@capstan/api';
import { createKubeClient, type KubeClient } from '@capstan/kube';
import { deployDir, installCrds, loadKustomization, ManifestApplier, type Manifest } from '@capstan/manifests';
import {
  eventually,
  repoRoot,
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

import { FAST_SIM_ENV } from '../sim-cluster-fixture.js';

// Upstream Cluster API v1.14.2's core in place of Capstan's, with Capstan's providers (sim infrastructure, K3s
// bootstrap and control plane): a cluster `capstan generate cluster` wrote, applied as it is, must become Available
// with every Machine up to date, on a management cluster of its own (upstream's CRDs for the core kinds).

const CLUSTER = 'under-upstream';
const TIMEOUT_MS = 240_000;
const run = promisify(execFile);

describe("upstream Cluster API's core with Capstan's providers", () => {
  let env: LocalEnvironment;
  let workDir: string;
  let managers: ManagedProcess[] = [];
  let services: LocalService[] = [];
  let client: KubeClient;

  beforeAll(async () => {
    const upstream = resolveUpstreamClusterApi();
    env = await startLocalEnvironment();
    workDir = mkdtempSync(join(tmpdir(), 'capstan-upstream-core-'));
    const kc = new KubeConfig();
    kc.loadFromString(env.kubeconfig);
    client = createKubeClient(kc);
    const applier = new ManifestApplier(kc);
    // The core kinds as upstream defines them; Capstan's own CRDs for its providers' kinds only.
    const providerCrds = loadKustomization(join(deployDir(), 'crds')).filter((crd) =>
      String((crd['spec'] as { group?: string }).group).endsWith('capstan.dev'),
    );
    await installCrds(kc, applier, [...upstreamCrds(upstream, ['core']), ...providerCrds], { fieldManager: 'capstan-test' });
    managers = await startUpstreamManagers({ upstream, kubeconfigPath: env.kubeconfigPath, workDir, managers: ['core'] });
    services = await startLocalServices({
      kubeconfigPath: env.kubeconfigPath,
      natsUrl: env.natsUrl,
      logDir: join(workDir, 'logs'),
      simStateDir: env.simStateDir,
      env: { CAPSTAN_SIM_ETCD_URL: env.etcdUrl, ...FAST_SIM_ENV },
      services: ['cluster-provider', 'machine-provider', 'bootstrap-provider', 'control-plane-provider'],
    });
    const { stdout } = await run(process.execPath, [
      join(repoRoot(), 'apps', 'cli', 'bin', 'capstan.js'),
      'generate',
      'cluster',
      CLUSTER,
      '--kubernetes-version',
      'v1.34.4',
      '--control-plane-machine-count',
      '1',
      '--worker-machine-count',
      '2',
    ]);
    for (const doc of parseAllDocuments(stdout)) await applier.apply(doc.toJS() as Manifest, { fieldManager: 'capstan-test' });
  }, TIMEOUT_MS);

  afterAll(async () => {
    await client?.close();
    await stopLocalServices(services);
    await stopUpstreamManagers(managers);
    await env?.stop();
    if (workDir) rmSync(workDir, { recursive: true, force: true });
  }, TIMEOUT_MS);

  it(
    'provisions a Capstan-generated sim + K3s cluster to Available, every Machine up to date, nothing rolling out',
    async () => {
      const cluster = await eventually(
        async () => {
          const current = await client.resource<Cluster>(RESOURCES.Cluster).get({ namespace: 'default', name: CLUSTER });
          const conditions = current.status?.conditions;
          return (
            getCondition(conditions, 'Available')?.status === 'True' &&
            getCondition(conditions, 'RollingOut')?.status === 'False' &&
            current
          );
        },
        { message: 'the Cluster Available and not rolling out under upstream core', timeoutMs: TIMEOUT_MS },
      );
      expect(getCondition(cluster.status?.conditions, 'WorkerMachinesUpToDate')?.status).toBe('True');
      expect(getCondition(cluster.status?.conditions, 'ControlPlaneMachinesUpToDate')?.status).toBe('True');
      const machines = (await client.resource<Machine>(RESOURCES.Machine).list({ namespace: 'default' })).items;
      expect(machines).toHaveLength(3);
      for (const machine of machines) {
        expect(machine.status?.nodeRef?.name).toBeDefined();
        expect(getCondition(machine.status?.conditions, 'UpToDate')?.status).toBe('True');
      }
    },
    TIMEOUT_MS,
  );
});
