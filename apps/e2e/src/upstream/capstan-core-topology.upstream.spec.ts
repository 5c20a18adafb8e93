import 'reflect-metadata';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KubeConfig, type KubernetesObject } from '@kubernetes/client-node';
import {
  ANNOTATIONS,
  getCondition,
  LABELS,
  RESOURCES,
  type Cluster,
  type Machine,
  type MachineDeployment,
  type MachineHealthCheck,
} from '@capstan/api';
import { createKubeClient, isNotFound, type KubeClient, type ResourceType } from '@capstan/kube';
import { deployDir, installCrds, loadKustomization, ManifestApplier } from '@capstan/manifests';
import {
  eventually,
  resolveUpstreamClusterApi,
  startLocalEnvironment,
  startLocalServices,
  startUpstreamManagers,
  stopLocalServices,
  stopUpstreamManagers,
  upstreamCrds,
  upstreamTemplate,
  type LocalEnvironment,
  type LocalService,
  type ManagedProcess,
} from '@capstan/testing';

import { deleteClusterAndWait, waitForClusterAvailable } from '../sim-cluster-fixture.js';

// Compatibility test (f): Capstan's core, its topology controller included, with upstream Cluster API v1.14.2's
// kubeadm bootstrap and control plane managers and the docker provider's in-memory backend, given upstream's
// in-memory quick-start as upstream ships it: its ClusterClass file (clusterclass-in-memory.yaml) and its cluster
// template (cluster-template-in-memory.yaml), read from the release's sources and only their clusterctl variables
// filled in. The topology controller has to build from the class what upstream's providers accept: a DevCluster the
// in-memory backend can serve, a KubeadmControlPlane with its machine template, a MachineDeployment with its own
// template copies and the class's MachineHealthChecks; the Cluster must become Available and be deleted again.

const CLUSTER = 'in-memory';
const NAMESPACE = 'default';
const VERSION = 'v1.34.4';
const TIMEOUT_MS = 300_000;
const TOPOLOGY_FIELD_MANAGER = 'capi-topology';

const INFRA_GROUP = 'infrastructure.cluster.x-k8s.io';
const CONTROL_PLANE_GROUP = 'controlplane.cluster.x-k8s.io';
const BOOTSTRAP_GROUP = 'bootstrap.cluster.x-k8s.io';

/** Upstream's kinds the topology creates (Capstan's RESOURCES name only its own). */
const upstreamKind = (group: string, kind: string, plural: string): ResourceType => ({
  group,
  version: 'v1beta2',
  kind,
  plural,
  namespaced: true,
});
const DEV_CLUSTER = upstreamKind(INFRA_GROUP, 'DevCluster', 'devclusters');
const DEV_MACHINE_TEMPLATE = upstreamKind(INFRA_GROUP, 'DevMachineTemplate', 'devmachinetemplates');
const KUBEADM_CONTROL_PLANE = upstreamKind(
  CONTROL_PLANE_GROUP,
  'KubeadmControlPlane',
  'kubeadmcontrolplanes',
);
const KUBEADM_CONFIG_TEMPLATE = upstreamKind(
  BOOTSTRAP_GROUP,
  'KubeadmConfigTemplate',
  'kubeadmconfigtemplates',
);

/** The part of an upstream object these checks read. */
interface UpstreamObject extends KubernetesObject {
  spec?: Record<string, unknown>;
}
interface ControlPlaneSpec {
  replicas?: number;
  version?: string;
  kubeadmConfigSpec?: { clusterConfiguration?: { apiServer?: { certSANs?: string[] } } };
  machineTemplate?: { spec?: { infrastructureRef?: { apiGroup?: string; kind?: string; name?: string } } };
}

const clusterSelector = `${LABELS.clusterName}=${CLUSTER}`;

