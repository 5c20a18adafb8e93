import type { KubernetesObject, V1Secret } from '@kubernetes/client-node';
import { CONVERSION_DATA_ANNOTATION, CONVERSION_WEBHOOK_SERVICE, V1BETA1 } from '@capstan/api';
import { createKubeClient, CUSTOM_RESOURCE_DEFINITIONS, KubeApiError, SECRETS, type KubeClient, type ResourceType } from '@capstan/kube';
import {
  webhookClientCertificate,
  createTestNamespace,
  eventually,
  freePort,
  installCapstanDefinitions,
  type TestNamespace,
} from '@capstan/testing';
import { request as httpsRequest } from 'node:https';
import { pino } from 'pino';
import { CLUSTER_CLASS_VALIDATION_PATH } from './admission-review.js';
import { CoreWebhook } from './core-webhook.js';
import { configureCrdConversion, convertedCrdNames } from './crd-conversion-config.js';
import { VALIDATING_WEBHOOK_CONFIGURATION, VALIDATING_WEBHOOK_CONFIGURATIONS } from './validating-webhook-config.js';

// The core's webhook against the real API server: the CRDs pointed at it with its CA, v1beta1 objects written and
// read through it, the stored v1beta2 objects as upstream's conversion makes them; the ValidatingWebhookConfiguration
// pointed at it, ClusterClasses and Clusters refused through the API server for the rules beyond CEL.

type Obj = KubernetesObject & { spec?: Record<string, unknown>; status?: Record<string, unknown> };
const machines = (version: string): ResourceType => ({
  group: 'cluster.x-k8s.io',
  version,
  plural: 'machines',
  kind: 'Machine',
  namespaced: true,
});
const clusterClasses: ResourceType = {
  group: 'cluster.x-k8s.io',
  version: 'v1beta2',
  plural: 'clusterclasses',
  kind: 'ClusterClass',
  namespaced: true,
};
const deployments = (version: string): ResourceType => ({
  group: 'cluster.x-k8s.io',
  version,
  plural: 'machinedeployments',
  kind: 'MachineDeployment',
  namespaced: true,
});

const webhookClientCaFile = process.env['CAPSTAN_TEST_WEBHOOK_CLIENT_CA_FILE'];

