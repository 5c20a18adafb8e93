import { RESOURCES, type Cluster, type EtcdSnapshot, type K3sControlPlane } from '@capstan/api';
import { SECRETS, type KubeClient } from '@capstan/kube';
import { InMemoryApiServer } from '@capstan/kube/testing';
import { inMemoryControllerHost, type InMemoryControllerHost } from '@capstan/provider-kit/testing';
import { eventually } from '@capstan/testing';
import { day2Controller } from './day2.controller.js';
import { EtcdCondition, SCHEDULED_AT_ANNOTATION } from './day2.reconciler.js';

// Scheduled snapshots and their retention, on the in-memory API server with a clock the test moves: the controller
// creates one Scheduled EtcdSnapshot per schedule time due, never two for one time, one for times missed while it was
// down, and deletes the oldest beyond the retention.
const NS = 'etcd-schedule';
const MINUTE = 60_000;

describe('the etcd operations controller: scheduled snapshots', () => {
  let server: InMemoryApiServer;
  let client: KubeClient;
  let host: InMemoryControllerHost;
  let now: Date;

  beforeEach(async () => {
    server = new InMemoryApiServer([
      RESOURCES.Cluster,
      RESOURCES.K3sControlPlane,
      RESOURCES.EtcdSnapshot,
      RESOURCES.Machine,
      SECRETS,
    ]);
    client = server.client({ fieldManager: 'test' });
    host = inMemoryControllerHost(client, { serviceOptions: { syncPeriodSeconds: 3600 } });
    now = new Date();
    day2Controller({ now: () => now }).register(host);
    await client.resource<Cluster>(RESOURCES.Cluster).create({
      apiVersion: RESOURCES.Cluster.apiVersion,
      kind: 'Cluster',
      metadata: { namespace: NS, name: 'demo' },
      spec: {
        controlPlaneRef: {
          apiGroup: RESOURCES.K3sControlPlane.group,
          kind: 'K3sControlPlane',
          name: 'demo-control-plane',
        },
      },
    } as Cluster);
    const kcp = await client.resource<K3sControlPlane>(RESOURCES.K3sControlPlane).create({
      apiVersion: RESOURCES.K3sControlPlane.apiVersion,
      kind: 'K3sControlPlane',
      metadata: { namespace: NS, name: 'demo-control-plane' },
      spec: {
        version: 'v1.34.4',
        machineTemplate: {
          spec: {
            infrastructureRef: {
              apiGroup: 'infrastructure.capstan.dev',
              kind: 'SimMachineTemplate',
              name: 'x',
            },
          },
        },
        etcd: { snapshotScheduleCron: '*/5 * * * *', snapshotRetention: 2 },
      },
    } as K3sControlPlane);
    await client
      .resource<K3sControlPlane>(RESOURCES.K3sControlPlane)
      .replaceStatus({ ...kcp, status: { initialization: { controlPlaneInitialized: true } } });
    await host.manager.start();
  });
  afterEach(async () => {
    await host.stop();
    await client.close();
  });

  const snapshots = async () =>
    (await client.resource<EtcdSnapshot>(RESOURCES.EtcdSnapshot).list({ namespace: NS })).items
      .filter((s) => !s.metadata.deletionTimestamp)
      .sort((a, b) =>
        a.metadata.annotations![SCHEDULED_AT_ANNOTATION]!.localeCompare(
          b.metadata.annotations![SCHEDULED_AT_ANNOTATION]!,
        ),
      );
  const settle = async (snapshot: EtcdSnapshot) =>
    client
      .resource<EtcdSnapshot>(RESOURCES.EtcdSnapshot)
      .patchStatus({ namespace: NS, name: snapshot.metadata.name! }, { phase: 'Succeeded' });
  const kcpNow = () =>
    client
      .resource<K3sControlPlane>(RESOURCES.K3sControlPlane)
      .get({ namespace: NS, name: 'demo-control-plane' });

  it('takes one snapshot per schedule time and keeps the newest as many as the retention says', async () => {
    // Nothing is due in the first five minutes: the condition says when the first one is.
    const scheduled = await eventually(async () =>
      (await kcpNow()).status?.conditions?.find((c) => c.type === EtcdCondition.SnapshotsScheduled),
    );
    expect(scheduled).toMatchObject({ status: 'True', reason: 'Scheduled' });
    expect(scheduled.message).toMatch(/^next snapshot at .*; keeping 2$/);
    expect(await snapshots()).toEqual([]);

    // Forty minutes later (the provider was down): one snapshot for the latest time due, not eight.
    now = new Date(now.getTime() + 40 * MINUTE);
    // The same schedule spelled another way: a new generation wakes the controller, as the provider's start would.
    await client
      .resource<K3sControlPlane>(RESOURCES.K3sControlPlane)
      .mergePatch(
        { namespace: NS, name: 'demo-control-plane' },
        { spec: { etcd: { snapshotScheduleCron: '0-59/5 * * * *' } } },
      );
    const first = await eventually(async () =>
      (await snapshots()).length === 1 ? (await snapshots())[0] : undefined,
    );
    expect(first.spec).toEqual({ clusterName: 'demo', trigger: 'Scheduled' });
    const firstAt = new Date(first.metadata.annotations![SCHEDULED_AT_ANNOTATION]!);
    expect(firstAt.getUTCMinutes() % 5).toBe(0);
    expect(now.getTime() - firstAt.getTime()).toBeLessThan(5 * MINUTE);
    expect(first.metadata.name).toBe(`demo-etcd-snapshot-${firstAt.getTime() / 1000}`);

    // Each later time makes the next one; once three are settled, the oldest goes (retention 2).
    for (let i = 2; i <= 4; i++) {
      now = new Date(now.getTime() + 5 * MINUTE);
      const newest = (await snapshots()).at(-1)!;
      await settle(newest);
      await eventually(async () =>
        (await snapshots()).some(
          (s) =>
            Date.parse(s.metadata.annotations![SCHEDULED_AT_ANNOTATION]!) >
            Date.parse(newest.metadata.annotations![SCHEDULED_AT_ANNOTATION]!),
        ),
      );
    }
    // Four taken: the fourth is still running; of the three settled the oldest (the first) was pruned.
    const left = await eventually(async () => {
      const all = await snapshots();
      return all.length === 3 && !all.some((s) => s.metadata.name === first.metadata.name) ? all : undefined;
    });
    expect(left.map((s) => s.status?.phase ?? 'Pending')).toEqual(['Succeeded', 'Succeeded', 'Pending']);
  });

  it('says which field of a schedule does not parse, and takes nothing', async () => {
    await client
      .resource<K3sControlPlane>(RESOURCES.K3sControlPlane)
      .mergePatch(
        { namespace: NS, name: 'demo-control-plane' },
        { spec: { etcd: { snapshotScheduleCron: '0 25 * * *' } } },
      );
    const condition = await eventually(async () => {
      const c = (await kcpNow()).status?.conditions?.find((c) => c.type === EtcdCondition.SnapshotsScheduled);
      return c?.reason === 'InvalidSchedule' ? c : undefined;
    });
    expect(condition.status).toBe('False');
    expect(condition.message).toBe('spec.etcd.snapshotScheduleCron: hour "25" is outside 0-23');
    now = new Date(now.getTime() + 24 * 60 * MINUTE);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(await snapshots()).toEqual([]);
  });
});
