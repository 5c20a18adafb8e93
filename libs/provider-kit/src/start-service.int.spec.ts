import 'reflect-metadata';
import { randomUUID } from 'node:crypto';
import { AuthorizationV1Api, CoreV1Api, RbacAuthorizationV1Api } from '@kubernetes/client-node';
import { Global, Module } from '@nestjs/common';
import { RESOURCES, type Cluster } from '@capstan/api';
import { uniqueEventTopology } from '@capstan/events';
import { ADMIN_API_AUDIENCE, ADMIN_AUTH_CACHE, ADMIN_AUTH_CLOCK } from '@capstan/observability';
import {
  adminApiRequest,
  clusterAdminToken,
  createTestNamespace,
  installCapstanDefinitions,
  type TestNamespace,
} from '@capstan/testing';
import { CONFIG_MAPS } from '@capstan/kube';
import { type ServiceDefinition } from './service-definition.js';
import { testServiceOptions } from './testing/test-service-options.js';
import { startService, type RunningService } from './start-service.js';
import { eventHandlerModule } from './reconciler-kit/event-handlers.js';

const reconciled: string[] = [];

// Generated from the catalogue: one handler for `bootstrap.data-secret-created`, enqueueing its ConfigMap.
const HandoffModule = eventHandlerModule('KitHandoffListener', {
  'bootstrap.data-secret-created': (event) => [
    { controller: 'configmap', key: `${event.data.object.namespace}/${event.data.object.name}` },
  ],
});

// The admin guard's caches expire by this clock: a test moves it past a TTL instead of sleeping.
let clockOffsetMs = 0;
@Global()
@Module({
  providers: [{ provide: ADMIN_AUTH_CLOCK, useValue: () => Date.now() + clockOffsetMs }],
  exports: [ADMIN_AUTH_CLOCK],
})
class TestClockModule {}

