import { AdmissionregistrationV1Api, type V1ValidatingWebhookConfiguration } from '@kubernetes/client-node';
import { freePort } from './ports.js';
import { testKubeConfig } from './namespace.js';
import { removeStaleCoreWebhookConfiguration } from './stale-webhooks.js';

// Not the core's own name: cores started by other test files in parallel create and delete that one.
const NAME = `stale-webhooks-test-${process.pid}`;

function configuration(clientConfig: { url: string } | { service: { name: string; namespace: string } }): V1ValidatingWebhookConfiguration {
  return {
    metadata: { name: NAME },
    webhooks: [
      {
        name: 'validation.clusterclass.cluster.x-k8s.io',
        clientConfig,
        rules: [{ apiGroups: ['cluster.x-k8s.io'], apiVersions: ['v1beta2'], operations: ['CREATE'], resources: ['clusterclasses'] }],
        failurePolicy: 'Fail',
        sideEffects: 'None',
        admissionReviewVersions: ['v1'],
      },
    ],
  };
}

describe('removeStaleCoreWebhookConfiguration', () => {
  const api = testKubeConfig().makeApiClient(AdmissionregistrationV1Api);
  const exists = () => api.readValidatingWebhookConfiguration({ name: NAME }).then(() => true, () => false);
  afterEach(() => api.deleteValidatingWebhookConfiguration({ name: NAME }).catch(() => undefined));

  it("deletes a local core's configuration whose URL nothing serves any more", async () => {
    const port = await freePort();
    await api.createValidatingWebhookConfiguration({ body: configuration({ url: `https://127.0.0.1:${port}/validate` }) });
    await removeStaleCoreWebhookConfiguration(testKubeConfig(), NAME);
    expect(await exists()).toBe(false);
  });

  it("leaves deploy/'s configuration (a Service reference) alone", async () => {
    await api.createValidatingWebhookConfiguration({ body: configuration({ service: { name: 'capstan-core-webhook', namespace: 'capstan-system' } }) });
    await removeStaleCoreWebhookConfiguration(testKubeConfig(), NAME);
    expect(await exists()).toBe(true);
  });
});
