import 'reflect-metadata';
import { randomUUID } from 'node:crypto';
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
import { ADMIN_API_AUDIENCE, ADMIN_AUTH_CLOCK, KubernetesAdminGuard } from './admin-auth.guard.js';
import { ADMIN_AUTH_CACHE } from './caller-reviews.js';
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
    reviewToken: async (token, audiences) =>
      (await authentication.createTokenReview({ body: { spec: { token, audiences } } })).status,
    reviewAccess: async (spec) => (await authorization.createSubjectAccessReview({ body: { spec } })).status,
  };
}

/** The real reviews, counted: how a test tells a cached answer from an API call. */
function counted(
  reviews: AccessReviews,
  calls: { tokenReviews: number; accessReviews: number },
): AccessReviews {
  return {
    reviewToken: (token, audiences) => {
      calls.tokenReviews++;
      return reviews.reviewToken(token, audiences);
    },
    reviewAccess: (question) => {
      calls.accessReviews++;
      return reviews.reviewAccess(question);
    },
  };
}

describe('service endpoints and admin authorization', () => {
  let ns: TestNamespace;
  const calls = { tokenReviews: 0, accessReviews: 0 };
  // The guard's caches expire by this clock: tests move it past a TTL instead of sleeping.
  let clockOffsetMs = 0;
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
      providers: [
        { provide: ACCESS_REVIEWS, useValue: counted(clientNodeReviews(ns.kc), calls) },
        { provide: ADMIN_AUTH_CLOCK, useValue: () => Date.now() + clockOffsetMs },
        KubernetesAdminGuard,
      ],
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

  /** A new ServiceAccount's token for the admin API, or with `audiences: []` for the API server (as pods mount). */
  const tokenFor = async (name: string, audiences = [ADMIN_API_AUDIENCE]) => {
    const core = ns.kc.makeApiClient(CoreV1Api);
    await core.createNamespacedServiceAccount({ namespace: ns.name, body: { metadata: { name } } });
    const request = await core.createNamespacedServiceAccountToken({
      namespace: ns.name,
      name,
      body: { spec: { audiences, expirationSeconds: 600 } },
    });
    const token = request.status?.token;
    if (!token) throw new Error(`no token issued for ${name}`);
    return token;
  };

  /** A ClusterRole allowing `verbs` on /admin/*, bound to the namespace's ServiceAccount `account`; returns its undo. */
  const allowAdmin = async (account: string, verbs: string[]) => {
    const rbac = ns.kc.makeApiClient(RbacAuthorizationV1Api);
    const roleName = `${ns.name}-${account}-admin`;
    await rbac.createClusterRole({
      body: { metadata: { name: roleName }, rules: [{ nonResourceURLs: ['/admin/*'], verbs }] },
    });
    await rbac.createClusterRoleBinding({
      body: {
        metadata: { name: roleName },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: roleName },
        subjects: [{ kind: 'ServiceAccount', name: account, namespace: ns.name }],
      },
    });
    return async () => {
      await rbac.deleteClusterRoleBinding({ name: roleName });
      await rbac.deleteClusterRole({ name: roleName });
    };
  };

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

    const operator = await tokenFor('operator');
    const stranger = await tokenFor('stranger');
    const disallow = await allowAdmin('operator', ['get']);

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

    await disallow();
  });

  it("refuses a token issued for the API server's audience, such as a pod's, even to an account RBAC allows", async () => {
    const apiServerToken = await tokenFor('workload', []);
    const disallow = await allowAdmin('workload', ['get']);
    try {
      const refused = await fetch(`${base}/admin/controllers`, { headers: { authorization: `Bearer ${apiServerToken}` } });
      expect(refused.status).toBe(401);
      expect(await refused.text()).toContain(`audience ${ADMIN_API_AUDIENCE}`);
      // The same account with a token for the admin API gets in.
      const core = ns.kc.makeApiClient(CoreV1Api);
      const adminToken = (
        await core.createNamespacedServiceAccountToken({
          namespace: ns.name,
          name: 'workload',
          body: { spec: { audiences: [ADMIN_API_AUDIENCE], expirationSeconds: 600 } },
        })
      ).status!.token;
      expect((await fetch(`${base}/admin/controllers`, { headers: { authorization: `Bearer ${adminToken}` } })).status).toBe(200);
    } finally {
      await disallow();
    }
  });

  it('asks the API server once per token and route within the TTL, and again after it', async () => {
    const token = await tokenFor('cached');
    const disallow = await allowAdmin('cached', ['get']);
    const get = (bearer: string) =>
      fetch(`${base}/admin/controllers`, { headers: { authorization: `Bearer ${bearer}` } });
    const start = { ...calls };
    const made = () => ({
      tokenReviews: calls.tokenReviews - start.tokenReviews,
      accessReviews: calls.accessReviews - start.accessReviews,
    });

    expect((await get(token)).status).toBe(200);
    expect((await get(token)).status).toBe(200);
    expect(made()).toEqual({ tokenReviews: 1, accessReviews: 1 });

    // A refused token is remembered too, for less time: retrying it costs nothing until then.
    const bogus = `bogus-${randomUUID()}`;
    expect((await get(bogus)).status).toBe(401);
    expect((await get(bogus)).status).toBe(401);
    expect(made()).toEqual({ tokenReviews: 2, accessReviews: 1 });
    clockOffsetMs += ADMIN_AUTH_CACHE.refusedTokenMs;
    expect((await get(bogus)).status).toBe(401);
    expect((await get(token)).status).toBe(200);
    expect(made()).toEqual({ tokenReviews: 3, accessReviews: 1 });

    // Past the accepted token's TTL both reviews are asked again: a revoked token or binding stops working by then.
    clockOffsetMs += ADMIN_AUTH_CACHE.acceptedTokenMs;
    expect((await get(token)).status).toBe(200);
    expect(made()).toEqual({ tokenReviews: 4, accessReviews: 2 });

    await disallow();
  });
});
