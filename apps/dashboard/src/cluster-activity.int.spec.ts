import { randomUUID } from 'node:crypto';
import type { KubernetesObject } from '@kubernetes/client-node';
import { RESOURCES } from '@capstan/api';
import { createKubeClient, EVENTS_V1, microTime, type KubeClient } from '@capstan/kube';
import type { RunningService } from '@capstan/provider-kit';
import {
  adminApiRequest,
  createTestNamespace,
  eventually,
  installCapstanDefinitions,
  type TestNamespace,
} from '@capstan/testing';
import type { ClusterEventView } from './activity/cluster-kube-events.js';
import type { TimelineAnswer } from './api/cluster-activity.controller.js';
import type { MachineRow } from './machines/machine-row.js';
import type { TimelineStep } from './timeline/timeline-step.js';
import {
  CLUSTER_PAGE_RULES,
  cluster,
  createClusterTree,
  treeKindsServed,
  userToken,
} from './testing/dashboard-users.js';
import { openEventStream } from './testing/event-stream-reader.js';
import { MACHINE_PAGE_RULES } from './testing/machine-page-objects.js';
import { startTestDashboard } from './testing/start-test-dashboard.js';

// What happens to a Cluster, against the real API server and NATS: its Kubernetes Events read as the user, its hand-off
// timeline replayed from the event stream (real events, published with libs/events' publisher) for a user who may get
// the Cluster, and its page's live stream of Machines, Cluster and new steps.

