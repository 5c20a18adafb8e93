import { ApiextensionsV1Api, type KubernetesObject, type V1Node, type V1Pod } from '@kubernetes/client-node';
import { ANNOTATIONS, FINALIZERS, LABELS, type Cluster, type Machine } from '@capstan/api';
import { testNatsUrl } from '@capstan/testing';
import { NODES, PODS } from '../../remote/resources.js';
import {
  collectLifecycleEvents,
  condition,
  eventually,
  startCoreHarness,
  type CoreHarness,
  type Unstructured,
} from '../../testing/core-test-harness.js';

const INFRA_CLUSTER = 'GenericInfrastructureCluster';
const CP = 'GenericControlPlane';
const INFRA = 'GenericInfrastructureMachine';
const BOOTSTRAP = 'GenericBootstrapConfig';
const HOLD = 'test.capstan.dev/hold';
const PRE_DRAIN = 'pre-drain.delete.hook.machine.cluster.x-k8s.io/test';
const PRE_TERMINATE = 'pre-terminate.delete.hook.machine.cluster.x-k8s.io/test';
const LEGACY_GROUP = 'infrastructure.legacy-machine.capstan.dev';

describe('Machine controller', () => {
  let h: CoreHarness;
  let lifecycle: Awaited<ReturnType<typeof collectLifecycleEvents>>;

  const getMachine = (name: string) => h.machines.get({ namespace: h.namespace, name });
  const getNode = (name: string) => h.client.resource<V1Node>(NODES).get({ name });
  const nodeName = (machine: string) => `${h.namespace}-${machine}`;
  const providerID = (machine: string) => `test://${h.namespace}/${machine}`;
  const phase = async (name: string, wanted: string) =>
    eventually(`machine ${name} ${wanted}`, async () => {
      const m = await getMachine(name);
      return m.status?.phase === wanted && m;
    });

  /** A Cluster whose infrastructure is provisioned and control plane initialized, with a kubeconfig for the workload cluster. */
  async function readyCluster(name: string): Promise<Cluster> {
    await h.create(INFRA_CLUSTER, `${name}-infra`, {
      controlPlaneEndpoint: { host: '10.1.0.1', port: 6443 },
    });
    await h.setStatus(INFRA_CLUSTER, `${name}-infra`, { initialization: { provisioned: true } });
    await h.create(CP, `${name}-cp`);
    await h.setStatus(CP, `${name}-cp`, { initialization: { controlPlaneInitialized: true } });
    await h.createKubeconfigSecret(name);
    await h.clusters.create({
      metadata: { name, namespace: h.namespace },
      spec: {
        infrastructureRef: h.ref(INFRA_CLUSTER, `${name}-infra`),
        controlPlaneRef: h.ref(CP, `${name}-cp`),
      },
    } as Cluster);
    return eventually(`cluster ${name} initialized`, async () => {
      const c = await h.clusters.get({ namespace: h.namespace, name });
      return (
        c.status?.initialization?.controlPlaneInitialized === true && c.status.phase === 'Provisioned' && c
      );
    });
  }

  async function createMachine(
    name: string,
    cluster: string,
    options: { spec?: Partial<Machine['spec']>; metadata?: Record<string, unknown>; refs?: boolean } = {},
  ): Promise<Machine> {
    if (options.refs !== false) {
      await h.create(BOOTSTRAP, `${name}-boot`);
      await h.create(INFRA, `${name}-infra`);
    }
    return h.machines.create({
      metadata: { name, namespace: h.namespace, ...options.metadata },
      spec: {
        clusterName: cluster,
        bootstrap: { configRef: h.ref(BOOTSTRAP, `${name}-boot`) },
        infrastructureRef: h.ref(INFRA, `${name}-infra`),
        ...options.spec,
      },
    } as Machine);
  }

  /** Plays both providers to the end for a machine created by createMachine, and registers its Node. */
  async function provision(name: string, cluster: string): Promise<Machine> {
    await h.setStatus(BOOTSTRAP, `${name}-boot`, {
      initialization: { dataSecretCreated: true },
      dataSecretName: `${name}-data`,
    });
    await h.handoff('bootstrap.data-secret-created', BOOTSTRAP, `${name}-boot`, {
      clusterName: cluster,
      machineName: name,
      dataSecretName: `${name}-data`,
    });
    await h
      .kind(INFRA)
      .mergePatch(
        { namespace: h.namespace, name: `${name}-infra` },
        { spec: { providerID: providerID(name) } },
      );
    await h.setStatus(INFRA, `${name}-infra`, {
      initialization: { provisioned: true },
      addresses: [{ type: 'InternalIP', address: '10.1.1.1' }],
    });
    await h.handoff('infrastructure-machine.provisioned', INFRA, `${name}-infra`, {
      clusterName: cluster,
      machineName: name,
      providerID: providerID(name),
    });
    await h.createNode(nodeName(name), providerID(name));
    return phase(name, 'Running');
  }

  async function createPod(
    name: string,
    node: string,
    extra: Partial<V1Pod['spec']> = {},
    metadata: Record<string, unknown> = {},
  ) {
    return h.client.resource<V1Pod>(PODS).create({
      metadata: { name, namespace: h.namespace, ...metadata },
      spec: {
        nodeName: node,
        terminationGracePeriodSeconds: 0,
        containers: [{ name: 'c', image: 'registry.invalid/pause' }],
        ...extra,
      },
    });
  }
  const podState = (name: string) =>
    h.client
      .resource<V1Pod>(PODS)
      .get({ namespace: h.namespace, name })
      .then(
        (p) => (p.metadata?.deletionTimestamp ? 'terminating' : 'running'),
        () => 'gone',
      );

  beforeAll(async () => {
    h = await startCoreHarness({ prefix: 'core-ma' });
    lifecycle = await collectLifecycleEvents(testNatsUrl(), h.topology);
    await readyCluster('wl');
    // A control plane member of 'wl' that stays: deleting another machine's Node is allowed while one is left.
    await createMachine('wl-cp', 'wl', { metadata: { labels: { [LABELS.controlPlane]: '' } } });
  });
  afterAll(async () => {
    await lifecycle?.close();
    await h?.stop();
  });

  it('goes Pending, Provisioning, Provisioned, Running, copying the contract fields and finding its Node', async () => {
    await createMachine('m1', 'wl');
    const pending = await phase('m1', 'Pending');
    expect(pending.metadata?.finalizers).toContain(FINALIZERS.machine);
    expect(pending.metadata?.labels?.[LABELS.clusterName]).toBe('wl');
    expect(pending.metadata?.ownerReferences).toEqual([
      expect.objectContaining({ kind: 'Cluster', name: 'wl' }),
    ]);
    expect(condition(pending, 'BootstrapConfigReady')).toMatchObject({ status: 'False', reason: 'NotReady' });
    for (const kind of [BOOTSTRAP, INFRA]) {
      const obj = await h
        .kind(kind)
        .get({ namespace: h.namespace, name: `m1-${kind === INFRA ? 'infra' : 'boot'}` });
      expect(obj.metadata?.ownerReferences).toEqual([
        expect.objectContaining({
          kind: 'Machine',
          name: 'm1',
          uid: pending.metadata?.uid,
          controller: true,
        }),
      ]);
      expect(obj.metadata?.labels?.[LABELS.clusterName]).toBe('wl');
    }

    await h.setStatus(BOOTSTRAP, 'm1-boot', {
      initialization: { dataSecretCreated: true },
      dataSecretName: 'm1-data',
    });
    await h.handoff('bootstrap.data-secret-created', BOOTSTRAP, 'm1-boot', {
      clusterName: 'wl',
      machineName: 'm1',
      dataSecretName: 'm1-data',
    });
    const provisioning = await phase('m1', 'Provisioning');
    expect(provisioning.spec.bootstrap.dataSecretName).toBe('m1-data');
    expect(provisioning.status?.initialization?.bootstrapDataSecretCreated).toBe(true);
    expect(condition(provisioning, 'BootstrapConfigReady')).toMatchObject({ status: 'True' });

    await h
      .kind(INFRA)
      .mergePatch({ namespace: h.namespace, name: 'm1-infra' }, { spec: { providerID: providerID('m1') } });
    await h.setStatus(INFRA, 'm1-infra', {
      initialization: { provisioned: true },
      addresses: [
        { type: 'InternalIP', address: '10.1.1.7' },
        { type: 'Hostname', address: 'm1' },
      ],
      failureDomain: 'fd-a',
    });
    await h.handoff('infrastructure-machine.provisioned', INFRA, 'm1-infra', {
      clusterName: 'wl',
      machineName: 'm1',
      providerID: providerID('m1'),
    });
    const provisioned = await phase('m1', 'Provisioned');
    expect(provisioned.spec.providerID).toBe(providerID('m1'));
    expect(provisioned.spec.failureDomain).toBe('fd-a');
    expect(provisioned.status?.failureDomain).toBe('fd-a');
    expect(provisioned.status?.addresses).toEqual([
      { type: 'InternalIP', address: '10.1.1.7' },
      { type: 'Hostname', address: 'm1' },
    ]);
    expect(condition(provisioned, 'InfrastructureReady')).toMatchObject({ status: 'True' });
    expect(condition(provisioned, 'NodeHealthy')).toMatchObject({
      status: 'Unknown',
      reason: 'InspectionFailed',
      message: `Waiting for a Node with spec.providerID ${providerID('m1')} to exist`,
    });

    await h.createNode(nodeName('m1'), providerID('m1'));
    // The harness creates the Node, then writes its status: a Machine can be Running (nodeRef) in between, with the
    // Node's info still empty; the next reconcile copies it.
    const running = await eventually('machine m1 Running with its Node info', async () => {
      const m = await getMachine('m1');
      return m.status?.phase === 'Running' && m.status.nodeInfo?.osImage !== '' && m.status.nodeInfo !== undefined && m;
    });
    expect(running.status?.nodeRef).toEqual({ name: nodeName('m1') });
    expect(running.status?.nodeInfo).toMatchObject({ kubeletVersion: 'v1.34.0', osImage: 'Capstan Test' });
    for (const type of ['NodeReady', 'NodeHealthy', 'Ready', 'Available']) {
      expect(condition(running, type)).toMatchObject({ status: 'True' });
    }
    const node = await eventually('node annotations', async () => {
      const n = await getNode(nodeName('m1'));
      return n.metadata?.annotations?.[ANNOTATIONS.nodeMachine] === 'm1' && n;
    });
    expect(node.metadata?.annotations).toMatchObject({
      [ANNOTATIONS.nodeClusterName]: 'wl',
      [ANNOTATIONS.nodeClusterNamespace]: h.namespace,
    });
    await eventually('provisioning, provisioned and running events', () =>
      ['machine.provisioning', 'machine.provisioned', 'machine.running'].every(
        (e) => lifecycle.named(e, 'm1') === 1,
      ),
    );
  });

  it('follows its Node: NodeReady and NodeHealthy turn false when the Node is not Ready', async () => {
    const nodes = h.client.resource<V1Node>(NODES);
    const node = await getNode(nodeName('m1'));
    const conditions = (node.status?.conditions ?? []).map((c) =>
      c.type === 'Ready' ? { ...c, status: 'False', message: 'kubelet stopped posting node status' } : c,
    );
    await nodes.patchStatus({ name: nodeName('m1') }, { conditions });
    const unhealthy = await eventually('NodeHealthy False', async () => {
      const m = await getMachine('m1');
      return condition(m, 'NodeHealthy')?.status === 'False' && m;
    });
    expect(condition(unhealthy, 'NodeReady')).toMatchObject({ status: 'False', reason: 'NodeNotReady' });
    expect(condition(unhealthy, 'Ready')).toMatchObject({ status: 'False' });
    expect(condition(unhealthy, 'Available')).toMatchObject({ status: 'False', reason: 'NotReady' });
  });

  it('is Available only minReadySeconds after it became Ready', async () => {
    await createMachine('slow', 'wl', { spec: { minReadySeconds: 3 } });
    await provision('slow', 'wl');
    const waiting = await eventually('WaitingForMinReadySeconds', async () => {
      const m = await getMachine('slow');
      return condition(m, 'Ready')?.status === 'True' && m;
    });
    expect(condition(waiting, 'Available')).toMatchObject({
      status: 'False',
      reason: 'WaitingForMinReadySeconds',
    });
    const available = await eventually('Available', async () => {
      const m = await getMachine('slow');
      return condition(m, 'Available')?.status === 'True' && m;
    });
    const readyAt = Date.parse(condition(available, 'Ready')!.lastTransitionTime);
    const availableAt = Date.parse(condition(available, 'Available')!.lastTransitionTime);
    expect(availableAt - readyAt).toBeGreaterThanOrEqual(3000);
  });

  it('reads v1beta1-contract providers (status.ready) and machines without a bootstrap config', async () => {
    const api = h.ns.kc.makeApiClient(ApiextensionsV1Api);
    const open = { type: 'object', x_kubernetes_preserve_unknown_fields: true };
    await api
      .createCustomResourceDefinition({
        body: {
          metadata: {
            name: `legacymachines.${LEGACY_GROUP}`,
            labels: { 'cluster.x-k8s.io/v1beta1': 'v1alpha4_v1beta1' },
          },
          spec: {
            group: LEGACY_GROUP,
            scope: 'Namespaced',
            names: {
              kind: 'LegacyMachine',
              plural: 'legacymachines',
              singular: 'legacymachine',
              listKind: 'LegacyMachineList',
            },
            versions: ['v1alpha4', 'v1beta1'].map((name) => ({
              name,
              served: true,
              storage: name === 'v1beta1',
              schema: { openAPIV3Schema: { type: 'object', properties: { spec: open, status: open } } },
              subresources: { status: {} },
            })),
          },
        },
      })
      .catch((error: { code?: number }) => {
        if (error.code !== 409) throw error;
      });
    const legacy = h.client.resource<Unstructured>({
      group: LEGACY_GROUP,
      version: 'v1beta1',
      kind: 'LegacyMachine',
      plural: 'legacymachines',
      namespaced: true,
    });
    await eventually('legacy kind served', () =>
      legacy.list({ namespace: h.namespace }).then(
        () => true,
        () => false,
      ),
    );
    await legacy.create({
      metadata: { name: 'old-infra', namespace: h.namespace },
      spec: { providerID: providerID('old') },
    } as Unstructured);
    await createMachine('old', 'wl', {
      refs: false,
      spec: {
        bootstrap: { dataSecretName: 'old-data' },
        infrastructureRef: { apiGroup: LEGACY_GROUP, kind: 'LegacyMachine', name: 'old-infra' },
      },
    });
    const provisioning = await phase('old', 'Provisioning');
    expect(condition(provisioning, 'BootstrapConfigReady')).toMatchObject({
      status: 'True',
      reason: 'DataSecretProvided',
    });

    await legacy.patchStatus(
      { namespace: h.namespace, name: 'old-infra' },
      { ready: true, addresses: [{ type: 'ExternalIP', address: '192.0.2.4' }] },
    );
    await h.createNode(nodeName('old'), providerID('old'));
    h.service.context.controllers.enqueue('machine', `${h.namespace}/old`);
    const running = await phase('old', 'Running');
    expect(running.spec.providerID).toBe(providerID('old'));
    expect(running.status?.addresses).toEqual([{ type: 'ExternalIP', address: '192.0.2.4' }]);
  });

  it('deletes in order: pre-drain hook, cordon and drain by eviction, pre-terminate hook, provider objects, Node', async () => {
    await createMachine('gone', 'wl', {
      metadata: { annotations: { [PRE_DRAIN]: '', [PRE_TERMINATE]: '' } },
    });
    await provision('gone', 'wl');
    const node = nodeName('gone');
    // No kubelet runs here: a grace period of 0 lets the API server remove an evicted pod at once, as a kubelet would.
    await createPod('gone-app', node);
    // A real DaemonSet (no controller creates its pods here): the garbage collector keeps what it owns.
    const daemonSet = await h.client
      .resource<KubernetesObject>({ group: 'apps', version: 'v1', plural: 'daemonsets', kind: 'DaemonSet', namespaced: true })
      .create({
        apiVersion: 'apps/v1',
        kind: 'DaemonSet',
        metadata: { name: 'ds', namespace: h.namespace },
        spec: {
          selector: { matchLabels: { app: 'ds' } },
          template: { metadata: { labels: { app: 'ds' } }, spec: { containers: [{ name: 'c', image: 'registry.invalid/pause' }] } },
        },
      } as KubernetesObject);
    await createPod(
      'gone-ds',
      node,
      {},
      {
        labels: { app: 'ds' },
        ownerReferences: [
          { apiVersion: 'apps/v1', kind: 'DaemonSet', name: 'ds', uid: daemonSet.metadata!.uid!, controller: true },
        ],
      },
    );

    await h.machines.delete({ namespace: h.namespace, name: 'gone' });
    const hooked = await eventually('WaitingForPreDrainHook', async () => {
      const m = await getMachine('gone');
      return condition(m, 'Deleting')?.reason === 'WaitingForPreDrainHook' && m;
    });
    expect(hooked.status?.phase).toBe('Deleting');
    expect(hooked.status?.deletion?.waitForPreDrainHookStartTime).toBeDefined();
    expect(await podState('gone-app')).toBe('running');
    expect((await getNode(node)).spec?.unschedulable).toBeUndefined();

    await h.machines.mergePatch(
      { namespace: h.namespace, name: 'gone' },
      { metadata: { annotations: { [PRE_DRAIN]: null } } },
    );
    const drained = await eventually('WaitingForPreTerminateHook', async () => {
      const m = await getMachine('gone');
      return condition(m, 'Deleting')?.reason === 'WaitingForPreTerminateHook' && m;
    });
    expect(drained.status?.deletion?.nodeDrainStartTime).toBeDefined();
    expect(drained.status?.deletion?.waitForPreTerminateHookStartTime).toBeDefined();
    expect((await getNode(node)).spec?.unschedulable).toBe(true);
    expect(await podState('gone-app')).toBe('gone');
    expect(await podState('gone-ds')).toBe('running');
    expect(await h.kind(INFRA).get({ namespace: h.namespace, name: 'gone-infra' })).toBeDefined();

    await h.machines.mergePatch(
      { namespace: h.namespace, name: 'gone' },
      { metadata: { annotations: { [PRE_TERMINATE]: null } } },
    );
    await eventually('machine gone', () =>
      getMachine('gone').then(
        () => false,
        () => true,
      ),
    );
    for (const [kind, name] of [
      [INFRA, 'gone-infra'],
      [BOOTSTRAP, 'gone-boot'],
    ] as const) {
      await expect(h.kind(kind).get({ namespace: h.namespace, name })).rejects.toMatchObject({ code: 404 });
    }
    await expect(getNode(node)).rejects.toMatchObject({ code: 404 });
    await eventually(
      'deleting and deleted events',
      () =>
        lifecycle.named('machine.deleting', 'gone') === 1 && lifecycle.named('machine.deleted', 'gone') === 1,
    );
  });

  it('gives up draining after nodeDrainTimeoutSeconds, and does not drain with exclude-node-draining', async () => {
    await createMachine('stuck', 'wl', { spec: { deletion: { nodeDrainTimeoutSeconds: 2 } } });
    await createMachine('excluded', 'wl', {
      metadata: { annotations: { [ANNOTATIONS.excludeNodeDraining]: '' } },
    });
    await provision('stuck', 'wl');
    await provision('excluded', 'wl');
    // A pod that stays terminating (its finalizer is never removed by a kubelet): the drain can only wait for it.
    await createPod(
      'stuck-app',
      nodeName('stuck'),
      { terminationGracePeriodSeconds: 30 },
      { finalizers: [HOLD] },
    );
    await createPod('excluded-app', nodeName('excluded'));

    await h.machines.delete({ namespace: h.namespace, name: 'stuck' });
    await h.machines.delete({ namespace: h.namespace, name: 'excluded' });
    const draining = await eventually('DrainingNode', async () => {
      const m = await getMachine('stuck');
      return condition(m, 'Deleting')?.reason === 'DrainingNode' && m;
    });
    expect(condition(draining, 'Deleting')?.message).toContain(`evicting Pods ${h.namespace}/stuck-app`);
    expect(await podState('stuck-app')).toBe('terminating');
    await eventually('stuck machine gone after the drain timeout', () =>
      getMachine('stuck').then(
        () => false,
        () => true,
      ),
    );
    await eventually('excluded machine gone', () =>
      getMachine('excluded').then(
        () => false,
        () => true,
      ),
    );
    expect(await podState('excluded-app')).toBe('running');

    await h.client
      .resource<V1Pod>(PODS)
      .mergePatch({ namespace: h.namespace, name: 'stuck-app' }, { metadata: { finalizers: null } });
  });

  it("keeps the Node of a running cluster's last control plane machine (upstream isDeleteNodeAllowed)", async () => {
    await readyCluster('solo');
    await createMachine('solo-cp', 'solo', { metadata: { labels: { [LABELS.controlPlane]: '' } } });
    await provision('solo-cp', 'solo');
    await h.machines.delete({ namespace: h.namespace, name: 'solo-cp' });
    await eventually('machine gone', () =>
      getMachine('solo-cp').then(
        () => false,
        () => true,
      ),
    );
    const node = await getNode(nodeName('solo-cp'));
    expect(node.metadata?.name).toBe(nodeName('solo-cp'));
  });

  it('neither drains nor deletes Nodes when the whole Cluster is being deleted', async () => {
    await readyCluster('doomed');
    await createMachine('doomed-m', 'doomed');
    await provision('doomed-m', 'doomed');
    await createPod('doomed-app', nodeName('doomed-m'));
    await h.clusters.delete({ namespace: h.namespace, name: 'doomed' });
    await eventually(
      'cluster gone',
      () =>
        h.clusters.get({ namespace: h.namespace, name: 'doomed' }).then(
          () => false,
          () => true,
        ),
      40_000,
    );
    expect(await podState('doomed-app')).toBe('running');
    const node = await getNode(nodeName('doomed-m'));
    expect(node.spec?.unschedulable).toBeUndefined();
  });
});
