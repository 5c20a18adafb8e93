import {
  CoreV1Api,
  RbacAuthorizationV1Api,
  type KubeConfig,
  type KubernetesObject,
} from '@kubernetes/client-node';
import { LABELS, RESOURCES, type Cluster } from '@capstan/api';
import { SECRETS, type KubeClient } from '@capstan/kube';
import { eventually } from '@capstan/testing';
import { DASHBOARD_AUDIENCE } from '../auth/dashboard-callers.js';

// The dashboard's users as the tests make them: ServiceAccounts with namespace-scoped Roles and tokens for the
// dashboard's audience, and the Clusters they look at.

/** Reads the fleet: what a viewer may do. */
export const VIEWER_RULES = [
  {
    apiGroups: ['cluster.x-k8s.io'],
    resources: ['clusters', 'machinedeployments'],
    verbs: ['get', 'list', 'watch'],
  },
];

/** A viewer who may also pause, resume and scale. */
export const OPERATOR_RULES = [
  ...VIEWER_RULES,
  { apiGroups: ['cluster.x-k8s.io'], resources: ['clusters', 'machinedeployments'], verbs: ['patch'] },
];

/** What creating a cluster from the built-in sim templates writes (server-side apply: get and patch). */
export const TEMPLATE_WRITER_RULES = [
  {
    apiGroups: ['cluster.x-k8s.io'],
    resources: ['clusters', 'machinedeployments', 'machinehealthchecks', 'clusterclasses'],
    verbs: ['get', 'create', 'patch'],
  },
  { apiGroups: ['addons.cluster.x-k8s.io'], resources: ['clusterresourcesets'], verbs: ['get', 'create', 'patch'] },
  {
    apiGroups: ['infrastructure.capstan.dev'],
    resources: ['simclusters', 'simmachinetemplates', 'simclustertemplates'],
    verbs: ['get', 'create', 'patch'],
  },
  { apiGroups: ['controlplane.capstan.dev'], resources: ['k3scontrolplanes', 'k3scontrolplanetemplates'], verbs: ['get', 'create', 'patch'] },
  { apiGroups: ['bootstrap.capstan.dev'], resources: ['k3sconfigtemplates'], verbs: ['get', 'create', 'patch'] },
  { apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'create', 'patch'] },
];

/**
 * A ServiceAccount of `namespace` with `rules` there only (or in every namespace with `clusterWide`: a ClusterRole and
 * its binding named `<namespace>-<name>`), and a token for the dashboard's audience.
 */
export async function userToken(
  kc: KubeConfig,
  namespace: string,
  name: string,
  rules: object[],
  options: { clusterWide?: boolean } = {},
): Promise<string> {
  const core = kc.makeApiClient(CoreV1Api);
  const rbac = kc.makeApiClient(RbacAuthorizationV1Api);
  await core.createNamespacedServiceAccount({ namespace, body: { metadata: { name } } });
  const subjects = [{ kind: 'ServiceAccount', name, namespace }];
  if (options.clusterWide) {
    const roleName = `${namespace}-${name}`;
    await rbac.createClusterRole({ body: { metadata: { name: roleName }, rules } as never });
    await rbac.createClusterRoleBinding({
      body: {
        metadata: { name: roleName },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: roleName },
        subjects,
      },
    });
  } else {
    await rbac.createNamespacedRole({ namespace, body: { metadata: { name }, rules } as never });
    await rbac.createNamespacedRoleBinding({
      namespace,
      body: {
        metadata: { name },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name },
        subjects,
      },
    });
  }
  const issued = await core.createNamespacedServiceAccountToken({
    namespace,
    name,
    body: { spec: { audiences: [DASHBOARD_AUDIENCE], expirationSeconds: 3600 } },
  });
  const token = issued.status?.token;
  if (!token) throw new Error(`no token issued for ${namespace}/${name}`);
  return token;
}

/** A minimal Cluster `namespace/name`: no topology, no controllers needed to show it. */
export function cluster(namespace: string, name: string): Cluster {
  return {
    apiVersion: RESOURCES.Cluster.apiVersion,
    kind: 'Cluster',
    metadata: { name, namespace },
    spec: {
      controlPlaneRef: { apiGroup: 'controlplane.capstan.dev', kind: 'K3sControlPlane', name },
      infrastructureRef: { apiGroup: 'infrastructure.capstan.dev', kind: 'SimCluster', name },
    },
  } as Cluster;
}

/** Reads a Cluster's page: the viewer's rules plus the tree's other kinds (Capstan's provider kinds among them). */
export const CLUSTER_PAGE_RULES = [
  {
    apiGroups: ['cluster.x-k8s.io'],
    resources: ['clusters', 'machinedeployments', 'machinesets', 'machines'],
    verbs: ['get', 'list', 'watch'],
  },
  {
    apiGroups: ['controlplane.capstan.dev'],
    resources: ['k3scontrolplanes'],
    verbs: ['get', 'list', 'watch'],
  },
  { apiGroups: ['infrastructure.capstan.dev'], resources: ['simclusters'], verbs: ['get', 'list', 'watch'] },
];

/** Also gets one Cluster's kubeconfig Secret (`<cluster>-kubeconfig`), and no other Secret. */
export function kubeconfigReaderRules(clusterName: string): object[] {
  return [
    ...CLUSTER_PAGE_RULES,
    { apiGroups: [''], resources: ['secrets'], resourceNames: [`${clusterName}-kubeconfig`], verbs: ['get'] },
  ];
}

