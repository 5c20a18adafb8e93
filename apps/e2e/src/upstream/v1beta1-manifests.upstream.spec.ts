import 'reflect-metadata';
import type { KubernetesObject } from '@kubernetes/client-node';
import { RESOURCES } from '@capstan/api';
import { createKubeClient, type KubeClient, type ResourceType } from '@capstan/kube';
import { eventually, startCapstan, type CapstanUnderTest } from '@capstan/testing';
import { deleteClusterAndWait, FAST_SIM_ENV, waitForClusterAvailable } from '../sim-cluster-fixture.js';

// A manifest set still written for cluster.x-k8s.io/v1beta1 (a GitOps repository that has not moved yet): applied as it
// is, it provisions through the core's conversion webhook, and reads back as v1beta1 and as v1beta2.

const CLUSTER = 'legacy';
const TIMEOUT_MS = 240_000;
type Obj = KubernetesObject & { spec?: Record<string, unknown>; status?: Record<string, unknown> };

const v1beta1 = (plural: string, kind: string): ResourceType => ({ group: 'cluster.x-k8s.io', version: 'v1beta1', plural, kind, namespaced: true });
const v1alpha1 = (group: string, plural: string, kind: string): ResourceType => ({ group, version: 'v1alpha1', plural, kind, namespaced: true });

function manifests(namespace: string): [ResourceType, Obj][] {
  const meta = (name: string) => ({ name, namespace });
  const infra = 'infrastructure.capstan.dev/v1alpha1';
  return [
    [
      v1beta1('clusters', 'Cluster'),
      {
        apiVersion: 'cluster.x-k8s.io/v1beta1',
        kind: 'Cluster',
        metadata: meta(CLUSTER),
        spec: {
          clusterNetwork: { pods: { cidrBlocks: ['10.42.0.0/16'] }, services: { cidrBlocks: ['10.43.0.0/16'] } },
          infrastructureRef: { apiVersion: infra, kind: 'SimCluster', name: CLUSTER },
          controlPlaneRef: { apiVersion: 'controlplane.capstan.dev/v1alpha1', kind: 'K3sControlPlane', name: `${CLUSTER}-cp` },
        },
      },
    ],
    [v1alpha1('infrastructure.capstan.dev', 'simclusters', 'SimCluster'), { apiVersion: infra, kind: 'SimCluster', metadata: meta(CLUSTER), spec: {} }],
    [
      v1alpha1('infrastructure.capstan.dev', 'simmachinetemplates', 'SimMachineTemplate'),
      { apiVersion: infra, kind: 'SimMachineTemplate', metadata: meta(`${CLUSTER}-machines`), spec: { template: { spec: { provisioningDelaySeconds: 0 } } } },
    ],
    [
      v1alpha1('controlplane.capstan.dev', 'k3scontrolplanes', 'K3sControlPlane'),
      {
        apiVersion: 'controlplane.capstan.dev/v1alpha1',
        kind: 'K3sControlPlane',
        metadata: meta(`${CLUSTER}-cp`),
        spec: {
          replicas: 1,
          version: 'v1.34.4+k3s1',
          machineTemplate: { spec: { infrastructureRef: { apiGroup: 'infrastructure.capstan.dev', kind: 'SimMachineTemplate', name: `${CLUSTER}-machines` } } },
        },
      },
    ],
    [
      v1alpha1('bootstrap.capstan.dev', 'k3sconfigtemplates', 'K3sConfigTemplate'),
      { apiVersion: 'bootstrap.capstan.dev/v1alpha1', kind: 'K3sConfigTemplate', metadata: meta(`${CLUSTER}-workers`), spec: { template: { spec: {} } } },
    ],
    [
      v1beta1('machinedeployments', 'MachineDeployment'),
      {
        apiVersion: 'cluster.x-k8s.io/v1beta1',
        kind: 'MachineDeployment',
        metadata: meta(`${CLUSTER}-md-0`),
        spec: {
          clusterName: CLUSTER,
          replicas: 1,
          minReadySeconds: 0,
          revisionHistoryLimit: 1,
          selector: { matchLabels: { pool: 'md-0' } },
          strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1, maxUnavailable: 0, deletePolicy: 'Oldest' } },
          template: {
            metadata: { labels: { pool: 'md-0' } },
            spec: {
              clusterName: CLUSTER,
              version: 'v1.34.4+k3s1',
              nodeDrainTimeout: '5m',
              bootstrap: { configRef: { apiVersion: 'bootstrap.capstan.dev/v1alpha1', kind: 'K3sConfigTemplate', name: `${CLUSTER}-workers` } },
              infrastructureRef: { apiVersion: infra, kind: 'SimMachineTemplate', name: `${CLUSTER}-machines` },
            },
          },
        },
      },
    ],
    [
      v1beta1('machinehealthchecks', 'MachineHealthCheck'),
      {
        apiVersion: 'cluster.x-k8s.io/v1beta1',
        kind: 'MachineHealthCheck',
        metadata: meta(`${CLUSTER}-md-0`),
        spec: {
          clusterName: CLUSTER,
          selector: { matchLabels: { pool: 'md-0' } },
          maxUnhealthy: '40%',
          nodeStartupTimeout: '10m',
          unhealthyConditions: [{ type: 'Ready', status: 'Unknown', timeout: '300s' }],
        },
      },
    ],
  ];
}

