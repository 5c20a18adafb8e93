import { CONVERSION_WEBHOOK_SERVICE } from '@capstan/api';
import type { CoreWebhookOptions } from './core-webhook.js';

/** The core's webhook flags (the shared service flags do not know them). */
export const WEBHOOK_FLAGS_HELP = [
  '  --webhook-port <port>          serve the v1beta1 <-> v1beta2 conversion and the ClusterClass and Cluster',
  '                                 validating webhooks on this port (also WEBHOOK_PORT); unset: none, and',
  '                                 v1beta1 requests fail',
  '  --webhook-bind-address <ip>    where the webhook listens (default 0.0.0.0)',
  `  --webhook-service <ns/name>    the Service the API server reaches it through (default ${CONVERSION_WEBHOOK_SERVICE.namespace}/${CONVERSION_WEBHOOK_SERVICE.name})`,
  '  --webhook-url <url>            instead of a Service, this URL (a core running outside the cluster)',
  '  --webhook-client-ca-file <path>',
  '                                 admission reviews must carry a client certificate this CA signed (the API',
  "                                 server's AdmissionConfiguration; also WEBHOOK_CLIENT_CA_FILE)",
].join('\n');

/** The webhook's options as flags give them; the Secret's namespace is the core's own. */
export type WebhookSettings = Omit<CoreWebhookOptions, 'namespace'>;

export class WebhookFlagError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'WebhookFlagError';
  }
}

const FLAGS = ['--webhook-port', '--webhook-bind-address', '--webhook-service', '--webhook-url', '--webhook-client-ca-file'] as const;
type Flag = (typeof FLAGS)[number];

/**
 * Takes the webhook flags off a command line (`--flag value` or `--flag=value`): the webhook options (undefined
 * when no port is set; the core adds its namespace) and the rest for the shared parser.
 */
export function parseWebhookFlags(
  argv: readonly string[],
  env: NodeJS.ProcessEnv = process.env,
): { webhook: WebhookSettings | undefined; rest: string[] } {
  const values = new Map<Flag, string>();
  const rest: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    const flag = FLAGS.find((f) => arg === f || arg.startsWith(`${f}=`));
    if (!flag) {
      rest.push(arg);
      continue;
    }
    const value = arg.includes('=') ? arg.slice(arg.indexOf('=') + 1) : argv[++i];
    if (value === undefined || value === '') throw new WebhookFlagError(`${flag} needs a value`);
    values.set(flag, value);
  }
  const portText = values.get('--webhook-port') ?? env['WEBHOOK_PORT'];
  if (portText === undefined || portText === '') return { webhook: undefined, rest };
  const port = Number(portText);
  if (!Number.isInteger(port) || port < 1 || port > 65535) throw new WebhookFlagError('--webhook-port must be a port number (1-65535)');
  const url = values.get('--webhook-url');
  if (url !== undefined && !/^https:\/\/[^/]+(\/.*)?$/.test(url)) throw new WebhookFlagError('--webhook-url must be an https:// URL');
  const clientCaFile = values.get('--webhook-client-ca-file') ?? (env['WEBHOOK_CLIENT_CA_FILE'] || undefined);
  const service = values.get('--webhook-service');
  const [serviceNamespace, serviceName] = service?.split('/') ?? [CONVERSION_WEBHOOK_SERVICE.namespace, CONVERSION_WEBHOOK_SERVICE.name];
  if (!serviceNamespace || !serviceName) throw new WebhookFlagError('--webhook-service must be <namespace>/<name>');
  return {
    webhook: {
      port,
      bindAddress: values.get('--webhook-bind-address') ?? '0.0.0.0',
      clientConfig: url
        ? { url }
        : { service: { name: serviceName, namespace: serviceNamespace, path: CONVERSION_WEBHOOK_SERVICE.path, port: CONVERSION_WEBHOOK_SERVICE.port } },
      secretName: 'capstan-core-webhook-tls',
      ...(clientCaFile ? { clientCaFile } : {}),
    },
    rest,
  };
}