describe('the conversion webhook', () => {
  let ns: TestNamespace;
  let client: KubeClient;
  let webhook: CoreWebhook;
  const logger = pino({ level: 'silent' });

  const startWebhook = async () => {
    const port = await freePort();
    const started = new CoreWebhook(
      client,
      {
        port,
        bindAddress: '127.0.0.1',
        clientConfig: { url: `https://127.0.0.1:${port}/convert` },
        namespace: ns.name,
        secretName: 'capstan-core-webhook-tls',
        // The local test environment's API server presents a client certificate to admission webhooks.
        ...(webhookClientCaFile ? { clientCaFile: webhookClientCaFile } : {}),
      },
      logger,
    );
    started.start();
    await eventually(
      async () => {
        for (const name of convertedCrdNames()) {
          const crd = await client.resource<Obj>(CUSTOM_RESOURCE_DEFINITIONS).get({ name });
          const config = (crd.spec?.['conversion'] as { webhook?: { clientConfig?: { url?: string } } }).webhook?.clientConfig;
          if (config?.url !== `https://127.0.0.1:${port}/convert`) return false;
        }
        return true;
      },
      { message: 'the converted CRDs pointed at the webhook', timeoutMs: 60_000 },
    );
    return started;
  };

  beforeAll(async () => {
    ns = await createTestNamespace('convert');
    await installCapstanDefinitions(ns.kc);
    client = createKubeClient(ns.kc);
    webhook = await startWebhook();
  }, 120_000);

  afterAll(async () => {
    await webhook?.stop();
    // Back to the generated Service reference, so later installs apply cleanly.
    const secret = await client?.resource<V1Secret>(SECRETS).getIfExists({ namespace: ns.name, name: 'capstan-core-webhook-tls' });
    const ca = secret?.data?.['ca.crt'];
    if (client && ca) await configureCrdConversion(client, Buffer.from(ca, 'base64').toString('utf8'), { service: { ...CONVERSION_WEBHOOK_SERVICE } });
    await client?.close();
    await ns?.delete();
  });

  it('stores a Machine written as v1beta1 as upstream converts it, and reads it back as v1beta1', async () => {
    await client.resource<Obj>(machines('v1beta1')).create({
      apiVersion: V1BETA1,
      kind: 'Machine',
      metadata: { name: 'old-client', namespace: ns.name },
      spec: {
        clusterName: 'c',
        bootstrap: { dataSecretName: 'data' },
        infrastructureRef: { apiVersion: 'infrastructure.capstan.dev/v1alpha1', kind: 'SimMachine', name: 'old-client', namespace: ns.name },
        nodeDrainTimeout: '5m',
        version: 'v1.34.4',
      },
    } as Obj);
    const stored = await client.resource<Obj>(machines('v1beta2')).get({ namespace: ns.name, name: 'old-client' });
    expect(stored.spec).toEqual({
      clusterName: 'c',
      bootstrap: { dataSecretName: 'data' },
      infrastructureRef: { apiGroup: 'infrastructure.capstan.dev', kind: 'SimMachine', name: 'old-client' },
      deletion: { nodeDrainTimeoutSeconds: 300 },
      version: 'v1.34.4',
    });
    const asV1beta1 = await client.resource<Obj>(machines('v1beta1')).get({ namespace: ns.name, name: 'old-client' });
    expect(asV1beta1.apiVersion).toBe(V1BETA1);
    expect(asV1beta1.spec).toMatchObject({
      // The apiVersion comes from the SimMachine CRD's contract label, the namespace from the Machine.
      infrastructureRef: { apiVersion: 'infrastructure.capstan.dev/v1alpha1', kind: 'SimMachine', name: 'old-client', namespace: ns.name },
      nodeDrainTimeout: '5m0s',
    });
  });

  it('round-trips a v1beta2 MachineDeployment through a v1beta1 update without losing what only v1beta2 says', async () => {
    const body = {
      apiVersion: 'cluster.x-k8s.io/v1beta2',
      kind: 'MachineDeployment',
      metadata: { name: 'md', namespace: ns.name },
      spec: {
        clusterName: 'c',
        replicas: 2,
        paused: false,
        selector: { matchLabels: { pool: 'a' } },
        rollout: { strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1, maxUnavailable: 0 } } },
        deletion: { order: 'Oldest' },
        template: {
          metadata: { labels: { pool: 'a' } },
          spec: {
            clusterName: 'c',
            bootstrap: { dataSecretName: 'data' },
            infrastructureRef: { apiGroup: 'infrastructure.capstan.dev', kind: 'SimMachineTemplate', name: 't' },
            minReadySeconds: 7,
          },
        },
      },
    };
    const created = await client.resource<Obj>(deployments('v1beta2')).create(body as Obj);
    const old = await client.resource<Obj>(deployments('v1beta1')).get({ namespace: ns.name, name: 'md' });
    expect(old.spec).toMatchObject({
      minReadySeconds: 7,
      strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1, maxUnavailable: 0, deletePolicy: 'Oldest' } },
    });
    expect(old.metadata?.annotations?.[CONVERSION_DATA_ANNOTATION]).toBeDefined();
    // A v1beta1 client changes a label and writes the whole object back.
    await client.resource<Obj>(deployments('v1beta1')).replace({
      ...old,
      metadata: { ...old.metadata, labels: { touched: 'by-v1beta1' } },
    });
    const after = await client.resource<Obj>(deployments('v1beta2')).get({ namespace: ns.name, name: 'md' });
    expect(after.metadata?.labels).toEqual({ touched: 'by-v1beta1' });
    expect(after.metadata?.annotations?.[CONVERSION_DATA_ANNOTATION]).toBeUndefined();
    expect(after.spec).toEqual(created.spec);
  });

  it('keeps status.deprecated.v1beta1 and shows it to v1beta1 clients as their status.conditions, both ways', async () => {
    const v1beta1Conditions = [
      { type: 'Ready', status: 'True', lastTransitionTime: '2026-11-24T10:00:00Z' },
      {
        type: 'NodeHealthy',
        status: 'False',
        severity: 'Warning',
        reason: 'NodeConditionsFailed',
        message: 'Node condition MemoryPressure is True',
        lastTransitionTime: '2026-11-24T10:00:00Z',
      },
    ];
    await client.resource<Obj>(machines('v1beta2')).create({
      apiVersion: 'cluster.x-k8s.io/v1beta2',
      kind: 'Machine',
      metadata: { name: 'v1beta1-status', namespace: ns.name },
      spec: {
        clusterName: 'c',
        bootstrap: { dataSecretName: 'data' },
        infrastructureRef: { apiGroup: 'infrastructure.capstan.dev', kind: 'SimMachine', name: 'x' },
      },
    } as Obj);
    const ref = { namespace: ns.name, name: 'v1beta1-status' };
    // What the core writes: the CRD keeps it (before, the API server pruned it).
    const written = await client.resource<Obj>(machines('v1beta2')).patchStatus(ref, {
      phase: 'Running',
      deprecated: { v1beta1: { conditions: v1beta1Conditions, failureReason: 'InvalidConfiguration', failureMessage: 'gone' } },
    });
    expect(written.status?.['deprecated']).toEqual({
      v1beta1: { conditions: v1beta1Conditions, failureReason: 'InvalidConfiguration', failureMessage: 'gone' },
    });
    const old = await client.resource<Obj>(machines('v1beta1')).get(ref);
    expect(old.status).toMatchObject({ conditions: v1beta1Conditions, failureReason: 'InvalidConfiguration', failureMessage: 'gone' });

    // What a v1beta1 client writes into status.conditions lands there too.
    const ready = { type: 'Ready', status: 'False', severity: 'Info', reason: 'Deleting', lastTransitionTime: '2026-11-24T11:00:00Z' };
    await client.resource<Obj>(machines('v1beta1')).replaceStatus({ ...old, status: { ...old.status, conditions: [ready] } });
    const stored = await client.resource<Obj>(machines('v1beta2')).get(ref);
    expect((stored.status?.['deprecated'] as { v1beta1?: unknown }).v1beta1).toMatchObject({ conditions: [ready] });
  });

  it('refuses a v1beta1 object that would be an invalid v1beta2 one, naming the field', async () => {
    const refused = await client
      .resource<Obj>(machines('v1beta1'))
      .create({
        apiVersion: V1BETA1,
        kind: 'Machine',
        metadata: { name: 'no-cluster', namespace: ns.name },
        spec: { infrastructureRef: { apiVersion: 'infrastructure.capstan.dev/v1alpha1', kind: 'SimMachine', name: 'x' } },
      } as Obj)
      .then(
        () => undefined,
        (error: unknown) => error,
      );
    // The API server answers a failed conversion with 500 and the webhook's reason.
    expect(refused).toBeInstanceOf(KubeApiError);
    expect((refused as KubeApiError).status.message).toContain('Machine no-cluster is invalid: spec.clusterName: clusterName must be a string');
  });

  describe('ClusterClass validation', () => {
    const clusterClass = (name: string, spec: Record<string, unknown> = {}) =>
      ({
        apiVersion: 'cluster.x-k8s.io/v1beta2',
        kind: 'ClusterClass',
        metadata: { name, namespace: ns.name },
        spec: {
          infrastructure: { templateRef: { apiVersion: 'infrastructure.capstan.dev/v1alpha1', kind: 'SimClusterTemplate', name: 't' } },
          controlPlane: { templateRef: { apiVersion: 'controlplane.capstan.dev/v1alpha1', kind: 'K3sControlPlaneTemplate', name: 't' } },
          ...spec,
        },
      }) as Obj;
    const variable = (name: string) => ({ name, required: false, schema: { openAPIV3Schema: { type: 'string' } } });
    const refusal = (obj: Obj) =>
      client
        .resource<Obj>(clusterClasses)
        .create(obj)
        .then(
          () => undefined,
          (error: unknown) => error,
        );

    beforeAll(async () => {
      await eventually(
        async () => {
          const config = await client
            .resource<Obj & { webhooks?: { clientConfig: { url?: string } }[] }>(VALIDATING_WEBHOOK_CONFIGURATIONS)
            .getIfExists({ name: VALIDATING_WEBHOOK_CONFIGURATION });
          return config?.webhooks?.[0]?.clientConfig.url === `https://127.0.0.1:${webhook.port}${CLUSTER_CLASS_VALIDATION_PATH}`;
        },
        { message: 'the ValidatingWebhookConfiguration pointed at the webhook', timeoutMs: 60_000 },
      );
    });

    // Only the local environment configures the API server's webhook client certificate.
    (webhookClientCaFile ? it : it.skip)("admits reviews from the API server's client certificate only", async () => {
      const created = await client.resource<Obj>(clusterClasses).create(clusterClass('through-the-api-server'));
      expect(created.metadata?.name).toBe('through-the-api-server');
      const direct = await new Promise<number>((resolve, reject) => {
        const req = httpsRequest(
          {
            host: '127.0.0.1',
            port: webhook.port,
            path: CLUSTER_CLASS_VALIDATION_PATH,
            method: 'POST',
            rejectUnauthorized: false,
            headers: { 'content-type': 'application/json' },
          },
          (res) => {
            res.resume();
            resolve(res.statusCode ?? 0);
          },
        );
        req.on('error', reject);
        req.end(JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request: { uid: 'x' } }));
      });
      expect(direct).toBe(403);
    });

    it('refuses duplicate variable names through the API server, naming the rule', async () => {
      const refused = await refusal(clusterClass('duplicate-variables', { variables: [variable('region'), variable('region')] }));
      expect(refused).toBeInstanceOf(KubeApiError);
      expect((refused as KubeApiError).status.code).toBe(422);
      expect((refused as KubeApiError).status.message).toContain(
        'spec.variables[1].name: variable name must be unique: "region" is defined more than once (first at spec.variables[0])',
      );
    });

    it('refuses a JSON patch outside /spec, and on update too', async () => {
      const patch = (path: string) => [
        {
          name: 'labels',
          definitions: [
            {
              selector: {
                apiVersion: 'infrastructure.capstan.dev/v1alpha1',
                kind: 'SimClusterTemplate',
                matchResources: { infrastructureCluster: true },
              },
              jsonPatches: [{ op: 'add', path, value: 'x' }],
            },
          ],
        },
      ];
      const refused = await refusal(clusterClass('outside-spec', { patches: patch('/metadata/labels/a') }));
      expect((refused as KubeApiError).status.message).toContain(
        'spec.patches[0].definitions[0].jsonPatches[0].path: jsonPatch path must start with "/spec"',
      );
      const created = await client.resource<Obj>(clusterClasses).create(clusterClass('patched', { patches: patch('/spec/template/a') }));
      const updated = await client
        .resource<Obj>(clusterClasses)
        .replace({ ...created, spec: { ...created.spec, patches: patch('/status/a') } })
        .then(
          () => undefined,
          (error: unknown) => error,
        );
      expect((updated as KubeApiError).status.message).toContain('jsonPatch path must start with');
    });

    it('accepts a valid ClusterClass', async () => {
      const created = await client
        .resource<Obj>(clusterClasses)
        .create(clusterClass('valid', { variables: [variable('region'), variable('zone')], kubernetesVersions: ['v1.33.4', 'v1.34.0'] }));
      expect(created.metadata?.name).toBe('valid');
    });

    it('refuses a Cluster whose topology its ClusterClass cannot build, and deleting a class a Cluster uses', async () => {
      const clusters: ResourceType = { ...clusterClasses, plural: 'clusters', kind: 'Cluster' };
      await client.resource<Obj>(clusterClasses).create(clusterClass('in-use', { variables: [variable('region')] }));
      const topologyCluster = (name: string, topology: Record<string, unknown>) =>
        ({
          apiVersion: 'cluster.x-k8s.io/v1beta2',
          kind: 'Cluster',
          metadata: { name, namespace: ns.name },
          spec: { topology: { classRef: { name: 'in-use' }, version: 'v1.34.4', ...topology } },
        }) as Obj;
      const refused = await client
        .resource<Obj>(clusters)
        .create(topologyCluster('wrong', { workers: { machineDeployments: [{ class: 'gpu', name: 'md-0' }] } }))
        .then(
          () => undefined,
          (error: unknown) => error,
        );
      expect((refused as KubeApiError).status.code).toBe(422);
      expect((refused as KubeApiError).status.message).toContain(
        'spec.topology.workers.machineDeployments[0].class: MachineDeploymentClass with name "gpu" does not exist in ClusterClass "in-use"',
      );
      await client.resource<Obj>(clusters).create(topologyCluster('fits', { variables: [{ name: 'region', value: 'eu' }] }));
      const deleteClass = () =>
        client
          .resource<Obj>(clusterClasses)
          .delete({ namespace: ns.name, name: 'in-use' })
          .then(
            () => undefined,
            (error: unknown) => error,
          );
      const inUse = await deleteClass();
      expect((inUse as KubeApiError).status.code).toBe(403);
      expect((inUse as KubeApiError).status.message).toContain(
        `ClusterClass cannot be deleted because it is used by Cluster(s): ${ns.name}/fits`,
      );
      await client.resource<Obj>(clusters).delete({ namespace: ns.name, name: 'fits' });
      expect(await deleteClass()).toBeUndefined();
    });

    it('answers a malformed review with 400 and a clear message', async () => {
      const secret = await client.resource<V1Secret>(SECRETS).get({ namespace: ns.name, name: 'capstan-core-webhook-tls' });
      const ca = Buffer.from(secret.data!['ca.crt']!, 'base64').toString('utf8');
      // As the API server sends them: with its client certificate where the environment gave it one.
      const asApiServer = webhookClientCaFile ? webhookClientCertificate(webhookClientCaFile) : {};
      const post = (body: string) =>
        new Promise<{ status: number; body: string }>((resolve, reject) => {
          const req = httpsRequest(
            { host: '127.0.0.1', port: webhook.port, path: CLUSTER_CLASS_VALIDATION_PATH, method: 'POST', ca, headers: { 'content-type': 'application/json' }, ...asApiServer },
            (res) => {
              let text = '';
              res.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
              res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
            },
          );
          req.on('error', reject);
          req.end(body);
        });
      expect(await post('{not json')).toEqual({ status: 400, body: JSON.stringify({ message: 'the body is not JSON' }) });
      expect(await post(JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview' }))).toEqual({
        status: 400,
        body: JSON.stringify({ message: 'the AdmissionReview has no request' }),
      });
    });
  });

  // Last: the second replica's webhook, stopped, leaves the CRDs pointed at its closed port.
  it('lets a second replica serve with the same CA from the shared Secret', async () => {
    const secret = await client.resource<V1Secret>(SECRETS).get({ namespace: ns.name, name: 'capstan-core-webhook-tls' });
    const second = await startWebhook();
    try {
      const again = await client.resource<V1Secret>(SECRETS).get({ namespace: ns.name, name: 'capstan-core-webhook-tls' });
      expect(again.data?.['ca.crt']).toBe(secret.data?.['ca.crt']);
      const read = await client.resource<Obj>(machines('v1beta1')).get({ namespace: ns.name, name: 'old-client' });
      expect(read.apiVersion).toBe(V1BETA1);
    } finally {
      await second.stop();
    }
  });
});
