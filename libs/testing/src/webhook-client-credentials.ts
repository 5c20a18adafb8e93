import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { createCertificateAuthority, issueClientCertificate } from '@capstan/pki';

/**
 * The client certificate kube-apiserver presents to admission webhooks, as a cluster operator configures it: an
 * AdmissionConfiguration whose webhook kubeconfig names the certificate for every webhook (`*`), and the CA a webhook
 * checks it with (the core's `--webhook-client-ca-file`). Written into `dir`, keys 0600. Returns the
 * `--admission-control-config-file` argument and the CA's path.
 */
export async function writeWebhookClientCredentials(dir: string): Promise<{ apiServerArg: string; caPath: string }> {
  const ca = await createCertificateAuthority({ commonName: 'capstan-test-webhook-client-ca' });
  const client = await issueClientCertificate(ca, { commonName: 'kube-apiserver-webhook-client' });
  const path = (name: string) => join(dir, name);
  writeFileSync(path('webhook-client-ca.crt'), ca.certPem);
  writeFileSync(path('webhook-client.crt'), client.certPem);
  writeFileSync(path('webhook-client.key'), client.keyPem, { mode: 0o600 });
  writeFileSync(
    path('webhook-kubeconfig.yaml'),
    [
      'apiVersion: v1',
      'kind: Config',
      'users:',
      "- name: '*'",
      '  user:',
      `    client-certificate: ${path('webhook-client.crt')}`,
      `    client-key: ${path('webhook-client.key')}`,
      '',
    ].join('\n'),
    { mode: 0o600 },
  );
  const webhookPlugin = (name: string) =>
    [
      `- name: ${name}`,
      '  configuration:',
      '    apiVersion: apiserver.config.k8s.io/v1',
      '    kind: WebhookAdmissionConfiguration',
      `    kubeConfigFile: ${path('webhook-kubeconfig.yaml')}`,
    ].join('\n');
  writeFileSync(
    path('admission-config.yaml'),
    [
      'apiVersion: apiserver.config.k8s.io/v1',
      'kind: AdmissionConfiguration',
      'plugins:',
      webhookPlugin('ValidatingAdmissionWebhook'),
      webhookPlugin('MutatingAdmissionWebhook'),
      '',
    ].join('\n'),
  );
  return { apiServerArg: `--admission-control-config-file=${path('admission-config.yaml')}`, caPath: path('webhook-client-ca.crt') };
}

/** The API server's webhook client certificate and key, next to the CA `writeWebhookClientCredentials` wrote: a test that talks to a webhook as the API server does. */
export function webhookClientCertificate(caPath: string): { cert: string; key: string } {
  const dir = dirname(caPath);
  return { cert: readFileSync(join(dir, 'webhook-client.crt'), 'utf8'), key: readFileSync(join(dir, 'webhook-client.key'), 'utf8') };
}
