import 'reflect-metadata';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { CoreV1Api } from '@kubernetes/client-node';
import { uniqueEventTopology } from '@capstan/events';
import { createTestNamespace, type TestNamespace } from '@capstan/testing';
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

describe('startService', () => {
  let ns: TestNamespace;
  let service: RunningService;
  const topology = uniqueEventTopology('kit');
  const kubeconfigPath = process.env['CAPSTAN_TEST_KUBECONFIG']!;
  const adminToken = (
    JSON.parse(readFileSync(kubeconfigPath, 'utf8')) as { users: { user: { token: string } }[] }
  ).users[0]!.user.token;

  const definition: ServiceDefinition = {
    name: 'kit-test',
    consumes: 'handoff.>',
    modules: [HandoffModule],
    setup(context) {
      context.addController({
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
    expect((await fetch(`${service.url}/admin/controllers`)).status).toBe(401);
    const auth = { headers: { authorization: `Bearer ${adminToken}` } };
    await eventually(async () => {
      const body = (await (await fetch(`${service.url}/admin/controllers`, auth)).json()) as {
        leader: boolean;
        controllers: { name: string; failures: number; lastError?: { key: string; message: string } }[];
      };
      const configmap = body.controllers.find((c) => c.name === 'configmap');
      return (
        body.leader && (configmap?.failures ?? 0) > 0 && configmap?.lastError?.key === `${ns.name}/broken`
      );
    });
    // Readiness in detail is for an authorised token only; /readyz says ready or not.
    expect((await fetch(`${service.url}/admin/readiness`)).status).toBe(401);
    expect(await (await fetch(`${service.url}/admin/readiness`, auth)).json()).toMatchObject({
      ready: true,
      checks: { caches: { ready: true } },
    });
    expect(await (await fetch(`${service.url}/readyz`)).json()).toEqual({ status: 'ok' });
    const resync = await fetch(`${service.url}/admin/resync`, { method: 'POST', ...auth });
    expect(resync.status).toBe(201);
    expect(((await resync.json()) as { enqueued: number }).enqueued).toBeGreaterThanOrEqual(2);
  });
});
