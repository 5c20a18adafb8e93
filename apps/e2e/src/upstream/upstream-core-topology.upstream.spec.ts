import 'reflect-metadata';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { KubeConfig, type KubernetesObject } from '@kubernetes/client-node';
import { parseAllDocuments } from 'yaml';
import {
  getCondition,
  LABELS,
  RESOURCES,
  type Cluster,
  type ClusterResourceSetBinding,
  type K3sControlPlane,
  type Machine,
  type MachineDeployment,
  type SimCluster,
} from '@capstan/api';
import { createKubeClient, type KubeClient } from '@capstan/kube';
import {
  deployDir,
  installCrds,
  loadKustomization,
  ManifestApplier,
  type Manifest,
} from '@capstan/manifests';
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

// Compatibility test (e): upstream Cluster API v1.14.2's core, its topology controller on (the ClusterTopology
// feature gate, alpha and off by default in v1.14), with Capstan's providers (sim infrastructure, K3s bootstrap and
// control plane) on a management cluster of its own (upstream's CRDs for the core kinds). The cluster is the one
// `capstan generate cluster --flavor topology` writes: Capstan's capstan-k3s ClusterClass with its templates, a
// Cluster naming it, and a ClusterResourceSet (always on in upstream's core). Upstream's topology controller has to
// build the SimCluster, the K3sControlPlane and the MachineDeployment from Capstan's templates, and the Cluster must
// become Available with every Machine up to date.

const CLUSTER = 'topology-under-upstream';
const NAMESPACE = 'default';
const VERSION = 'v1.34.4';
/** The Cluster's spec.topology.version: the CLI writes the K3s release of the version it is given. */
const K3S_RELEASE = `${VERSION}+k3s1`;
const TIMEOUT_MS = 300_000;
/** The field manager upstream's topology controller applies its objects with. */
const TOPOLOGY_FIELD_MANAGER = 'capi-topology';
const run = promisify(execFile);

