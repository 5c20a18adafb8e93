import {
  ConditionReason,
  ConditionType,
  RESOURCES,
  type K3sConfig,
  type K3sControlPlane,
  type Machine,
} from '@capstan/api';
import {
  EVENTS_V1,
  EventRecorder,
  KubeClient,
  KubeTransportError,
  ResourceClient,
  runWithCallSignal,
  type KubeEvent,
  type ObjectRef,
  type ResourceType,
  type WriteOptions,
} from '@capstan/kube';
import { createTestNamespace, eventually, installCapstanDefinitions, type TestNamespace } from '@capstan/testing';
import type { KubernetesObject } from '@kubernetes/client-node';
import pino from 'pino';
import { TestScope, testKcp } from '../testing/control-plane-scope.js';
import { MachineExpectations } from './expectations.js';
import { ControlPlaneScaler } from './k3scontrolplane.scale.js';
import { ProviderKinds } from '@capstan/provider-kit';

// The control plane's machine creation and the repair of a stranded Machine against the real API server: the
// requests are real; the test decides when the Machine's create reaches the server and what the scaler hears.

const SIM_MACHINES: ResourceType = {
  group: 'infrastructure.capstan.dev',
  version: 'v1alpha1',
  plural: 'simmachines',
  kind: 'SimMachine',
  namespaced: true,
};
const log = pino({ level: 'silent' });

/**
 * A Machine client whose creates are handed to `intercept` (which sends them, or not, when it likes), and whose
 * reads of one Machine call `afterRead` once the answer is in.
 */
class InterceptedMachines extends ResourceClient<Machine> {
  intercept: ((send: () => Promise<Machine>) => Promise<Machine>) | undefined;
  afterRead: (() => Promise<void>) | undefined;
  override create(obj: Machine, options?: WriteOptions): Promise<Machine> {
    const send = () => super.create(obj, options);
    return this.intercept ? this.intercept(send) : send();
  }
  override async getIfExists(ref: ObjectRef, signal?: AbortSignal): Promise<Machine | undefined> {
    const answer = await super.getIfExists(ref, signal);
    await this.afterRead?.();
    return answer;
  }
}