describe("a Cluster's events, timeline and live page", () => {
  let mine: TestNamespace;
  let theirs: TestNamespace;
  let service: RunningService;
  let admin: KubeClient;
  let viewer: string;
  let outsider: string;

  beforeAll(async () => {
    [mine, theirs] = await Promise.all([
      createTestNamespace('dash-act'),
      createTestNamespace('dash-act-other'),
    ]);
    await installCapstanDefinitions(mine.kc);
    admin = createKubeClient(mine.kc);
    [viewer, outsider] = await Promise.all([
      userToken(mine.kc, mine.name, 'viewer', MACHINE_PAGE_RULES),
      userToken(mine.kc, theirs.name, 'outsider', [
        ...CLUSTER_PAGE_RULES,
        { apiGroups: [''], resources: ['events'], verbs: ['list'] },
      ]),
    ]);
    await createClusterTree(admin, mine.name, 'alpha');
    await admin.resource(RESOURCES.Cluster).create(cluster(mine.name, 'beta'));
    await treeKindsServed(admin, mine.name);
    service = await startTestDashboard(mine.name, 'dash-act');
  });
  afterAll(async () => {
    await service?.stop();
    await admin?.close();
    await Promise.all([mine?.delete(), theirs?.delete()]);
  });

  const get = (path: string, token?: string) =>
    adminApiRequest(service, path, { ...(token ? { token } : {}) });

  /** An events.k8s.io/v1 Event about `kind/name` of `namespace`, as a controller records it. */
  const recordEvent = (namespace: string, kind: string, name: string, reason: string, note: string) =>
    admin.resource(EVENTS_V1).create({
      apiVersion: 'events.k8s.io/v1',
      kind: 'Event',
      metadata: { generateName: `${name}-`, namespace },
      eventTime: microTime(),
      reportingController: 'capstan.dev/test',
      reportingInstance: 'test',
      action: 'Test',
      reason,
      type: reason === 'Failed' ? 'Warning' : 'Normal',
      regarding: { apiVersion: 'cluster.x-k8s.io/v1beta2', kind, name, namespace },
      note,
    } as KubernetesObject);

  it("lists the Events of the Cluster and its objects as the user (core/v1 for a `view`-like Role), never others'", async () => {
    await recordEvent(mine.name, 'Cluster', 'alpha', 'Provisioning', 'the Cluster is being provisioned');
    await recordEvent(mine.name, 'Machine', 'alpha-md-0-a1-w0', 'Failed', 'token=abcdef0123456789 leaked');
    await recordEvent(mine.name, 'SimMachine', 'alpha-cp-0', 'Provisioned', 'the server exists');
    await recordEvent(mine.name, 'Cluster', 'beta', 'Provisioning', 'not alpha');
    const answer = await get(`/dashboard/api/clusters/${mine.name}/alpha/events`, viewer);
    expect(answer.status).toBe(200);
    const { events } = answer.json<{ events: ClusterEventView[] }>();
    expect(events.map((e) => `${e.object.kind}/${e.object.name} ${e.reason}`).sort()).toEqual([
      'Cluster/alpha Provisioning',
      'Machine/alpha-md-0-a1-w0 Failed',
      'SimMachine/alpha-cp-0 Provisioned',
    ]);
    const failed = events.find((e) => e.reason === 'Failed')!;
    expect(failed).toMatchObject({ type: 'Warning', message: 'token=[redacted] leaked' });
    expect(failed.lastTime).toMatch(/^\d{4}-\d\d-\d\dT/);
    expect(answer.body).not.toContain('abcdef0123456789');

    const refused = await get(`/dashboard/api/clusters/${mine.name}/alpha/events`, outsider);
    expect(refused.status).toBe(403);
    expect(refused.json<{ message: string }>().message).toContain(
      `"system:serviceaccount:${theirs.name}:outsider" cannot get resource "clusters"`,
    );
  });

  /** Publishes an event of `clusterName` with the dashboard's own publisher (the test's topology). */
  const objectOf = (kind: string, name: string, apiGroup: string, namespace = mine.name) => ({
    object: { apiGroup, kind, namespace, name, uid: randomUUID() },
    generation: 1,
    resourceVersion: String(Date.now()),
  });

  it('replays the hand-off steps of the Cluster from the event stream, to a user who may get it', async () => {
    const { publisher, bus, topology } = service.context;
    await publisher.publish('bootstrap.data-secret-created', {
      ...objectOf('K3sConfig', 'alpha-md-0-a1-w0', 'bootstrap.capstan.dev'),
      clusterName: 'alpha',
      dataSecretName: 'alpha-md-0-a1-w0',
      machineName: 'alpha-md-0-a1-w0',
    });
    // Not a valid event: skipped, the replay goes on.
    await bus.js.publish(
      `${topology.root}.handoff.k3sconfig.${mine.name}.junk.data-secret-created`,
      'not json',
    );
    await publisher.publish('control-plane.initialized', {
      ...objectOf('K3sControlPlane', 'alpha', 'controlplane.capstan.dev'),
      clusterName: 'alpha',
    });
    // Another Cluster of the namespace, and the same name in another namespace: not alpha's.
    await publisher.publish('control-plane.initialized', {
      ...objectOf('K3sControlPlane', 'beta', 'controlplane.capstan.dev'),
      clusterName: 'beta',
    });
    await publisher.publish('control-plane.initialized', {
      ...objectOf('K3sControlPlane', 'alpha', 'controlplane.capstan.dev', theirs.name),
      clusterName: 'alpha',
    });
    await publisher.publish('machine.running', {
      ...objectOf('Machine', 'alpha-md-0-a1-w0', 'cluster.x-k8s.io'),
      clusterName: 'alpha',
      phase: 'Running',
      controlPlane: false,
      providerID: 'sim://alpha-md-0-a1-w0',
      nodeName: 'alpha-md-0-a1-w0',
    });
    const started = Date.now();
    const answer = await get(`/dashboard/api/clusters/${mine.name}/alpha/timeline`, viewer);
    // Bounded: the replay gives up after 3 s (the rest is the request).
    expect(Date.now() - started).toBeLessThan(5_000);
    const timeline = answer.json<TimelineAnswer>();
    expect(timeline.unavailable).toBeUndefined();
    expect(timeline.truncated).toBeUndefined();
    expect(timeline.steps.map(({ step, machine }) => ({ step, machine }))).toEqual([
      { step: 'bootstrap-data', machine: 'alpha-md-0-a1-w0' },
      { step: 'control-plane-initialized', machine: undefined },
      { step: 'node-ready', machine: 'alpha-md-0-a1-w0' },
    ]);
    expect(timeline.steps[2]).toMatchObject({
      type: 'dev.capstan.lifecycle.machine.running',
      object: { kind: 'Machine', name: 'alpha-md-0-a1-w0' },
    });
    expect(Date.parse(timeline.steps[0]!.time)).toBeGreaterThan(started - 60_000);

    const refused = await get(`/dashboard/api/clusters/${mine.name}/alpha/timeline`, outsider);
    expect(refused.status).toBe(403);
    expect(refused.json<{ message: string }>().message).toBe(
      `system:serviceaccount:${theirs.name}:outsider may not get clusters.cluster.x-k8s.io ${mine.name}/alpha`,
    );
  });

  it('streams the page live: its Machines coalesced, the Cluster, and new timeline steps', async () => {
    const refused = openEventStream(service, `/dashboard/api/clusters/${mine.name}/alpha/stream`, outsider);
    const stream = openEventStream(service, `/dashboard/api/clusters/${mine.name}/alpha/stream`, viewer);
    try {
      await eventually(() => refused.status() === 403 && refused.body().includes('may not get clusters'), {
        message: "the outsider's stream refused",
      });
      await eventually(() => stream.events.some((e) => e.event === 'machines'), {
        message: 'the first Machines',
      });
      expect(stream.events.map((e) => e.event).slice(0, 2)).toEqual(['cluster', 'machines']);
      const first = stream.events.find((e) => e.event === 'machines')!.data as { machines: MachineRow[] };
      expect(first.machines.map((m) => m.name)).toEqual(['alpha-cp-0', 'alpha-md-0-a1-w0']);

      const machines = admin.resource(RESOURCES.Machine);
      for (const phase of ['Provisioning', 'Provisioned', 'Running'])
        for (const name of ['alpha-cp-0', 'alpha-md-0-a1-w0'])
          await machines.patchStatus({ namespace: mine.name, name }, { phase });
      const latest = await eventually(
        () => {
          const sent = stream.events.filter((e) => e.event === 'machines');
          const rows = (sent.at(-1)!.data as { machines: MachineRow[] }).machines;
          return rows.every((m) => m.phase === 'Running') && sent;
        },
        { message: 'both Machines Running on the stream' },
      );
      // Six writes, a few sends: never two within the coalescing window.
      expect(latest.length).toBeLessThan(1 + 6);
      for (let i = 1; i < latest.length; i++)
        expect(latest[i]!.at - latest[i - 1]!.at).toBeGreaterThanOrEqual(200);

      await admin
        .resource(RESOURCES.Cluster)
        .mergePatch({ namespace: mine.name, name: 'alpha' }, { spec: { paused: true } });
      await eventually(
        () => stream.events.some((e) => e.event === 'cluster' && (e.data as { paused: boolean }).paused),
        { message: 'the paused Cluster on the stream' },
      );

      await service.context.publisher.publish('machine-plan.applied', {
        ...objectOf('Machine', 'alpha-cp-0', 'cluster.x-k8s.io'),
        clusterName: 'alpha',
        planSecretName: 'alpha-cp-0-machine-plan',
        checksum: 'a'.repeat(64),
        revision: 1,
      });
      const step = await eventually(
        () =>
          stream.events.find((e) => e.event === 'timeline')?.data as { steps: TimelineStep[] } | undefined,
        { message: 'the new step on the stream' },
      );
      expect(step.steps).toEqual([expect.objectContaining({ step: 'plan-applied', machine: 'alpha-cp-0' })]);
    } finally {
      refused.close();
      stream.close();
    }
  });
});
