import 'reflect-metadata';
import {
  AuthenticationV1Api,
  AuthorizationV1Api,
  CoreV1Api,
  type KubeConfig,
  RbacAuthorizationV1Api,
} from '@kubernetes/client-node';
import { Controller, Get, Module, UseGuards, type INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Counter, Registry } from 'prom-client';
import { createTestNamespace, type TestNamespace } from '@capstan/testing';
import { ACCESS_REVIEWS, type AccessReviews } from './access-reviews.js';
import { KubernetesAdminGuard } from './admin-auth.guard.js';
import { Readiness } from './readiness.js';
import { ServiceEndpointsModule } from './service-endpoints.js';

@Controller('admin')
@UseGuards(KubernetesAdminGuard)
class AdminController {
  @Get('controllers')
  controllers(): { controllers: string[] } {
    return { controllers: ['cluster'] };
  }
}

/** The reviews over client-node's generated clients: the services use their own client (libs/provider-kit). */
function clientNodeReviews(kc: KubeConfig): AccessReviews {
  const authentication = kc.makeApiClient(AuthenticationV1Api);
  const authorization = kc.makeApiClient(AuthorizationV1Api);
  return {
    reviewToken: async (token) =>
      (await authentication.createTokenReview({ body: { spec: { token } } })).status,
    reviewAccess: async (spec) => (await authorization.createSubjectAccessReview({ body: { spec } })).status,
  };
}

describe('service endpoints and admin authorization', () => {
  let ns: TestNamespace;
  let app: INestApplication;
  let base: string;
  let natsUp = false;
  const registry = new Registry();
  new Counter({ name: 'capstan_test_total', help: 'test counter', registers: [registry] }).inc(3);

  beforeAll(async () => {
    ns = await createTestNamespace('obs');
    const readiness = new Readiness();
    readiness.register({
      name: 'nats',
      check: () => ({ ready: natsUp, detail: natsUp ? undefined : 'not connected' }),
    });
    @Module({
      imports: [ServiceEndpointsModule.forRoot({ registry, readiness })],
      controllers: [AdminController],
      providers: [{ provide: ACCESS_REVIEWS, useValue: clientNodeReviews(ns.kc) }, KubernetesAdminGuard],
    })
    class TestAppModule {}
    app = await NestFactory.create(TestAppModule, { logger: false });
    await app.listen(0, '127.0.0.1');
    const address = app.getHttpServer().address() as { port: number };
    base = `http://127.0.0.1:${address.port}`;
  });

  afterAll(async () => {
    await app?.close();
    await ns.delete();
  });

  it('answers liveness regardless of readiness, and readiness only when every check passes', async () => {
    expect((await fetch(`${base}/healthz`)).status).toBe(200);
    const notReady = await fetch(`${base}/readyz`);
    expect(notReady.status).toBe(503);
    // Ready or not, never a check's detail (it can carry an exception's text) to an unauthenticated caller.
    expect(await notReady.json()).toEqual({ status: 'not ready' });
    natsUp = true;
    expect((await fetch(`${base}/readyz`)).status).toBe(200);
  });

  it('serves Prometheus metrics', async () => {
    const response = await fetch(`${base}/metrics`);
    expect(response.status).toBe(200);
    expect(await response.text()).toContain('capstan_test_total 3');
  });

  it('admits an admin route only to a token the API server accepts and RBAC allows', async () => {
    expect((await fetch(`${base}/admin/controllers`)).status).toBe(401);
    expect(
      (await fetch(`${base}/admin/controllers`, { headers: { authorization: 'Bearer not-a-token' } })).status,
    ).toBe(401);

    const core = ns.kc.makeApiClient(CoreV1Api);
    const rbac = ns.kc.makeApiClient(RbacAuthorizationV1Api);
    const tokenFor = async (name: string) => {
      await core.createNamespacedServiceAccount({ namespace: ns.name, body: { metadata: { name } } });
      const request = await core.createNamespacedServiceAccountToken({
        namespace: ns.name,
        name,
        body: { spec: { audiences: [], expirationSeconds: 600 } },
      });
      return request.status!.token;
    };
    const operator = await tokenFor('operator');
    const stranger = await tokenFor('stranger');
    const roleName = `${ns.name}-capstan-admin`;
    await rbac.createClusterRole({
      body: { metadata: { name: roleName }, rules: [{ nonResourceURLs: ['/admin/*'], verbs: ['get'] }] },
    });
    await rbac.createClusterRoleBinding({
      body: {
        metadata: { name: roleName },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: roleName },
        subjects: [{ kind: 'ServiceAccount', name: 'operator', namespace: ns.name }],
      },
    });

    const allowed = await fetch(`${base}/admin/controllers`, {
      headers: { authorization: `Bearer ${operator}` },
    });
    expect(allowed.status).toBe(200);
    expect(await allowed.json()).toEqual({ controllers: ['cluster'] });
    const refused = await fetch(`${base}/admin/controllers`, {
      headers: { authorization: `Bearer ${stranger}` },
    });
    expect(refused.status).toBe(403);
    expect(await refused.text()).not.toContain(stranger);

    await rbac.deleteClusterRoleBinding({ name: roleName });
    await rbac.deleteClusterRole({ name: roleName });
  });
});
