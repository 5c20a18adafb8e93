import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from '@nats-io/transport-node';
import { type Cluster, type Machine } from '@capstan/api';
import { freePort, resolveNatsServer, startProcess, stopPid, type ManagedProcess } from '@capstan/testing';
import {
  collectLifecycleEvents,
  condition,
  eventually,
  startCoreHarness,
  type CoreHarness,
} from '../../testing/core-test-harness.js';

/** A nats-server with JetStream of this file's own, which the test stops and starts again (same port, same store). */
class StoppableNats {
  private process?: ManagedProcess;
  private constructor(
    readonly dir: string,
    readonly port: number,
  ) {}

  static async start(): Promise<StoppableNats> {
    const dir = mkdtempSync(join(tmpdir(), 'core-nats-'));
    const nats = new StoppableNats(dir, await freePort());
    writeFileSync(
      join(dir, 'nats.conf'),
      `host: 127.0.0.1\nport: ${nats.port}\njetstream { store_dir: "${join(dir, 'store')}" }\n`,
    );
    await nats.start();
    return nats;
  }

  get url(): string {
    return `nats://127.0.0.1:${this.port}`;
  }

  async start(): Promise<void> {
    if (this.process) return;
    this.process = startProcess({
      name: 'nats-server',
      command: resolveNatsServer(),
      args: ['-c', join(this.dir, 'nats.conf')],
      logFile: join(this.dir, 'nats.log'),
    });
    await eventually('nats-server to accept connections', async () => {
      const probe = await connect({ servers: this.url, reconnect: false, timeout: 500 }).catch(
        () => undefined,
      );
      await probe?.close();
      return probe !== undefined;
    });
  }

  async stop(): Promise<void> {
    if (this.process) await stopPid(this.process.pid);
    this.process = undefined;
  }

  async remove(): Promise<void> {
    await this.stop();
    rmSync(this.dir, { recursive: true, force: true });
  }
}

const SYNC_PERIOD_SECONDS = 2;
/** How long a converged namespace is watched for writes: 60 s, as the issue asks. */
const QUIET_MS = 60_000;

