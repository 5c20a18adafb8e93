import type { V1Secret } from '@kubernetes/client-node';
import {
  certificateNames,
  certificateNotAfter,
  createCertificateAuthority,
  expiresWithin,
  issueServerCertificate,
  loadCertificateAuthority,
} from '@capstan/pki';
import { isAlreadyExists, isConflict, SECRETS, type KubeClient } from '@capstan/kube';
import type { Logger } from 'pino';

/** What the webhook serves with, and the CA the API server must trust (the CRDs' caBundle). */
export interface WebhookTls {
  caPem: string;
  certPem: string;
  keyPem: string;
  notAfter: Date;
}

export interface WebhookCertificatesOptions {
  client: KubeClient;
  /** Where the Secret lives: the core's own namespace, shared by its replicas. */
  namespace: string;
  secretName: string;
  /** Names the API server reaches the webhook by (the Service's DNS names, or the host of a URL). */
  dnsNames: string[];
  ipAddresses: string[];
  logger: Logger;
}

const DAY_MS = 24 * 3600 * 1000;
/** Serving certificates live a year and are replaced a month before they expire; the CA lives ten years. */
const SERVING_VALIDITY_MS = 365 * DAY_MS;
const RENEW_BEFORE_MS = 30 * DAY_MS;
const CA_VALIDITY_MS = 10 * 365 * DAY_MS;
const KEYS = { ca: 'ca.crt', caKey: 'ca.key', cert: 'tls.crt', key: 'tls.key' } as const;

const decode = (secret: V1Secret | undefined, key: string) => {
  const value = secret?.data?.[key];
  return value ? Buffer.from(value, 'base64').toString('utf8') : undefined;
};
const encode = (value: string) => Buffer.from(value, 'utf8').toString('base64');

/**
 * The webhook's own certificates, kept in a Secret so every replica serves the same ones: a CA (its certificate is
 * the caBundle the CRDs carry) and a serving certificate for the webhook's names, issued again from the same CA a
 * month before it expires or when the names change, so the caBundle stays valid across renewals.
 */
export class WebhookCertificates {
  constructor(private readonly options: WebhookCertificatesOptions) {}

  /** The current certificates, issuing or renewing what is missing, expiring or issued for other names. */
  async ensure(): Promise<WebhookTls> {
    for (let attempt = 0; ; attempt++) {
      const secret = await this.read();
      const current = await this.usable(secret);
      if (current) return current;
      try {
        const issued = await this.issue(secret);
        this.options.logger.info(
          { namespace: this.options.namespace, name: this.options.secretName, notAfter: issued.notAfter.toISOString() },
          'webhook serving certificate issued',
        );
        return issued;
      } catch (error) {
        // Another replica wrote it first: take theirs.
        if ((isConflict(error) || isAlreadyExists(error)) && attempt < 3) continue;
        throw error;
      }
    }
  }

  private read(): Promise<V1Secret | undefined> {
    return this.options.client
      .resource<V1Secret>(SECRETS)
      .getIfExists({ namespace: this.options.namespace, name: this.options.secretName });
  }

  private async usable(secret: V1Secret | undefined): Promise<WebhookTls | undefined> {
    const caPem = decode(secret, KEYS.ca);
    const certPem = decode(secret, KEYS.cert);
    const keyPem = decode(secret, KEYS.key);
    if (!caPem || !certPem || !keyPem) return undefined;
    if (expiresWithin(certPem, RENEW_BEFORE_MS)) return undefined;
    const names = certificateNames(certPem);
    const covers =
      this.options.dnsNames.every((name) => names.dnsNames.includes(name)) &&
      this.options.ipAddresses.every((ip) => names.ipAddresses.includes(ip));
    if (!covers) return undefined;
    return { caPem, certPem, keyPem, notAfter: certificateNotAfter(certPem) };
  }

  private async issue(secret: V1Secret | undefined): Promise<WebhookTls> {
    const caPem = decode(secret, KEYS.ca);
    const caKeyPem = decode(secret, KEYS.caKey);
    const ca =
      caPem && caKeyPem && !expiresWithin(caPem, SERVING_VALIDITY_MS)
        ? await loadCertificateAuthority({ certPem: caPem, keyPem: caKeyPem }, 'webhook CA')
        : await createCertificateAuthority({ commonName: 'capstan-core-webhook-ca', validityMs: CA_VALIDITY_MS });
    const serving = await issueServerCertificate(ca, {
      commonName: this.options.dnsNames[0] ?? this.options.ipAddresses[0] ?? 'capstan-core-webhook',
      dnsNames: this.options.dnsNames,
      ipAddresses: this.options.ipAddresses,
      validityMs: SERVING_VALIDITY_MS,
    });
    const data = {
      [KEYS.ca]: encode(ca.certPem),
      [KEYS.caKey]: encode(ca.keyPem),
      [KEYS.cert]: encode(serving.certPem),
      [KEYS.key]: encode(serving.keyPem),
    };
    const secrets = this.options.client.resource<V1Secret>(SECRETS);
    if (secret) {
      await secrets.replace({ ...secret, type: 'kubernetes.io/tls', data });
    } else {
      await secrets.create({
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { namespace: this.options.namespace, name: this.options.secretName },
        type: 'kubernetes.io/tls',
        data,
      });
    }
    return { caPem: ca.certPem, certPem: serving.certPem, keyPem: serving.keyPem, notAfter: serving.notAfter };
  }
}