describe("upstream Cluster API's core topology controller with Capstan's capstan-k3s ClusterClass and providers", () => {
  let env: LocalEnvironment;
  let workDir: string;
  let managers: ManagedProcess[] = [];
  let services: LocalService[] = [];
  let client: KubeClient;

  /** Made by upstream's topology controller: its label, the Cluster's name, its field manager. */
  function expectTopologyOwned(object: KubernetesObject): void {
    expect(object.metadata?.labels?.[LABELS.topologyOwned]).toBeDefined();
    expect(object.metadata?.labels?.[LABELS.clusterName]).toBe(CLUSTER);
    expect(object.metadata?.managedFields?.map((entry) => entry.manager)).toContain(TOPOLOGY_FIELD_MANAGER);
  }

  beforeAll(async () => {
    const upstream = resolveUpstreamClusterApi();
    env = await startLocalEnvironment();
    workDir = mkdtempSync(join(tmpdir(), 'capstan-upstream-core-topology-'));
    const kc = new KubeConfig();
    kc.loadFromString(env.kubeconfig);
    client = createKubeClient(kc);
    const applier = new ManifestApplier(kc);
    // The core kinds as upstream defines them; Capstan's own CRDs for its providers' kinds only.
    const providerCrds = loadKustomization(join(deployDir(), 'crds')).filter((crd) =>
      String((crd['spec'] as { group?: string }).group).endsWith('capstan.dev'),
    );
    await installCrds(kc, applier, [...upstreamCrds(upstream, ['core']), ...providerCrds], {
      fieldManager: 'capstan-test',
    });
    managers = await startUpstreamManagers({
      upstream,
      kubeconfigPath: env.kubeconfigPath,
      workDir,
      managers: ['core'],
      extraArgs: { core: ['--feature-gates=ClusterTopology=true'] },
    });
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
      '--flavor',
      'topology',
      '--kubernetes-version',
      VERSION,
      '--control-plane-machine-count',
      '1',
      '--worker-machine-count',
      '1',
    ]);
    // In file order: the class's templates, the class, then the Cluster naming it.
    for (const doc of parseAllDocuments(stdout))
      // As generated, no field dropped: the class must be valid under upstream's own ClusterClass schema.
      await applier.apply(doc.toJS() as Manifest, { fieldManager: 'capstan-test' });
  }, TIMEOUT_MS);

  afterAll(async () => {
    await client?.close();
    await stopLocalServices(services);
    await stopUpstreamManagers(managers);
    await env?.stop();
    // UPSTREAM_KEEP_LOGS=1 keeps upstream's core's and every provider's log for a look after a failure.
    if (process.env['UPSTREAM_KEEP_LOGS'] === '1') process.stdout.write(`logs: ${workDir}\n`);
    else if (workDir) rmSync(workDir, { recursive: true, force: true });
  }, TIMEOUT_MS);

  it(
    'builds the cluster from the class and provisions it to Available, every Machine up to date, nothing rolling out',
    async () => {
      const cluster = await eventually(
        async () => {
          const current = await client
            .resource<Cluster>(RESOURCES.Cluster)
            .get({ namespace: NAMESPACE, name: CLUSTER });
          const conditions = current.status?.conditions;
          return (
            getCondition(conditions, 'Available')?.status === 'True' &&
            getCondition(conditions, 'RollingOut')?.status === 'False' &&
            current
          );
        },
        {
          message: "the topology Cluster Available and not rolling out under upstream's core",
          timeoutMs: TIMEOUT_MS,
        },
      );
      expect(getCondition(cluster.status?.conditions, 'TopologyReconciled')?.status).toBe('True');
      expect(getCondition(cluster.status?.conditions, 'WorkerMachinesUpToDate')?.status).toBe('True');
      expect(getCondition(cluster.status?.conditions, 'ControlPlaneMachinesUpToDate')?.status).toBe('True');
      const machines = (await client.resource<Machine>(RESOURCES.Machine).list({ namespace: NAMESPACE }))
        .items;
      expect(machines).toHaveLength(2);
      for (const machine of machines) {
        expect(machine.status?.nodeRef?.name).toBeDefined();
        expect(getCondition(machine.status?.conditions, 'UpToDate')?.status).toBe('True');
      }
      expect(
        machines.filter((machine) => machine.metadata?.labels?.[LABELS.controlPlane] !== undefined),
      ).toHaveLength(1);
    },
    TIMEOUT_MS,
  );

  it("points the Cluster at a SimCluster, a K3sControlPlane and a MachineDeployment upstream's topology made", async () => {
    const cluster = await client
      .resource<Cluster>(RESOURCES.Cluster)
      .get({ namespace: NAMESPACE, name: CLUSTER });
    expect(cluster.spec?.topology?.version).toBe(K3S_RELEASE);
    expect(cluster.spec?.infrastructureRef).toMatchObject({
      apiGroup: RESOURCES.SimCluster.group,
      kind: 'SimCluster',
    });
    expect(cluster.spec?.controlPlaneRef).toMatchObject({
      apiGroup: RESOURCES.K3sControlPlane.group,
      kind: 'K3sControlPlane',
    });
    const simCluster = await client
      .resource<SimCluster>(RESOURCES.SimCluster)
      .get({ namespace: NAMESPACE, name: cluster.spec!.infrastructureRef!.name });
    expectTopologyOwned(simCluster);
    const controlPlane = await client
      .resource<K3sControlPlane>(RESOURCES.K3sControlPlane)
      .get({ namespace: NAMESPACE, name: cluster.spec!.controlPlaneRef!.name });
    expectTopologyOwned(controlPlane);
    expect(controlPlane.spec.replicas).toBe(1);
    expect(controlPlane.spec.version).toBe(K3S_RELEASE);

    const deployments = (
      await client
        .resource<MachineDeployment>(RESOURCES.MachineDeployment)
        .list({ namespace: NAMESPACE, labelSelector: `${LABELS.clusterName}=${CLUSTER}` })
    ).items;
    expect(deployments).toHaveLength(1);
    const md = deployments[0]!;
    expectTopologyOwned(md);
    expect(md.metadata?.labels?.[LABELS.topologyDeploymentName]).toBe('md-0');
    expect(md.spec.replicas).toBe(1);
    expect(md.spec.template.spec.version).toBe(K3S_RELEASE);
  });

  it("applies the platform baseline ClusterResourceSet to the cluster (upstream's ClusterResourceSet controller)", async () => {
    const binding = await eventually(
      async () => {
        const current = await client
          .resource<ClusterResourceSetBinding>(RESOURCES.ClusterResourceSetBinding)
          .get({ namespace: NAMESPACE, name: CLUSTER })
          .catch(() => undefined);
        const resources = current?.spec.bindings?.find(
          (b) => b.clusterResourceSetName === 'platform-baseline',
        )?.resources;
        return !!resources?.length && resources.every((resource) => resource.applied) && current;
      },
      { message: 'the platform baseline applied to the cluster', timeoutMs: 60_000 },
    );
    expect(binding.spec.clusterName).toBe(CLUSTER);
  }, 90_000);
});
