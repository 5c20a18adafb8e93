import { CLUSTER_API_GROUP, CLUSTER_API_VERSION, RESOURCES } from '@capstan/api';
import { canonicalJson, isNotFound, type KubeClient, type ResourceType } from '@capstan/kube';
import type { KubernetesObject } from '@kubernetes/client-node';
import { CLUSTER_CLASS_VALIDATION_PATH, CLUSTER_VALIDATION_PATH } from './admission-review.js';
import type { WebhookClientConfig } from './crd-conversion-config.js';

/** The one ValidatingWebhookConfiguration the core keeps (deploy/services/core.yaml ships it; RBAC names it). */
export const VALIDATING_WEBHOOK_CONFIGURATION = 'capstan-core-validating';

export const VALIDATING_WEBHOOK_CONFIGURATIONS: ResourceType = {
  group: 'admissionregistration.k8s.io',
  version: 'v1',
  plural: 'validatingwebhookconfigurations',
  kind: 'ValidatingWebhookConfiguration',
  namespaced: false,
};

/** API server to webhook time limit: the checks are in memory, so a slow answer means an unreachable webhook. */
const TIMEOUT_SECONDS = 10;

type ClientConfigWithCa = WebhookClientConfig & { caBundle: string };

interface ValidatingWebhook {
  name: string;
  clientConfig: ClientConfigWithCa;
  rules: { apiGroups: string[]; apiVersions: string[]; operations: string[]; resources: string[]; scope: string }[];
  failurePolicy: 'Fail';
  matchPolicy: 'Equivalent';
  sideEffects: 'None';
  admissionReviewVersions: string[];
  timeoutSeconds: number;
}

type ValidatingWebhookConfiguration = KubernetesObject & { webhooks?: ValidatingWebhook[] };

/** The same webhook as `clientConfig` (the Service or URL the CRDs' conversion uses), at a validation path. */
export function validationClientConfig(clientConfig: WebhookClientConfig, path: string): WebhookClientConfig {
  if ('service' in clientConfig) return { service: { ...clientConfig.service, path } };
  const url = new URL(clientConfig.url);
  url.pathname = path;
  url.search = '';
  return { url: url.toString() };
}

/** What each validating webhook reviews: upstream's webhook names, paths and operations. */
const REVIEWED = [
  {
    name: 'validation.clusterclass.cluster.x-k8s.io',
    path: CLUSTER_CLASS_VALIDATION_PATH,
    resource: RESOURCES.ClusterClass.plural,
    // DELETE: a class some Cluster uses is refused.
    operations: ['CREATE', 'UPDATE', 'DELETE'],
  },
  {
    name: 'validation.cluster.cluster.x-k8s.io',
    path: CLUSTER_VALIDATION_PATH,
    resource: RESOURCES.Cluster.plural,
    operations: ['CREATE', 'UPDATE'],
  },
] as const;

/** The webhooks the configuration holds, refused when the webhook cannot answer (as upstream's). */
export function desiredValidatingWebhooks(caPem: string, clientConfig: WebhookClientConfig): ValidatingWebhook[] {
  const caBundle = Buffer.from(caPem, 'utf8').toString('base64');
  return REVIEWED.map((reviewed) => ({
    name: reviewed.name,
    clientConfig: { ...validationClientConfig(clientConfig, reviewed.path), caBundle },
    rules: [
      {
        apiGroups: [CLUSTER_API_GROUP],
        apiVersions: [CLUSTER_API_VERSION],
        operations: [...reviewed.operations],
        resources: [reviewed.resource],
        scope: '*',
      },
    ],
    failurePolicy: 'Fail',
    matchPolicy: 'Equivalent',
    sideEffects: 'None',
    admissionReviewVersions: ['v1'],
    timeoutSeconds: TIMEOUT_SECONDS,
  }));
}

/** The fields of a webhook this code sets, to compare what the API server holds (it adds defaults) with what is wanted. */
const ownFields = (webhooks: readonly ValidatingWebhook[] | undefined) =>
  (webhooks ?? []).map((w) => ({
    name: w.name,
    clientConfig: w.clientConfig,
    rules: w.rules,
    failurePolicy: w.failurePolicy,
    matchPolicy: w.matchPolicy,
    sideEffects: w.sideEffects,
    admissionReviewVersions: w.admissionReviewVersions,
    timeoutSeconds: w.timeoutSeconds,
  }));

/**
 * Keeps the ValidatingWebhookConfiguration pointed at this webhook with its CA bundle: created when missing (the
 * deployed core finds it in deploy/ and only patches it), patched when it says anything else, left alone otherwise.
 */
export async function configureValidatingWebhook(
  client: KubeClient,
  caPem: string,
  clientConfig: WebhookClientConfig,
): Promise<{ updated: boolean }> {
  const configurations = client.resource<ValidatingWebhookConfiguration>(VALIDATING_WEBHOOK_CONFIGURATIONS);
  const webhooks = desiredValidatingWebhooks(caPem, clientConfig);
  const current = await configurations.getIfExists({ name: VALIDATING_WEBHOOK_CONFIGURATION });
  if (!current) {
    await configurations.create({
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingWebhookConfiguration',
      metadata: { name: VALIDATING_WEBHOOK_CONFIGURATION, labels: { 'app.kubernetes.io/name': 'capstan-core', 'app.kubernetes.io/part-of': 'capstan' } },
      webhooks,
    });
    return { updated: true };
  }
  if (canonicalJson(ownFields(current.webhooks)) === canonicalJson(ownFields(webhooks))) return { updated: false };
  // A merge patch replaces the list as a whole: the webhooks are exactly these.
  await configurations.mergePatch({ name: VALIDATING_WEBHOOK_CONFIGURATION }, { webhooks });
  return { updated: true };
}

/**
 * Removes the configuration if it still points at `clientConfig`'s URL: a core outside the cluster (`--webhook-url`)
 * stopping takes its validation with it rather than leave ClusterClass writes failing against a closed port. A core
 * reached through a Service never calls this: its other replicas keep serving.
 */
export async function removeValidatingWebhook(client: KubeClient, clientConfig: { url: string }): Promise<boolean> {
  const configurations = client.resource<ValidatingWebhookConfiguration>(VALIDATING_WEBHOOK_CONFIGURATIONS);
  const current = await configurations.getIfExists({ name: VALIDATING_WEBHOOK_CONFIGURATION });
  const ours = new Set(REVIEWED.map((reviewed) => validationClientConfig(clientConfig, reviewed.path)).map((c) => ('url' in c ? c.url : '')));
  if (!current?.webhooks?.every((w) => 'url' in w.clientConfig && ours.has(w.clientConfig.url))) return false;
  try {
    await configurations.delete({ name: VALIDATING_WEBHOOK_CONFIGURATION });
    return true;
  } catch (error) {
    if (isNotFound(error)) return false;
    throw error;
  }
}