const VERSION = 'v1.34.4';
const condition = (type: string, status: 'True' | 'False', reason: string, message = '') => ({
  type,
  status,
  reason,
  message,
  lastTransitionTime: new Date(Date.now() - 90_000).toISOString().replace(/\.\d+Z$/, 'Z'),
});

/**
 * The objects of a Cluster's tree as `capstan describe cluster` shows them, written as generic objects (no controller
 * runs): the Cluster (as `cluster()`) with conditions, its SimCluster and K3sControlPlane with one control plane
 * Machine, a MachineDeployment `<name>-md-0` with a MachineSet and one worker Machine.
 */
export async function createClusterTree(client: KubeClient, namespace: string, name: string): Promise<void> {
  const labels = { [LABELS.clusterName]: name };
  const owner = (object: {
    apiVersion?: string;
    kind?: string;
    metadata?: { name?: string; uid?: string };
  }) => [
    {
      apiVersion: object.apiVersion!,
      kind: object.kind!,
      name: object.metadata!.name!,
      uid: object.metadata!.uid!,
      controller: true,
    },
  ];
  const create = (type: (typeof RESOURCES)[keyof typeof RESOURCES], body: object) =>
    client.resource(type).create({ apiVersion: type.apiVersion, kind: type.kind, ...body });
  const setStatus = (type: (typeof RESOURCES)[keyof typeof RESOURCES], objectName: string, status: object) =>
    client.resource(type).patchStatus({ namespace, name: objectName }, status);

  await client.resource<Cluster>(RESOURCES.Cluster).create(cluster(namespace, name));
  await setStatus(RESOURCES.Cluster, name, {
    conditions: [condition('Available', 'False', 'NotAvailable', 'the control plane is not available yet')],
  });
  await create(RESOURCES.SimCluster, { metadata: { name, namespace, labels }, spec: {} });
  await setStatus(RESOURCES.SimCluster, name, {
    conditions: [condition('Ready', 'True', 'Provisioned')],
  });
  const controlPlane = await create(RESOURCES.K3sControlPlane, {
    metadata: { name, namespace, labels },
    spec: {
      replicas: 1,
      version: VERSION,
      machineTemplate: {
        spec: {
          infrastructureRef: { apiGroup: 'infrastructure.capstan.dev', kind: 'SimMachineTemplate', name },
        },
      },
    },
  });
  const machine = (machineName: string, ownerReferences: object[], controlPlaneMachine: boolean) =>
    create(RESOURCES.Machine, {
      metadata: {
        name: machineName,
        namespace,
        labels: { ...labels, ...(controlPlaneMachine ? { [LABELS.controlPlane]: '' } : {}) },
        ownerReferences,
      },
      spec: {
        clusterName: name,
        version: VERSION,
        bootstrap: { dataSecretName: `${machineName}-bootstrap` },
        infrastructureRef: { apiGroup: 'infrastructure.capstan.dev', kind: 'SimMachine', name: machineName },
      },
    });
  await machine(`${name}-cp-0`, owner(controlPlane), true);
  const template = {
    metadata: { labels: { pool: 'md-0' } },
    spec: {
      clusterName: name,
      version: VERSION,
      bootstrap: { configRef: { apiGroup: 'bootstrap.capstan.dev', kind: 'K3sConfigTemplate', name } },
      infrastructureRef: { apiGroup: 'infrastructure.capstan.dev', kind: 'SimMachineTemplate', name },
    },
  };
  const deployment = await create(RESOURCES.MachineDeployment, {
    metadata: { name: `${name}-md-0`, namespace, labels },
    spec: { clusterName: name, replicas: 1, selector: { matchLabels: { pool: 'md-0' } }, template },
  });
  const set = await create(RESOURCES.MachineSet, {
    metadata: { name: `${name}-md-0-a1`, namespace, labels, ownerReferences: owner(deployment) },
    spec: { clusterName: name, replicas: 1, selector: { matchLabels: { pool: 'md-0' } }, template },
  });
  await machine(`${name}-md-0-a1-w0`, owner(set), false);
  for (const machineName of [`${name}-cp-0`, `${name}-md-0-a1-w0`])
    await setStatus(RESOURCES.Machine, machineName, {
      conditions: [condition('Ready', 'False', 'NodeNotReady', 'waiting for the node')],
    });
}

/** The `<cluster>-kubeconfig` Secret as the control plane provider writes it (key `value`). */
export async function createKubeconfigSecret(
  client: KubeClient,
  namespace: string,
  clusterName: string,
  kubeconfig: string,
): Promise<void> {
  await client.resource(SECRETS).create({
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: `${clusterName}-kubeconfig`, namespace, labels: { [LABELS.clusterName]: clusterName } },
    type: 'cluster.x-k8s.io/secret',
    data: { value: Buffer.from(kubeconfig).toString('base64') },
  } as KubernetesObject);
}

/**
 * Waits until the API server lists every kind of a Cluster's tree in `namespace`: right after their CRDs are applied
 * it answers 429 "storage is (re)initializing" for a moment (the dashboard passes that on, as it passes every answer).
 */
export async function treeKindsServed(client: KubeClient, namespace: string): Promise<void> {
  const kinds = [
    RESOURCES.Cluster,
    RESOURCES.MachineDeployment,
    RESOURCES.MachineSet,
    RESOURCES.Machine,
    RESOURCES.K3sControlPlane,
    RESOURCES.SimCluster,
  ];
  await eventually(
    async () => {
      await Promise.all(kinds.map((kind) => client.resource(kind).list({ namespace, limit: 1 })));
      return true;
    },
    { message: "the API server lists a Cluster tree's kinds", timeoutMs: 30_000 },
  );
}
