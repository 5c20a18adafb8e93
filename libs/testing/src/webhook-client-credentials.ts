import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { createCertificateAuthority, issueClientCertificate } from '@capstan/pki';

/** The files `writeWebhookClientCredentials` writes into its directory. */
const FILES = {
  ca: 'webhook-client-ca.crt',
  cert: 'webhook-client.crt',
  key: 'webhook-client.key',
  kubeconfig: 'webhook-kubeconfig.yaml',
  admissionConfig: 'admission-config.yaml',
} as const;

/**
 * The client certificate kube-apiserver presents to admission webhooks, as a cluster operator configures it: an
 * AdmissionConfiguration whose webhook kubeconfig names the certificate for every webhook (`*`), and the CA a webhook
 * checks it with (the core's `--webhook-client-ca-file`). Written into `dir` (JSON, which is YAML), keys 0600. Returns
 * the `--admission-control-config-file` argument and the CA's path.
 */
export async function writeWebhookClientCredentials(dir: string): Promise<{ apiServerArg: string; caPath: string }> {
  const ca = await createCertificateAuthority({ commonName: 'capstan-test-webhook-client-ca' });
  const client = await issueClientCertificate(ca, { commonName: 'kube-apiserver-webhook-client' });
  const path = (file: keyof typeof FILES) => join(dir, FILES[file]);
  writeFileSync(path('ca'), ca.certPem);
  writeFileSync(path('cert'), client.certPem);
  writeFileSync(path('key'), client.keyPem, { mode: 0o600 });
  const kubeconfig = {
    apiVersion: 'v1',
    kind: 'Config',
    users: [{ name: '*', user: { 'client-certificate': path('cert'), 'client-key': path('key') } }],
  };
  writeFileSync(path('kubeconfig'), JSON.stringify(kubeconfig, null, 2), { mode: 0o600 });
  const plugin = (name: string) => ({
    name,
    configuration: { apiVersion: 'apiserver.config.k8s.io/v1', kind: 'WebhookAdmissionConfiguration', kubeConfigFile: path('kubeconfig') },
  });
  const admission = {
    apiVersion: 'apiserver.config.k8s.io/v1',
    kind: 'AdmissionConfiguration',
    plugins: [plugin('ValidatingAdmissionWebhook'), plugin('MutatingAdmissionWebhook')],
  };
  writeFileSync(path('admissionConfig'), JSON.stringify(admission, null, 2));
  return { apiServerArg: `--admission-control-config-file=${path('admissionConfig')}`, caPath: path('ca') };
}

/**
 * The API server's webhook client certificate and key, next to the CA `writeWebhookClientCredentials` wrote: for a
 * test that talks to a webhook as the API server does.
 */
export function webhookClientCertificate(caPath: string): { cert: string; key: string } {
  const dir = dirname(caPath);
  return { cert: readFileSync(join(dir, FILES.cert), 'utf8'), key: readFileSync(join(dir, FILES.key), 'utf8') };
}