describe('startService', () => {
  let ns: TestNamespace;
  let service: RunningService;
  const topology = uniqueEventTopology('kit');
  let adminToken: string;

  const definition: ServiceDefinition = {
    name: 'kit-test',
    consumes: 'handoff.>',
    modules: [HandoffModule, TestClockModule],
    setup(context) {
      context.controllers.add({
        name: 'configmap',
        for: CONFIG_MAPS,
        reconcile: (key) => {
          reconciled.push(key);
          if (key.endsWith('/broken')) throw new Error('cannot reconcile broken');
        },
      });
    },
  };

  beforeAll(async () => {
    ns = await createTestNamespace('kit');
    await installCapstanDefinitions(ns.kc);
    adminToken = await clusterAdminToken(ns.kc, ADMIN_API_AUDIENCE);
    service = await startService(
      definition,
      testServiceOptions('kit-test', { namespace: ns.name, topology }),
    );
  });
  afterAll(async () => {
    await service?.stop();
    await ns.delete();
  });

  const eventually = async (probe: () => boolean | Promise<boolean>, timeoutMs = 15_000) => {
    const deadline = Date.now() + timeoutMs;
    while (!(await probe())) {
      if (Date.now() > deadline) throw new Error('condition not met in time');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  };

  it('serves health, readiness, metrics and the OpenAPI page', async () => {
    expect((await fetch(`${service.url}/healthz`)).status).toBe(200);
    await eventually(async () => (await fetch(`${service.url}/readyz`)).status === 200);
    expect(await (await fetch(`${service.url}/metrics`)).text()).toContain('workqueue_depth');
    const openapi = (await (await fetch(`${service.url}/openapi.json`)).json()) as {
      paths: Record<string, unknown>;
    };
    expect(Object.keys(openapi.paths)).toContain('/admin/controllers');
  });

  it('reconciles objects of its controllers and keys named by hand-off events', async () => {
    const core = ns.kc.makeApiClient(CoreV1Api);
    await core.createNamespacedConfigMap({ namespace: ns.name, body: { metadata: { name: 'watched' } } });
    await eventually(() => reconciled.includes(`${ns.name}/watched`));

    const before = reconciled.filter((k) => k === `${ns.name}/watched`).length;
    await service.context.publisher.publish('bootstrap.data-secret-created', {
      object: {
        apiGroup: 'bootstrap.capstan.dev',
        kind: 'K3sConfig',
        namespace: ns.name,
        name: 'watched',
        uid: randomUUID(),
      },
      generation: 1,
      resourceVersion: '1',
      clusterName: 'demo',
      dataSecretName: 'watched-bootstrap',
    });
    await eventually(() => reconciled.filter((k) => k === `${ns.name}/watched`).length > before);
  });

  it('shows controllers and their last error on the admin API, to an authorised token only', async () => {
    const core = ns.kc.makeApiClient(CoreV1Api);
    await core.createNamespacedConfigMap({ namespace: ns.name, body: { metadata: { name: 'broken' } } });
    await eventually(() => reconciled.includes(`${ns.name}/broken`));
    expect((await adminApiRequest(service, '/admin/controllers')).status).toBe(401);
    // Served over TLS only: the plain port, where health and metrics answer, has no admin API.
    const plain = await fetch(`${service.url}/admin/controllers`, {
      headers: { authorization: `Bearer ${adminToken}` },
    });
    expect(plain.status).toBe(404);
    expect(await plain.text()).toContain('HTTPS');
    const admin = (path: string, method: 'GET' | 'POST' = 'GET') =>
      adminApiRequest(service, path, { token: adminToken, method });
    await eventually(async () => {
      const body = (await admin('/admin/controllers')).json<{
        leader: boolean;
        controllers: { name: string; failures: number; lastError?: { key: string; message: string } }[];
      }>();
      const configmap = body.controllers.find((c) => c.name === 'configmap');
      return (
        body.leader && (configmap?.failures ?? 0) > 0 && configmap?.lastError?.key === `${ns.name}/broken`
      );
    });
    // Readiness in detail is for an authorised token only; /readyz says ready or not.
    expect((await adminApiRequest(service, '/admin/readiness')).status).toBe(401);
    expect((await admin('/admin/readiness')).json()).toMatchObject({
      ready: true,
      checks: { caches: { ready: true } },
    });
    expect(await (await fetch(`${service.url}/readyz`)).json()).toEqual({ status: 'ok' });
    const resync = await admin('/admin/resync', 'POST');
    expect(resync.status).toBe(201);
    expect(resync.json<{ enqueued: number }>().enqueued).toBeGreaterThanOrEqual(2);
  });

  it('pauses and resumes a Cluster only for a caller allowed to patch that Cluster', async () => {
    const core = ns.kc.makeApiClient(CoreV1Api);
    const rbac = ns.kc.makeApiClient(RbacAuthorizationV1Api);
    const clusters = service.context.client.resource<Cluster>(RESOURCES.Cluster);
    await clusters.create({
      apiVersion: RESOURCES.Cluster.apiVersion,
      kind: RESOURCES.Cluster.kind,
      metadata: { name: 'demo', namespace: ns.name },
      spec: {},
    } as Cluster);
    await core.createNamespacedServiceAccount({
      namespace: ns.name,
      body: { metadata: { name: 'operator' } },
    });
    const token = (
      await core.createNamespacedServiceAccountToken({
        namespace: ns.name,
        name: 'operator',
        body: { spec: { audiences: [ADMIN_API_AUDIENCE], expirationSeconds: 600 } },
      })
    ).status!.token;
    // Everything on the admin API, nothing on Clusters.
    const adminRole = `${ns.name}-operator-admin`;
    await rbac.createClusterRole({
      body: {
        metadata: { name: adminRole },
        rules: [{ nonResourceURLs: ['/admin/*'], verbs: ['post', 'get'] }],
      },
    });
    await rbac.createClusterRoleBinding({
      body: {
        metadata: { name: adminRole },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: adminRole },
        subjects: [{ kind: 'ServiceAccount', name: 'operator', namespace: ns.name }],
      },
    });
    const act = (action: 'pause' | 'resume') =>
      adminApiRequest(service, `/admin/clusters/${ns.name}/demo/${action}`, { method: 'POST', token });
    try {
      const refused = await act('pause');
      expect(refused.status).toBe(403);
      const message = refused.body;
      expect(message).toContain(`patch clusters.cluster.x-k8s.io ${ns.name}/demo`);
      expect(message).not.toContain(token);
      expect((await clusters.get({ namespace: ns.name, name: 'demo' })).spec?.paused).toBeUndefined();

      await rbac.createNamespacedRole({
        namespace: ns.name,
        body: {
          metadata: { name: 'cluster-patcher' },
          rules: [{ apiGroups: ['cluster.x-k8s.io'], resources: ['clusters'], verbs: ['patch'] }],
        },
      });
      await rbac.createNamespacedRoleBinding({
        namespace: ns.name,
        body: {
          metadata: { name: 'cluster-patcher' },
          roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'cluster-patcher' },
          subjects: [{ kind: 'ServiceAccount', name: 'operator', namespace: ns.name }],
        },
      });
      // The API server's authorizer learns of a new binding from its informers, a moment after it is stored.
      const authorization = ns.kc.makeApiClient(AuthorizationV1Api);
      await eventually(
        async () =>
          (
            await authorization.createSubjectAccessReview({
              body: {
                spec: {
                  user: `system:serviceaccount:${ns.name}:operator`,
                  resourceAttributes: {
                    group: 'cluster.x-k8s.io',
                    resource: 'clusters',
                    verb: 'patch',
                    namespace: ns.name,
                    name: 'demo',
                  },
                },
              },
            })
          ).status?.allowed === true,
      );
      // The guard remembers its denial above briefly; past that the new Role counts.
      clockOffsetMs += ADMIN_AUTH_CACHE.deniedMs;
      const paused = await act('pause');
      expect(paused.status).toBe(201);
      expect(paused.json()).toEqual({ paused: true });
      expect((await clusters.get({ namespace: ns.name, name: 'demo' })).spec?.paused).toBe(true);
      expect((await act('resume')).status).toBe(201);
      expect((await clusters.get({ namespace: ns.name, name: 'demo' })).spec?.paused).toBe(false);
    } finally {
      await rbac.deleteClusterRoleBinding({ name: adminRole });
      await rbac.deleteClusterRole({ name: adminRole });
    }
  });
});