describe('a cluster.x-k8s.io/v1beta1 manifest set', () => {
  let capstan: CapstanUnderTest;
  let client: KubeClient;
  let namespace: string;

  beforeAll(async () => {
    capstan = await startCapstan('v1beta1', {
      env: FAST_SIM_ENV,
      conversionWebhook: true,
    });
    namespace = capstan.namespace.name;
    client = createKubeClient(capstan.namespace.kc);
  }, TIMEOUT_MS);

  afterAll(async () => {
    // The CRDs keep pointing at this core's (then stopped) webhook: only v1beta1 requests need it, and later CRD installs
    // keep whatever client config they find.
    try {
      if (client) await deleteClusterAndWait(client, namespace, CLUSTER);
    } finally {
      await client?.close();
      await capstan?.stop();
    }
  }, TIMEOUT_MS);

  it(
    'applies as it is, provisions to Available, and reads back in both versions',
    async () => {
      // The first v1beta1 write goes through once the core serves its webhook and has pointed the CRDs at it.
      const [[clusterResource, clusterBody], ...rest] = manifests(namespace);
      await eventually(
        () =>
          client
            .resource<Obj>(clusterResource)
            .create(clusterBody)
            .then(
              () => true,
              () => false,
            ),
        { message: 'the v1beta1 Cluster accepted through the conversion webhook', timeoutMs: 60_000 },
      );
      for (const [resource, body] of rest) await client.resource<Obj>(resource).create(body);
      const cluster = await waitForClusterAvailable(client, namespace, CLUSTER, TIMEOUT_MS);
      expect(cluster.spec.infrastructureRef).toEqual({ apiGroup: 'infrastructure.capstan.dev', kind: 'SimCluster', name: CLUSTER });
      const md = await client.resource<Obj>(RESOURCES.MachineDeployment).get({ namespace, name: `${CLUSTER}-md-0` });
      expect(md.spec).toMatchObject({
        rollout: { strategy: { type: 'RollingUpdate' } },
        deletion: { order: 'Oldest' },
        template: { spec: { minReadySeconds: 0, deletion: { nodeDrainTimeoutSeconds: 300 } } },
      });
      const mhc = await client.resource<Obj>(RESOURCES.MachineHealthCheck).get({ namespace, name: `${CLUSTER}-md-0` });
      expect(mhc.spec).toMatchObject({
        checks: { nodeStartupTimeoutSeconds: 600, unhealthyNodeConditions: [{ type: 'Ready', status: 'Unknown', timeoutSeconds: 300 }] },
        remediation: { triggerIf: { unhealthyLessThanOrEqualTo: '40%' } },
      });
      // Read back as v1beta1: upstream's shapes, with what the providers and the core wrote since.
      const old = await client.resource<Obj>(v1beta1('clusters', 'Cluster')).get({ namespace, name: CLUSTER });
      expect(old.spec).toMatchObject({ infrastructureRef: { apiVersion: 'infrastructure.capstan.dev/v1alpha1', kind: 'SimCluster', name: CLUSTER, namespace } });
      expect(old.status).toMatchObject({ infrastructureReady: true, controlPlaneReady: true });
      const oldMd = await client.resource<Obj>(v1beta1('machinedeployments', 'MachineDeployment')).get({ namespace, name: `${CLUSTER}-md-0` });
      expect(oldMd.spec).toMatchObject({ strategy: { rollingUpdate: { deletePolicy: 'Oldest' } }, template: { spec: { nodeDrainTimeout: '5m0s' } } });
      expect((oldMd.status as { v1beta2?: { readyReplicas?: number } }).v1beta2?.readyReplicas).toBe(1);
    },
    TIMEOUT_MS,
  );
});
