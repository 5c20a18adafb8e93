import 'reflect-metadata';
import { X509Certificate } from 'node:crypto';
import { KubeConfig, type KubernetesObject, type V1Secret } from '@kubernetes/client-node';
import {
  ANNOTATIONS,
  K3S_INIT_SERVER_ANNOTATION,
  LABELS,
  RESOURCES,
  getCondition,
  type Cluster,
  type K3sConfig,
  type K3sControlPlane,
  type Machine,
} from '@capstan/api';
import { buildEventSubject, uniqueEventTopology } from '@capstan/events';
import {
  createKubeClient,
  getControllerOf,
  Informer,
  isNotFound,
  type KubeClient,
  type ResourceType,
} from '@capstan/kube';
import { keyPairFromSecretData, type ClusterCertificates } from '@capstan/pki';
import {
  defaultServiceOptions,
  startService,
  type RunningService,
  type ServiceDefinition,
} from '@capstan/provider-kit';
import {
  createTestNamespace,
  eventually,
  freePort,
  genericProviderKind,
  installCapstanDefinitions,
  installGenericProviderCrds,
  testKubeConfig,
  testNatsUrl,
  type TestNamespace,
} from '@capstan/testing';
import {
  CONTROL_PLANE_PROVIDER_SERVICE,
  controlPlaneProviderService,
  K3SCONTROLPLANE_CONTROLLER,
} from './control-plane-service.js';
import { CONTROL_PLANE_ANNOTATIONS } from './planning/annotations.js';
import { OWN_WRITE_RECHECK_MS } from './k3scontrolplane/k3scontrolplane.reconciler.js';
import { SECRETS } from './k3scontrolplane/secrets.js';
import { startWorkloadApiServer, type WorkloadApiServer } from './testing/workload-api-server.js';

/** Polls until `probe` yields a value (libs/testing's eventually, named by what it waits for). */
const until = <T>(
  what: string,
  probe: () => Promise<T | undefined | false> | T | undefined | false,
  timeoutMs = 30_000,
) => eventually(probe, { message: what, timeoutMs, intervalMs: 50 });

const asType = (k: { group: string; version: string; kind: string; plural: string }): ResourceType => ({
  ...k,
  namespaced: true,
});
const INFRA_TEMPLATE = asType(genericProviderKind('GenericInfrastructureMachineTemplate'));
const INFRA_MACHINE = asType(genericProviderKind('GenericInfrastructureMachine'));
/** Holds deleted machines until the test lets them go, as the core's machine finalizer would. */
const HOLD = 'test.capstan.dev/hold';

