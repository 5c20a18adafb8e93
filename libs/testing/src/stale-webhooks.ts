import { AdmissionregistrationV1Api, type KubeConfig } from '@kubernetes/client-node';

/** The core's validating webhook configuration (apps/core/src/webhook). */
export const CORE_VALIDATING_WEBHOOK = 'capstan-core-validating';

/**
 * Deletes the core's validating webhook configuration when a local core (`--webhook-url`) registered it and is gone:
 * a core killed by a test cannot remove it, and with `failurePolicy: Fail` it would refuse every later ClusterClass
 * write on the shared test API server. deploy/'s own configuration (a Service reference) is left alone. `name` is for
 * this helper's own test, which must not race the cores other test files start.
 */
export async function removeStaleCoreWebhookConfiguration(kc: KubeConfig, name = CORE_VALIDATING_WEBHOOK): Promise<void> {
  const api = kc.makeApiClient(AdmissionregistrationV1Api);
  const existing = await api.readValidatingWebhookConfiguration({ name }).catch(() => undefined);
  const urls = (existing?.webhooks ?? []).map((webhook) => webhook.clientConfig.url).filter((url): url is string => !!url);
  if (urls.length === 0) return;
  const live = await Promise.all(
    urls.map((url) =>
      fetch(new URL('/healthz', url), { signal: AbortSignal.timeout(1_000) }).then(
        () => true,
        (error: unknown) => (error as { cause?: { code?: string } }).cause?.code !== 'ECONNREFUSED',
      ),
    ),
  );
  if (live.every(Boolean)) return;
  await api.deleteValidatingWebhookConfiguration({ name }).catch(() => undefined);
}