describe('with the event bus down', () => {
  let nats: StoppableNats;
  let h: CoreHarness;

  beforeAll(async () => {
    nats = await StoppableNats.start();
    h = await startCoreHarness({
      prefix: 'core-bus',
      syncPeriodSeconds: SYNC_PERIOD_SECONDS,
      natsUrl: nats.url,
    });
    await nats.stop();
  });
  afterAll(async () => {
    // The service drains its connection on stop: let it reach the server.
    await nats?.start();
    await h?.stop();
    await nats?.remove();
  });

  const getCluster = () => h.clusters.get({ namespace: h.namespace, name: 'quiet' });
  const getMachine = () => h.machines.get({ namespace: h.namespace, name: 'quiet-m' });
  const providerID = () => `test://${h.namespace}/quiet-m`;

  it('converges a Cluster and its Machine through the periodic resync alone (providers that publish nothing)', async () => {
    await h.create('GenericInfrastructureCluster', 'quiet-infra');
    await h.create('GenericControlPlane', 'quiet-cp');
    await h.clusters.create({
      metadata: { name: 'quiet', namespace: h.namespace },
      spec: {
        infrastructureRef: h.ref('GenericInfrastructureCluster', 'quiet-infra'),
        controlPlaneRef: h.ref('GenericControlPlane', 'quiet-cp'),
      },
    } as Cluster);
    await h.create('GenericBootstrapConfig', 'quiet-m-boot');
    await h.create('GenericInfrastructureMachine', 'quiet-m-infra', { providerID: providerID() });
    await h.machines.create({
      metadata: { name: 'quiet-m', namespace: h.namespace },
      spec: {
        clusterName: 'quiet',
        bootstrap: { configRef: h.ref('GenericBootstrapConfig', 'quiet-m-boot') },
        infrastructureRef: h.ref('GenericInfrastructureMachine', 'quiet-m-infra'),
      },
    } as Machine);
    await eventually('the machine taken in', async () => (await getMachine()).status?.phase === 'Pending');

    // The providers do their part and tell no one.
    await h
      .kind('GenericInfrastructureCluster')
      .mergePatch(
        { namespace: h.namespace, name: 'quiet-infra' },
        { spec: { controlPlaneEndpoint: { host: '10.2.0.1', port: 6443 } } },
      );
    await h.setStatus('GenericInfrastructureCluster', 'quiet-infra', {
      initialization: { provisioned: true },
    });
    await h.setStatus('GenericControlPlane', 'quiet-cp', {
      initialization: { controlPlaneInitialized: true },
      conditions: [
        {
          type: 'Available',
          status: 'True',
          reason: 'Available',
          message: '',
          lastTransitionTime: '2026-01-01T00:00:00Z',
        },
      ],
    });
    await h.createKubeconfigSecret('quiet');
    await h.setStatus('GenericBootstrapConfig', 'quiet-m-boot', {
      initialization: { dataSecretCreated: true },
      dataSecretName: 'quiet-m-data',
    });
    await h.setStatus('GenericInfrastructureMachine', 'quiet-m-infra', {
      initialization: { provisioned: true },
    });
    await h.createNode(`${h.namespace}-quiet-m`, providerID());

    const cluster = await eventually('the Cluster Available', async () => {
      const c = await getCluster();
      return condition(c, 'Available')?.status === 'True' && c;
    });
    expect(cluster.status?.phase).toBe('Provisioned');
    const machine = await eventually('the Machine Running', async () => {
      const m = await getMachine();
      return m.status?.phase === 'Running' && condition(m, 'Ready')?.status === 'True' && m;
    });
    expect(machine.spec.bootstrap.dataSecretName).toBe('quiet-m-data');
    expect(machine.status?.nodeRef?.name).toBe(`${h.namespace}-quiet-m`);
  });

  it('puts a removed owner reference back on the next resync, with no event about it', async () => {
    await h
      .kind('GenericInfrastructureMachine')
      .mergePatch({ namespace: h.namespace, name: 'quiet-m-infra' }, { metadata: { ownerReferences: null } });
    await eventually('the controller reference back', async () => {
      const infra = await h
        .kind('GenericInfrastructureMachine')
        .get({ namespace: h.namespace, name: 'quiet-m-infra' });
      return infra.metadata?.ownerReferences?.some((r) => r.kind === 'Machine' && r.controller === true);
    });
  });

  it('writes nothing to a converged Cluster or Machine while resyncs keep reconciling them', async () => {
    // Let the last reconcile of the owner reference test settle, then take the versions.
    await new Promise((resolve) => setTimeout(resolve, 2 * SYNC_PERIOD_SECONDS * 1000));
    const versions = async () => ({
      clusters: (await h.clusters.list({ namespace: h.namespace })).items.map(
        (c) => c.metadata?.resourceVersion,
      ),
      machines: (await h.machines.list({ namespace: h.namespace })).items.map(
        (m) => m.metadata?.resourceVersion,
      ),
    });
    const before = await versions();
    const reconcilesBefore = reconciles();
    await new Promise((resolve) => setTimeout(resolve, QUIET_MS));
    expect(await versions()).toEqual(before);
    // The quiet period saw reconciles: resyncs ran and found nothing to write (half the expected count
    // leaves room for a loaded machine).
    expect(reconciles() - reconcilesBefore).toBeGreaterThanOrEqual(Math.floor(QUIET_MS / (SYNC_PERIOD_SECONDS * 1100)));
  });

  it('publishes the lifecycle events it owes once the bus is back', async () => {
    await nats.start();
    const lifecycle = await collectLifecycleEvents(nats.url, h.topology);
    try {
      await eventually(
        'the events of the outage',
        () =>
          ['cluster.created', 'cluster.provisioned', 'cluster.available'].every(
            (e) => lifecycle.named(e, 'quiet') === 1,
          ) && ['machine.provisioned', 'machine.running'].every((e) => lifecycle.named(e, 'quiet-m') === 1),
        30_000,
      );
    } finally {
      await lifecycle.close();
    }
  });

  function reconciles(): number {
    return h.service.context.controllers
      .status()
      .filter((c) => c.name === 'cluster' || c.name === 'machine')
      .reduce((sum, c) => sum + c.reconciles, 0);
  }
});