describe('ControlPlaneScaler against the API server', () => {
  let ns: TestNamespace;
  let client: KubeClient;
  let kcp: K3sControlPlane;
  let machineClient: InterceptedMachines;

  beforeAll(async () => {
    ns = await createTestNamespace('kcp-scale');
    await installCapstanDefinitions(ns.kc);
    client = new KubeClient(ns.kc, { fieldManager: 'kcp-scale-test' });
    machineClient = new InterceptedMachines(client, RESOURCES.Machine);
    await client
      .resource<KubernetesObject>({
        ...SIM_MACHINES,
        plural: 'simmachinetemplates',
        kind: 'SimMachineTemplate',
      })
      .create({
        apiVersion: 'infrastructure.capstan.dev/v1alpha1',
        kind: 'SimMachineTemplate',
        metadata: { name: 'sim', namespace: ns.name },
        spec: { template: { spec: {} } },
      } as KubernetesObject);
    const desired = testKcp({
      replicas: 1,
      version: 'v1.34.4',
      machineTemplate: {
        spec: {
          infrastructureRef: { apiGroup: SIM_MACHINES.group, kind: 'SimMachineTemplate', name: 'sim' },
        },
      },
    });
    kcp = await client.resource<K3sControlPlane>(RESOURCES.K3sControlPlane).create({
      ...desired,
      metadata: { name: 'demo-cp', namespace: ns.name },
    });
  });
  afterAll(async () => {
    await client?.close();
    await ns?.delete();
  });

  const scaler = (strandedGraceMs?: number, expectations = new MachineExpectations()) =>
    new ControlPlaneScaler({
      client,
      recorder: new EventRecorder({
        client,
        reportingController: 'capstan.dev/test',
        reportingInstance: 'test',
        logger: log,
      }),
      machineClient,
      configClient: client.resource<K3sConfig>(RESOURCES.K3sConfig),
      machines: { getByName: () => undefined },
      kinds: new ProviderKinds(client),
      expectations,
      resolveDelaysMs: [50, 50],
      ...(strandedGraceMs !== undefined && { strandedGraceMs }),
    });
  const exists = async (type: ResourceType, name: string) =>
    (await client.resource(type).getIfExists({ namespace: ns.name, name })) !== undefined;
  const listMachines = async () => (await machineClient.list({ namespace: ns.name })).items;

  afterEach(async () => {
    machineClient.intercept = undefined;
    machineClient.afterRead = undefined;
    for (const machine of await listMachines())
      await machineClient.delete({ namespace: ns.name, name: machine.metadata.name! });
  });

  it('keeps a Machine’s clones when a hand-over cut its create and the server committed it after a read said absent', async () => {
    const handOver = new AbortController();
    let held: (() => Promise<Machine>) | undefined;
    machineClient.intercept = async (send) => {
      if (!held) {
        // The create is on its way when the cluster moves to another replica: the caller hears an abort, and the
        // request reaches the server only after whatever the caller reads next.
        held = send;
        handOver.abort(new Error('cluster moved to another replica'));
        throw new KubeTransportError(
          'POST',
          '/machines',
          new DOMException('This operation was aborted', 'AbortError'),
        );
      }
      await held();
      return send();
    };
    // A read of the Machine after the abort says absent; then the held create reaches the server.
    machineClient.afterRead = async () => {
      await held?.().catch(() => undefined);
    };
    const test = new TestScope(kcp, { now: new Date() });
    await runWithCallSignal(handOver.signal, () => scaler().reconcile(test.scope, false)).catch(
      () => undefined,
    );
    // At the latest now the create the replica gave up on reaches the server.
    await held?.().catch(() => undefined);

    const [machine, ...others] = await listMachines();
    expect(others).toEqual([]);
    const name = machine!.metadata.name!;
    expect({
      config: await exists(RESOURCES.K3sConfig, name),
      infrastructure: await exists(SIM_MACHINES, name),
    }).toEqual({
      config: true,
      infrastructure: true,
    });
  });

  it('counts a Machine created just before the reconcile was cut, though its template fields wait', async () => {
    const handOver = new AbortController();
    machineClient.intercept = async (send) => {
      const created = await send();
      handOver.abort(new Error('cluster moved to another replica'));
      return created;
    };
    const expectations = new MachineExpectations();
    const test = new TestScope(kcp, { now: new Date() });
    const result = await runWithCallSignal(handOver.signal, () =>
      scaler(undefined, expectations).reconcile(test.scope, false),
    );
    expect(result.plan.action).toMatchObject({ type: 'create' });
    const [machine] = await listMachines();
    // The next reconcile waits for the cache to show it instead of creating another.
    expect(expectations.satisfied(test.kit.key, () => 'absent')).toBe(false);
    expect(
      expectations.satisfied(test.kit.key, (name) =>
        name === machine!.metadata.name ? 'present' : 'absent',
      ),
    ).toBe(true);
    expect(test.recorded).toEqual([expect.stringMatching(/^MachineCreated: Created machine demo-cp-/)]);
  });

  it('replaces a Machine whose clones are gone before it was provisioned, and leaves one whose clones exist', async () => {
    const created = await runWithCallSignal(new AbortController().signal, async () => {
      const test = new TestScope(kcp, { now: new Date() });
      await scaler().reconcile(test.scope, false);
      return listMachines();
    });
    const healthy = created[0]!;
    const stranded = await machineClient.create({
      ...healthy,
      metadata: {
        name: 'demo-cp-strnd',
        namespace: ns.name,
        labels: healthy.metadata.labels,
        ownerReferences: healthy.metadata.ownerReferences,
      },
      spec: {
        ...healthy.spec,
        bootstrap: { configRef: { ...healthy.spec.bootstrap.configRef!, name: 'demo-cp-strnd' } },
        infrastructureRef: { ...healthy.spec.infrastructureRef, name: 'demo-cp-strnd' },
      },
    });
    // Played by the core: both references reported missing, the healthy one's stale in the cache.
    const missing = (machine: Machine) =>
      machineClient.patchStatus(
        { namespace: ns.name, name: machine.metadata.name! },
        {
          conditions: [ConditionType.BootstrapConfigReady, ConditionType.InfrastructureReady].map((type) => ({
            type,
            status: 'False',
            reason: ConditionReason.ObjectDoesNotExist,
            message: 'does not exist',
            lastTransitionTime: new Date().toISOString().replace(/\.\d{3}Z$/, 'Z'),
          })),
        },
      );
    const machines = [await missing(stranded), await missing(healthy)];

    const young = new TestScope(kcp, { machines, now: new Date() });
    const waiting = await scaler(60_000).reconcile(young.scope, true);
    expect(waiting.execution.retryAfterMs).toBeGreaterThan(50_000);
    expect(await exists(RESOURCES.Machine, 'demo-cp-strnd')).toBe(true);

    const test = new TestScope(kcp, { machines, now: new Date() });
    const result = await scaler(0).reconcile(test.scope, true);
    expect(result.settled).toBe(false);
    expect(await exists(RESOURCES.Machine, 'demo-cp-strnd')).toBe(false);
    expect(await exists(RESOURCES.Machine, healthy.metadata.name!)).toBe(true);
    const event = await eventually(
      async () => {
        const events = await client.resource<KubeEvent>(EVENTS_V1).list({ namespace: ns.name });
        return events.items.find(
          (e) => e.reason === 'StrandedMachineReplaced' && e.regarding?.name === 'demo-cp',
        );
      },
      { message: 'the StrandedMachineReplaced event', timeoutMs: 10_000 },
    );
    expect(event.note).toBe(
      'Replacing Machine demo-cp-strnd: K3sConfig demo-cp-strnd and SimMachine demo-cp-strnd do not exist and it was never provisioned',
    );
  });
});
