import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { ConversionError } from '@capstan/api';
import type { KubeClient } from '@capstan/kube';
import type { Logger } from 'pino';
import { ProviderKinds } from '@capstan/provider-kit';
import { admissionValidators } from './admission-validators.js';
import { ConversionWebhook } from './conversion-webhook.js';
import { configureCrdConversion, type WebhookClientConfig } from './crd-conversion-config.js';
import { configureValidatingWebhook, removeValidatingWebhook, VALIDATING_WEBHOOK_CONFIGURATION } from './validating-webhook-config.js';
import { WebhookCertificates, type WebhookTls } from './webhook-certificates.js';

export interface CoreWebhookOptions {
  port: number;
  bindAddress: string;
  /** How the API server reaches this webhook; the CRDs are pointed there. */
  clientConfig: WebhookClientConfig;
  /** The core's namespace: its replicas share the certificates through a Secret there. */
  namespace: string;
  secretName: string;
  /** `--webhook-client-ca-file`: admission reviews must come with a client certificate this CA signed. */
  clientCaFile?: string;
}

/** How often the certificates are checked for renewal (they are renewed a month before they expire). */
const RENEWAL_CHECK_MS = 12 * 3600 * 1000;
const RETRY_MS = 10_000;

/** The names the serving certificate must carry for the API server to accept it. */
export function webhookNames(clientConfig: WebhookClientConfig): { dnsNames: string[]; ipAddresses: string[] } {
  if ('service' in clientConfig) {
    const { name, namespace } = clientConfig.service;
    return { dnsNames: [`${name}.${namespace}.svc`, `${name}.${namespace}.svc.cluster.local`], ipAddresses: [] };
  }
  const host = new URL(clientConfig.url).hostname.replace(/^\[|\]$/g, '');
  return isIP(host) ? { dnsNames: [], ipAddresses: [host] } : { dnsNames: [host], ipAddresses: [] };
}

/**
 * Runs the core's webhooks: certificates from (or into) the shared Secret, the HTTPS server, the CRDs pointed at its
 * conversion and the ValidatingWebhookConfiguration at its ClusterClass validation, both with the CA bundle, and a
 * renewal check twice a day that keeps both in sync. A step that fails (the API server unreachable at start)
 * is retried every 10 s; the rest of the core does not wait for it.
 */
export class CoreWebhook {
  private webhook: ConversionWebhook | undefined;
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  private served: WebhookTls | undefined;
  private readonly certificates: WebhookCertificates;
  private readonly kinds: ProviderKinds;

  constructor(
    private readonly client: KubeClient,
    private readonly options: CoreWebhookOptions,
    private readonly logger: Logger,
  ) {
    this.certificates = new WebhookCertificates({
      client,
      namespace: options.namespace,
      secretName: options.secretName,
      ...webhookNames(options.clientConfig),
      logger,
    });
    this.kinds = new ProviderKinds(client);
  }

  /** The port served on, once running. */
  port: number | undefined;

  start(): void {
    void this.step();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    const clientConfig = this.options.clientConfig;
    if (this.webhook && 'url' in clientConfig) {
      // Outside the cluster nothing else serves this URL once this core stops: ClusterClass writes would all fail.
      try {
        if (await removeValidatingWebhook(this.client, clientConfig))
          this.logger.info({ name: VALIDATING_WEBHOOK_CONFIGURATION }, 'validating webhook configuration removed on stop');
      } catch (error) {
        this.logger.warn({ err: error, name: VALIDATING_WEBHOOK_CONFIGURATION }, 'validating webhook configuration not removed');
      }
    }
    await this.webhook?.stop();
  }

  private schedule(delayMs: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => void this.step(), delayMs);
    this.timer.unref();
  }

  private async step(): Promise<void> {
    try {
      const tls = await this.certificates.ensure();
      if (this.stopped) return;
      if (!this.webhook) {
        this.webhook = new ConversionWebhook({
          port: this.options.port,
          bindAddress: this.options.bindAddress,
          tls,
          ...(this.options.clientCaFile ? { clientCaPem: readFileSync(this.options.clientCaFile, 'utf8') } : {}),
          resolve: (gk) => this.resolve(gk),
          validators: admissionValidators(this.client, this.kinds),
          logger: this.logger,
        });
        this.port = await this.webhook.start();
        this.logger.info({ port: this.port }, 'webhook serving (conversion, ClusterClass and Cluster validation)');
      } else if (tls.certPem !== this.served?.certPem) {
        this.webhook.useCertificates(tls);
        this.logger.info({ notAfter: tls.notAfter.toISOString() }, 'conversion webhook serves renewed certificates');
      }
      this.served = tls;
      const { updated } = await configureCrdConversion(this.client, tls.caPem, this.options.clientConfig);
      if (updated.length > 0) this.logger.info({ crds: updated }, 'CRDs pointed at the conversion webhook');
      const validating = await configureValidatingWebhook(this.client, tls.caPem, this.options.clientConfig);
      if (validating.updated) this.logger.info({ name: VALIDATING_WEBHOOK_CONFIGURATION }, 'validating webhook configuration pointed at the webhook');
      this.schedule(RENEWAL_CHECK_MS);
    } catch (error) {
      this.logger.warn({ err: error }, 'webhook not ready; retrying');
      this.schedule(RETRY_MS);
    }
  }

  private async resolve(groupKind: { group: string; kind: string }): Promise<string> {
    try {
      const kind = await this.kinds.resolve({ apiGroup: groupKind.group, kind: groupKind.kind });
      return `${groupKind.group}/${kind.resource.version}`;
    } catch (error) {
      throw new ConversionError(error instanceof Error ? error.message : String(error));
    }
  }
}