describe('control-plane-provider with a real API server, event bus and workload API server', () => {
  const topology = uniqueEventTopology('kcp');
  let ns: TestNamespace;
  let service: RunningService;
  let client: KubeClient;
  let workload: WorkloadApiServer | undefined;
  let port: number;
  let watched: Informer<Machine>;
  /** Live and deleting machine counts after every machine event the test saw. */
  const history: { live: number; deleting: number }[] = [];
  const finished: string[] = [];

  const kcpKey = () => `${ns.name}/demo-cp`;
  const machines = () => client.resource<Machine>(RESOURCES.Machine);
  const kcps = () => client.resource<K3sControlPlane>(RESOURCES.K3sControlPlane);
  const secrets = () => client.resource<V1Secret>(SECRETS);
  const getKcp = () => kcps().get({ namespace: ns.name, name: 'demo-cp' });
  const list = async () => (await machines().list({ namespace: ns.name })).items;
  const live = async () => (await list()).filter((m) => !m.metadata.deletionTimestamp);
  const getSecret = async (name: string) => {
    try {
      return await secrets().get({ namespace: ns.name, name });
    } catch (error) {
      if (isNotFound(error)) return undefined;
      throw error;
    }
  };
  const publishedCount = async (event: string) => {
    const subject = buildEventSubject(
      { source: 'handoff', kind: 'K3sControlPlane', namespace: ns.name, name: 'demo-cp', event },
      topology.root,
    );
    const info = await (
      await service.context.bus.jsm()
    ).streams.info(topology.stream, { subjects_filter: subject });
    return info.state.subjects?.[subject] ?? 0;
  };

  const observed: ServiceDefinition = {
    ...controlPlaneProviderService,
    setup: (context) => {
      // A reconcile that only waited for the cache to show its own last write did nothing: not counted.
      context.controllers.onReconciled(({ key, result }) => {
        if (result?.requeueAfter !== OWN_WRITE_RECHECK_MS) finished.push(key);
      });
      return controlPlaneProviderService.setup(context);
    },
  };
  /** Lets the control plane reconcile twice more from the current state: whatever it would do, it has done. */
  const settle = async () => {
    for (let i = 0; i < 2; i++) {
      const before = finished.filter((k) => k === kcpKey()).length;
      service.context.controllers.enqueue(K3SCONTROLPLANE_CONTROLLER, kcpKey());
      await until('a reconcile', () => finished.filter((k) => k === kcpKey()).length > before);
    }
  };

  /** Plays the core: the machine got its Node and is Ready (and held by a finalizer, as the core's is). */
  async function markReady(name: string, ready = true) {
    const ref = { namespace: ns.name, name };
    await machines().mergePatch(ref, { metadata: { finalizers: [HOLD] } });
    const condition = (type: string, status: boolean) => ({
      type,
      status: status ? 'True' : 'False',
      reason: status ? type : `Not${type}`,
      message: '',
      lastTransitionTime: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
    });
    await machines().patchStatus(ref, {
      nodeRef: { name: `node-${name}` },
      conditions: [condition('Ready', ready), condition('Available', ready)],
    });
  }
  const release = (name: string) =>
    machines().mergePatch({ namespace: ns.name, name }, { metadata: { finalizers: null } });
  const newestNotReady = async () =>
    (await live()).find((m) => getCondition(m.status?.conditions, 'Ready')?.status !== 'True');

  beforeAll(async () => {
    const kc = testKubeConfig();
    await installCapstanDefinitions(kc);
    await installGenericProviderCrds(kc);
    client = createKubeClient(kc);
    ns = await createTestNamespace('kcp');
    port = await freePort();
    service = await startService(observed, {
      ...defaultServiceOptions(CONTROL_PLANE_PROVIDER_SERVICE, {}),
      kubeconfig: process.env['CAPSTAN_TEST_KUBECONFIG'],
      natsUrl: testNatsUrl(),
      httpHost: '127.0.0.1',
      httpPort: 0,
      adminPort: 0,
      namespace: ns.name,
      subjectRoot: topology.root,
      streamName: topology.stream,
      logLevel: 'silent',
    });
    watched = new Informer<Machine>(client, RESOURCES.Machine, { namespace: ns.name });
    const record = () => {
      const all = watched.list(ns.name);
      history.push({
        live: all.filter((m) => !m.metadata.deletionTimestamp).length,
        deleting: all.filter((m) => m.metadata.deletionTimestamp).length,
      });
    };
    watched.addEventHandler({ onAdd: record, onUpdate: record, onDelete: record });
    watched.start();
    await watched.waitForSync();

    await client.resource(INFRA_TEMPLATE).create({
      apiVersion: `${INFRA_TEMPLATE.group}/${INFRA_TEMPLATE.version}`,
      kind: INFRA_TEMPLATE.kind,
      metadata: { name: 'cp-template', namespace: ns.name },
      spec: { template: { metadata: { labels: { tier: 'control-plane' } }, spec: { flavor: 'small' } } },
    } as KubernetesObject);
    const cluster = await client.resource<Cluster>(RESOURCES.Cluster).create({
      apiVersion: RESOURCES.Cluster.apiVersion,
      kind: 'Cluster',
      metadata: { name: 'demo', namespace: ns.name },
      spec: {
        controlPlaneEndpoint: { host: '127.0.0.1', port },
        controlPlaneRef: {
          apiGroup: RESOURCES.K3sControlPlane.group,
          kind: 'K3sControlPlane',
          name: 'demo-cp',
        },
      },
    });
    await client.resource<Cluster>(RESOURCES.Cluster).patchStatus(
      { namespace: ns.name, name: 'demo' },
      {
        initialization: { infrastructureProvisioned: true },
        failureDomains: [
          { name: 'fd-a', controlPlane: true },
          { name: 'fd-b', controlPlane: true },
          { name: 'fd-x', controlPlane: false },
        ],
      },
    );
    expect(cluster.metadata.uid).toBeDefined();
    await kcps().create({
      apiVersion: RESOURCES.K3sControlPlane.apiVersion,
      kind: 'K3sControlPlane',
      metadata: { name: 'demo-cp', namespace: ns.name, labels: { [LABELS.clusterName]: 'demo' } },
      spec: {
        replicas: 3,
        version: 'v1.31.4',
        machineTemplate: {
          metadata: { labels: { team: 'platform' } },
          spec: {
            infrastructureRef: {
              apiGroup: INFRA_TEMPLATE.group,
              kind: INFRA_TEMPLATE.kind,
              name: 'cp-template',
            },
          },
        },
        k3sConfigSpec: { serverConfig: { disableComponents: ['traefik'] } },
        remediation: { maxRetry: 2 },
      },
    });
  });

  afterAll(async () => {
    await workload?.stop();
    await watched?.stop();
    await service?.stop();
    await client?.close();
    await ns?.delete();
  });

  let certificates: ClusterCertificates;

  it('generates the cluster certificates and a kubeconfig whose client certificate chains to the client CA', async () => {
    const pairs = await until('the certificate secrets', async () => {
      const found = await Promise.all(
        ['ca', 'cca', 'proxy', 'etcd', 'sa'].map((p) => getSecret(`demo-${p}`)),
      );
      return found.every((s) => s !== undefined) ? (found as V1Secret[]) : undefined;
    });
    const kcp = await getKcp();
    for (const secret of pairs) {
      expect(secret.type).toBe('cluster.x-k8s.io/secret');
      expect(secret.metadata?.labels).toEqual({ [LABELS.clusterName]: 'demo' });
      expect(getControllerOf(secret)).toMatchObject({ kind: 'K3sControlPlane', uid: kcp.metadata.uid });
    }
    const [ca, cca, proxy, etcd, sa] = pairs.map((s) => keyPairFromSecretData(s.metadata!.name!, s.data));
    certificates = { ca: ca!, cca: cca!, proxy: proxy!, etcd: etcd!, sa: sa! };

    const secret = await until('the kubeconfig secret', () => getSecret('demo-kubeconfig'));
    expect(getControllerOf(secret)).toMatchObject({ kind: 'K3sControlPlane', uid: kcp.metadata.uid });
    expect(secret.type).toBe('cluster.x-k8s.io/secret');
    const kc = new KubeConfig();
    kc.loadFromString(Buffer.from(secret.data!['value']!, 'base64').toString('utf8'));
    expect(kc.getCurrentCluster()?.server).toBe(`https://127.0.0.1:${port}`);
    expect(Buffer.from(kc.getCurrentCluster()!.caData!, 'base64').toString()).toBe(certificates.ca.certPem);
    const clientCert = new X509Certificate(Buffer.from(kc.getCurrentUser()!.certData!, 'base64'));
    expect(clientCert.subject).toContain('CN=kubernetes-admin');
    expect(clientCert.verify(new X509Certificate(certificates.cca.certPem).publicKey)).toBe(true);
    expect(clientCert.verify(new X509Certificate(certificates.ca.certPem).publicKey)).toBe(false);
  });

  it('creates only the init machine until the workload API answers', async () => {
    await until('the first machine', async () => (await list()).length > 0);
    await settle();
    const [first, ...others] = await list();
    expect(others).toHaveLength(0);
    const kcp = await getKcp();
    expect(first!.metadata.labels).toMatchObject({
      [LABELS.clusterName]: 'demo',
      [LABELS.controlPlane]: '',
      [LABELS.controlPlaneName]: 'demo-cp',
      team: 'platform',
    });
    expect(getControllerOf(first!)).toMatchObject({ kind: 'K3sControlPlane', uid: kcp.metadata.uid });
    expect(first!.spec).toMatchObject({
      clusterName: 'demo',
      version: 'v1.31.4',
      failureDomain: 'fd-a',
      bootstrap: {
        configRef: { apiGroup: 'bootstrap.capstan.dev', kind: 'K3sConfig', name: first!.metadata.name },
      },
      infrastructureRef: {
        apiGroup: INFRA_MACHINE.group,
        kind: INFRA_MACHINE.kind,
        name: first!.metadata.name,
      },
    });
    const config = await client
      .resource<K3sConfig>(RESOURCES.K3sConfig)
      .get({ namespace: ns.name, name: first!.metadata.name! });
    expect(config.metadata.annotations?.[K3S_INIT_SERVER_ANNOTATION]).toBe('true');
    expect(config.spec).toEqual({ serverConfig: { disableComponents: ['traefik'] } });
    expect(config.metadata.ownerReferences).toEqual([
      expect.objectContaining({ kind: 'K3sControlPlane', uid: kcp.metadata.uid }),
    ]);
    const infra = (await client
      .resource(INFRA_MACHINE)
      .get({ namespace: ns.name, name: first!.metadata.name! })) as KubernetesObject & { spec?: unknown };
    expect(infra.spec).toEqual({ flavor: 'small' });
    expect(infra.metadata?.labels).toMatchObject({ tier: 'control-plane', [LABELS.controlPlane]: '' });
    expect(infra.metadata?.annotations).toMatchObject({
      [ANNOTATIONS.clonedFromName]: 'cp-template',
      [ANNOTATIONS.clonedFromGroupKind]: `${INFRA_TEMPLATE.kind}.${INFRA_TEMPLATE.group}`,
    });
    expect(kcp.status).toMatchObject({
      replicas: 1,
      selector: 'cluster.x-k8s.io/cluster-name=demo,cluster.x-k8s.io/control-plane',
    });
    expect(kcp.status?.initialization).toBeUndefined();
    expect(getCondition(kcp.status?.conditions, 'ScalingUp')).toMatchObject({ status: 'True' });
    expect(getCondition(kcp.status?.conditions, 'Initialized')).toMatchObject({ status: 'False' });

    await markReady(first!.metadata.name!);
    await settle();
    expect(await list()).toHaveLength(1);
  });

  it('is initialized once the workload API answers through the kubeconfig, then joins one machine at a time', async () => {
    workload = await startWorkloadApiServer('demo', certificates, { host: '127.0.0.1', port });
    await until(
      'initialization',
      async () => (await getKcp()).status?.initialization?.controlPlaneInitialized === true,
    );
    // Published right after the status write that shows it.
    await until('one initialized event', async () => (await publishedCount('initialized')) === 1);

    for (const expected of [2, 3]) {
      const joiner = await until(`machine ${expected}`, async () =>
        (await live()).length === expected ? newestNotReady() : undefined,
      );
      await settle();
      expect(await live()).toHaveLength(expected);
      const config = await client
        .resource<K3sConfig>(RESOURCES.K3sConfig)
        .get({ namespace: ns.name, name: joiner.metadata.name! });
      expect(config.metadata.annotations?.[K3S_INIT_SERVER_ANNOTATION]).toBeUndefined();
      await markReady(joiner.metadata.name!);
    }
    const kcp = await until('three ready replicas', async () => {
      const k = await getKcp();
      return k.status?.readyReplicas === 3 &&
        getCondition(k.status.conditions, 'Available')?.status === 'True'
        ? k
        : undefined;
    });
    expect(kcp.status).toMatchObject({
      replicas: 3,
      availableReplicas: 3,
      upToDateReplicas: 3,
      versions: [{ version: 'v1.31.4', replicas: 3 }],
    });
    expect(getCondition(kcp.status?.conditions, 'ScalingUp')).toMatchObject({ status: 'False' });
    expect((await list()).map((m) => m.spec.failureDomain).sort()).toEqual(['fd-a', 'fd-a', 'fd-b']);
    await until(
      'available and scaled events',
      async () => (await publishedCount('available')) === 1 && (await publishedCount('scaled')) === 1,
    );
    expect(Math.max(...history.map((h) => h.live))).toBe(3);
    await settle();
    expect(await publishedCount('initialized')).toBe(1);
  });

  it('remediates an unhealthy machine within quorum and marks its replacement', async () => {
    const [victim] = await list();
    const name = victim!.metadata.name!;
    await machines().patchStatus(
      { namespace: ns.name, name },
      {
        conditions: [
          ...(victim!.status?.conditions ?? []).filter((c) => c.type !== 'Ready'),
          {
            type: 'Ready',
            status: 'False',
            reason: 'NotReady',
            message: '',
            lastTransitionTime: '2026-01-01T00:00:00Z',
          },
          {
            type: 'OwnerRemediated',
            status: 'False',
            reason: 'WaitingForRemediation',
            message: '',
            lastTransitionTime: '2026-01-01T00:00:00Z',
          },
        ],
      },
    );
    await until(
      'the unhealthy machine deleted',
      async () => (await machines().get({ namespace: ns.name, name })).metadata.deletionTimestamp,
    );
    await settle();
    const kcp = await getKcp();
    expect(kcp.status?.lastRemediation).toMatchObject({ machine: name, retryCount: 0 });
    expect(getCondition(kcp.status?.conditions, 'Remediating')).toMatchObject({ status: 'True' });
    expect(await live()).toHaveLength(2);
    await release(name);
    const replacement = await until('the replacement', async () =>
      (await live()).length === 3 ? newestNotReady() : undefined,
    );
    expect(
      JSON.parse(replacement.metadata.annotations![CONTROL_PLANE_ANNOTATIONS.remediationFor]!),
    ).toMatchObject({ machine: name, retryCount: 0 });
    // Cleared right after the replacement was created.
    await until(
      'the in-progress remediation cleared',
      async () => !(await getKcp()).metadata.annotations?.[CONTROL_PLANE_ANNOTATIONS.remediationInProgress],
    );
    await markReady(replacement.metadata.name!);
    await until('three ready replicas again', async () => (await getKcp()).status?.readyReplicas === 3);
  });

  it('rolls out a version change by surging one machine and deleting one old machine at a time', async () => {
    const start = history.length;
    // Before: every machine UpToDate (the control plane owns that condition on its Machines, as upstream's KCP).
    await until('UpToDate True on every machine', async () =>
      (await live()).every((m) => getCondition(m.status?.conditions, 'UpToDate')?.status === 'True'),
    );
    await kcps().mergePatch({ namespace: ns.name, name: 'demo-cp' }, { spec: { version: 'v1.32.0' } });
    const outdated = await until('an old machine not UpToDate, saying why', async () => {
      const c = (await live())
        .map((m) => getCondition(m.status?.conditions, 'UpToDate'))
        .find((x) => x?.status === 'False');
      return c;
    });
    expect(outdated).toMatchObject({ reason: 'NotUpToDate' });
    expect(outdated.message).toMatch(/v1\.32\.0/);
    await until(
      'RollingOut',
      async () => getCondition((await getKcp()).status?.conditions, 'RollingOut')?.status === 'True',
    );
    for (let step = 0; step < 3; step++) {
      const surged = await until('a surged machine', async () =>
        (await live()).find((m) => m.spec.version === 'v1.32.0' && !m.metadata.finalizers),
      );
      await settle();
      expect((await list()).filter((m) => m.metadata.deletionTimestamp)).toHaveLength(0);
      await markReady(surged.metadata.name!);
      const old = await until('an old machine deleted', async () =>
        (await list()).find((m) => m.metadata.deletionTimestamp),
      );
      expect(old.spec.version).toBe('v1.31.4');
      await settle();
      expect((await list()).filter((m) => m.metadata.deletionTimestamp)).toHaveLength(1);
      await release(old.metadata.name!);
      await until(
        'the old machine gone',
        async () => !(await list()).some((m) => m.metadata.name === old.metadata.name),
      );
    }
    const kcp = await until('the rollout finished', async () => {
      const k = await getKcp();
      return getCondition(k.status?.conditions, 'RollingOut')?.status === 'False' &&
        k.status?.readyReplicas === 3
        ? k
        : undefined;
    });
    expect(kcp.status?.versions).toEqual([{ version: 'v1.32.0', replicas: 3 }]);
    const during = history.slice(start);
    expect(Math.max(...during.map((h) => h.live))).toBe(4);
    expect(Math.max(...during.map((h) => h.deleting))).toBe(1);
  });

  it('changes machine template labels, annotations and deletion timeouts in place, without a rollout', async () => {
    const before = (await live()).map((m) => m.metadata.name).sort();
    await kcps().mergePatch(
      { namespace: ns.name, name: 'demo-cp' },
      {
        spec: {
          machineTemplate: {
            metadata: { labels: { team: 'infra' }, annotations: { owner: 'sre' } },
            spec: { deletion: { nodeDrainTimeoutSeconds: 60 } },
          },
        },
      },
    );
    await until('the template fields on every machine', async () =>
      (await live()).every(
        (m) =>
          m.metadata.labels?.['team'] === 'infra' &&
          m.metadata.annotations?.['owner'] === 'sre' &&
          m.spec.deletion?.nodeDrainTimeoutSeconds === 60,
      ),
    );
    await kcps().mergePatch(
      { namespace: ns.name, name: 'demo-cp' },
      { spec: { machineTemplate: { metadata: { labels: { team: null } } } } },
    );
    await until('the dropped label gone from every machine', async () =>
      (await live()).every((m) => !('team' in (m.metadata.labels ?? {}))),
    );
    await settle();
    expect((await live()).map((m) => m.metadata.name).sort()).toEqual(before);
    expect((await live()).every((m) => m.metadata.labels?.[LABELS.controlPlaneName] === 'demo-cp')).toBe(
      true,
    );
    expect(getCondition((await getKcp()).status?.conditions, 'RollingOut')).toMatchObject({
      status: 'False',
    });
  });

  it('scales down one machine at a time and never below a healthy majority', async () => {
    const [a, b, c] = await list();
    await markReady(b!.metadata.name!, false);
    await markReady(c!.metadata.name!, false);
    await kcps().mergePatch({ namespace: ns.name, name: 'demo-cp' }, { spec: { replicas: 1 } });
    await until(
      'ScalingDown',
      async () => getCondition((await getKcp()).status?.conditions, 'ScalingDown')?.status === 'True',
    );
    await settle();
    // Removing an unready machine would leave one healthy of two: no quorum, nothing is deleted.
    expect((await list()).filter((m) => m.metadata.deletionTimestamp)).toHaveLength(0);
    expect(getCondition((await getKcp()).status?.conditions, 'ScalingDown')?.message).toContain(
      'Waiting for machine(s)',
    );

    await markReady(c!.metadata.name!);
    const first = await until('the unready machine deleted first', async () =>
      (await list()).find((m) => m.metadata.deletionTimestamp),
    );
    expect(first.metadata.name).toBe(b!.metadata.name);
    await settle();
    expect((await list()).filter((m) => m.metadata.deletionTimestamp)).toHaveLength(1);
    await release(b!.metadata.name!);
    const second = await until('the next machine deleted', async () =>
      (await list()).find((m) => m.metadata.deletionTimestamp),
    );
    expect([a!.metadata.name, c!.metadata.name]).toContain(second.metadata.name);
    await release(second.metadata.name!);
    const kcp = await until('one replica', async () => {
      const k = await getKcp();
      return k.status?.replicas === 1 && getCondition(k.status.conditions, 'ScalingDown')?.status === 'False'
        ? k
        : undefined;
    });
    expect(getCondition(kcp.status?.conditions, 'Available')).toMatchObject({ status: 'True' });
    await settle();
    expect(await list()).toHaveLength(1);
  });

  it('deletes its machines and lets go of the K3sControlPlane when deleted', async () => {
    await kcps().delete({ namespace: ns.name, name: 'demo-cp' });
    const [last] = await until('the last machine deleting', async () => {
      const all = await list();
      return all.every((m) => m.metadata.deletionTimestamp) ? all : undefined;
    });
    expect((await getKcp()).metadata.finalizers).toContain('k3scontrolplane.controlplane.capstan.dev');
    await release(last!.metadata.name!);
    await until('the K3sControlPlane gone', async () => {
      try {
        await getKcp();
        return false;
      } catch (error) {
        return isNotFound(error);
      }
    });
  });
});