describe("Capstan's core topology controller with upstream's in-memory ClusterClass and kubeadm providers", () => {
  let env: LocalEnvironment;
  let workDir: string;
  let managers: ManagedProcess[] = [];
  let services: LocalService[] = [];
  let client: KubeClient;

  const getUpstream = (type: ResourceType, name: string) =>
    client.resource<UpstreamObject>(type).get({ namespace: NAMESPACE, name });

  /** The labels and annotations of an object the topology made from the class template `templateName`. */
  function expectTopologyOwned(
    object: KubernetesObject,
    templateName: string,
    templateGroupKind: string,
  ): void {
    expect(object.metadata?.labels?.[LABELS.topologyOwned]).toBeDefined();
    expect(object.metadata?.labels?.[LABELS.clusterName]).toBe(CLUSTER);
    expect(object.metadata?.annotations?.[ANNOTATIONS.clonedFromName]).toBe(templateName);
    expect(object.metadata?.annotations?.[ANNOTATIONS.clonedFromGroupKind]).toBe(templateGroupKind);
  }

  beforeAll(async () => {
    const upstream = resolveUpstreamClusterApi();
    // Read first: a release without the templates fails here, before anything is started.
    const clusterClass = upstreamTemplate(upstream, 'clusterclass-in-memory.yaml', { namespace: NAMESPACE });
    const cluster = upstreamTemplate(upstream, 'cluster-template-in-memory.yaml', {
      namespace: NAMESPACE,
      values: {
        CLUSTER_NAME: CLUSTER,
        KUBERNETES_VERSION: VERSION,
        // Small on purpose: one of each is what the test is about, and each in-memory VM takes ~10 s to come up.
        CONTROL_PLANE_MACHINE_COUNT: '1',
        WORKER_MACHINE_COUNT: '1',
      },
    });
    env = await startLocalEnvironment();
    workDir = mkdtempSync(join(tmpdir(), 'capstan-core-topology-upstream-'));
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
    // The class (its templates first, as the file has them) before the Cluster that names it.
    for (const manifest of [...clusterClass, ...cluster])
      await applier.apply(manifest, { fieldManager: 'capstan-test' });
  }, TIMEOUT_MS);

  afterAll(async () => {
    await client?.close();
    await stopLocalServices(services);
    await stopUpstreamManagers(managers);
    await env?.stop();
    // UPSTREAM_KEEP_LOGS=1 keeps every manager's and service's log for a look after a failure.
    if (process.env['UPSTREAM_KEEP_LOGS'] === '1') process.stdout.write(`logs: ${workDir}\n`);
    else if (workDir) rmSync(workDir, { recursive: true, force: true });
  }, TIMEOUT_MS);

  it(
    'builds the cluster from the class and provisions it to Available: one control plane Machine, one worker',
    async () => {
      const cluster = await waitForClusterAvailable(client, NAMESPACE, CLUSTER, TIMEOUT_MS);
      expect(getCondition(cluster.status?.conditions, 'TopologyReconciled')?.status).toBe('True');
      expect(cluster.status?.initialization?.controlPlaneInitialized).toBe(true);
      expect(getCondition(cluster.status?.conditions, 'ControlPlaneAvailable')?.status).toBe('True');
      expect(getCondition(cluster.status?.conditions, 'WorkersAvailable')?.status).toBe('True');
      const machines = await eventually(
        async () => {
          const items = (await client.resource<Machine>(RESOURCES.Machine).list({ namespace: NAMESPACE }))
            .items;
          const done = items.filter(
            (machine) =>
              machine.status?.nodeRef?.name &&
              getCondition(machine.status.conditions, 'Ready')?.status === 'True' &&
              getCondition(machine.status.conditions, 'UpToDate')?.status === 'True',
          );
          return done.length === 2 && items.length === 2 && items;
        },
        { message: 'two Machines with their Nodes, Ready and up to date', timeoutMs: TIMEOUT_MS },
      );
      for (const machine of machines) expect(machine.status?.phase).toBe('Running');
      const controlPlaneMachines = machines.filter(
        (machine) => machine.metadata?.labels?.[LABELS.controlPlane] !== undefined,
      );
      expect(controlPlaneMachines).toHaveLength(1);
      const workers = machines.filter(
        (machine) => machine.metadata?.labels?.[LABELS.controlPlane] === undefined,
      );
      expect(workers[0]?.metadata?.labels?.[LABELS.topologyDeploymentName]).toBe('md-0');
    },
    TIMEOUT_MS,
  );

  it(
    "points the Cluster at a DevCluster and a KubeadmControlPlane the topology made, written with upstream's field manager",
    async () => {
      const cluster = await client
        .resource<Cluster>(RESOURCES.Cluster)
        .get({ namespace: NAMESPACE, name: CLUSTER });
      const infrastructureRef = cluster.spec?.infrastructureRef;
      const controlPlaneRef = cluster.spec?.controlPlaneRef;
      expect(infrastructureRef).toMatchObject({ apiGroup: INFRA_GROUP, kind: 'DevCluster' });
      expect(controlPlaneRef).toMatchObject({ apiGroup: CONTROL_PLANE_GROUP, kind: 'KubeadmControlPlane' });

      // The in-memory backend finds its listener through these annotations: without them it cannot serve the cluster.
      const devCluster = await getUpstream(DEV_CLUSTER, infrastructureRef!.name);
      expectTopologyOwned(devCluster, 'in-memory-cluster', `DevClusterTemplate.${INFRA_GROUP}`);
      expect(devCluster.metadata?.ownerReferences?.map((ref) => ref.kind)).toContain('Cluster');
      expect(
        devCluster.metadata?.managedFields?.map((entry) => [entry.manager, entry.operation]),
      ).toContainEqual([TOPOLOGY_FIELD_MANAGER, 'Apply']);

      const kcp = await getUpstream(KUBEADM_CONTROL_PLANE, controlPlaneRef!.name);
      expectTopologyOwned(
        kcp,
        'in-memory-control-plane',
        `KubeadmControlPlaneTemplate.${CONTROL_PLANE_GROUP}`,
      );
      const kcpSpec = kcp.spec as ControlPlaneSpec;
      expect(kcpSpec.replicas).toBe(1);
      expect(kcpSpec.version).toBe(VERSION);
      // The class template's spec, carried over as it is.
      expect(kcpSpec.kubeadmConfigSpec?.clusterConfiguration?.apiServer?.certSANs).toContain(
        'host.docker.internal',
      );
      expect(kcp.metadata?.managedFields?.map((entry) => entry.manager)).toContain(TOPOLOGY_FIELD_MANAGER);
      // Upstream's v1beta2 contract: the control plane's machines come from the class's machine template, copied.
      const machineTemplateRef = kcpSpec.machineTemplate?.spec?.infrastructureRef;
      expect(machineTemplateRef).toMatchObject({ apiGroup: INFRA_GROUP, kind: 'DevMachineTemplate' });
      const machineTemplate = await getUpstream(DEV_MACHINE_TEMPLATE, machineTemplateRef!.name!);
      expectTopologyOwned(machineTemplate, 'in-memory-control-plane', `DevMachineTemplate.${INFRA_GROUP}`);
    },
    TIMEOUT_MS,
  );

  it(
    "makes the class's worker a MachineDeployment md-0 with its own template copies, and the class's MachineHealthChecks",
    async () => {
      const deployments = (
        await client
          .resource<MachineDeployment>(RESOURCES.MachineDeployment)
          .list({ namespace: NAMESPACE, labelSelector: clusterSelector })
      ).items;
      expect(deployments).toHaveLength(1);
      const md = deployments[0]!;
      expect(md.metadata?.labels?.[LABELS.topologyDeploymentName]).toBe('md-0');
      expect(md.metadata?.labels?.[LABELS.topologyOwned]).toBeDefined();
      expect(md.spec.replicas).toBe(1);
      expect(md.spec.template.spec.version).toBe(VERSION);
      const bootstrap = await getUpstream(
        KUBEADM_CONFIG_TEMPLATE,
        md.spec.template.spec.bootstrap.configRef!.name,
      );
      expectTopologyOwned(
        bootstrap,
        'in-memory-default-worker-bootstraptemplate',
        `KubeadmConfigTemplate.${BOOTSTRAP_GROUP}`,
      );
      const infrastructure = await getUpstream(
        DEV_MACHINE_TEMPLATE,
        md.spec.template.spec.infrastructureRef.name,
      );
      expectTopologyOwned(
        infrastructure,
        'in-memory-default-worker-machinetemplate',
        `DevMachineTemplate.${INFRA_GROUP}`,
      );

      // One for the control plane and one for md-0, as the class asks for both.
      const healthChecks = (
        await client
          .resource<MachineHealthCheck>(RESOURCES.MachineHealthCheck)
          .list({ namespace: NAMESPACE, labelSelector: clusterSelector })
      ).items;
      expect(healthChecks).toHaveLength(2);
      for (const mhc of healthChecks) {
        expect(mhc.metadata?.labels?.[LABELS.topologyOwned]).toBeDefined();
        expect(mhc.spec.clusterName).toBe(CLUSTER);
        // The class's checks: Ready Unknown or False for five minutes.
        expect(mhc.spec.checks?.unhealthyNodeConditions).toEqual([
          { type: 'Ready', status: 'Unknown', timeoutSeconds: 300 },
          { type: 'Ready', status: 'False', timeoutSeconds: 300 },
        ]);
      }
      const selectors = healthChecks.map((mhc) => mhc.spec.selector.matchLabels ?? {});
      expect(selectors.filter((labels) => labels[LABELS.controlPlane] !== undefined)).toHaveLength(1);
      expect(selectors.filter((labels) => labels[LABELS.topologyDeploymentName] === 'md-0')).toHaveLength(1);
    },
    TIMEOUT_MS,
  );

  it(
    'deletes the cluster with everything the topology made, leaving the class and its templates',
    async () => {
      const cluster = await client
        .resource<Cluster>(RESOURCES.Cluster)
        .get({ namespace: NAMESPACE, name: CLUSTER });
      const devCluster = cluster.spec!.infrastructureRef!.name;
      const kcp = cluster.spec!.controlPlaneRef!.name;
      await deleteClusterAndWait(client, NAMESPACE, CLUSTER);
      expect(
        (await client.resource<Machine>(RESOURCES.Machine).list({ namespace: NAMESPACE })).items,
      ).toEqual([]);
      const gone = async (type: ResourceType, name: string) =>
        getUpstream(type, name).then(
          () => false,
          (error: unknown) => isNotFound(error),
        );
      await eventually(
        async () => (await gone(DEV_CLUSTER, devCluster)) && (await gone(KUBEADM_CONTROL_PLANE, kcp)),
        {
          message: 'the DevCluster and the KubeadmControlPlane deleted',
          timeoutMs: 60_000,
        },
      );
      // The template copies belong to the Cluster (owner references): the garbage collector takes them.
      await eventually(
        async () => {
          const copies = await Promise.all(
            [DEV_MACHINE_TEMPLATE, KUBEADM_CONFIG_TEMPLATE].map(
              async (type) =>
                (
                  await client
                    .resource<UpstreamObject>(type)
                    .list({ namespace: NAMESPACE, labelSelector: clusterSelector })
                ).items,
            ),
          );
          return copies.flat().length === 0;
        },
        { message: 'the template copies deleted', timeoutMs: 60_000 },
      );
      // The class's own templates are not the topology's to delete.
      const classTemplate = await getUpstream(DEV_MACHINE_TEMPLATE, 'in-memory-control-plane');
      expect(classTemplate.metadata?.labels?.[LABELS.topologyOwned]).toBeUndefined();
      await client.resource(RESOURCES.ClusterClass).get({ namespace: NAMESPACE, name: 'in-memory' });
    },
    TIMEOUT_MS,
  );
});
