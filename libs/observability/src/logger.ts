import { pino, type DestinationStream, type Logger } from 'pino';

/**
 * Field names that can carry secrets anywhere in a logged object. Logging a whole object must not leak
 * bootstrap data, tokens, keys or kubeconfigs, so these are censored wherever they appear (two levels deep).
 */
export const SECRET_FIELD_NAMES = [
  'token',
  'password',
  'secret',
  'kubeconfig',
  'bootstrapData',
  'privateKey',
  'tls.key',
  'value',
  'authorization',
  'data',
  'stringData',
];

function redactPaths(): string[] {
  const paths = ['req.headers.authorization', 'req.headers.cookie'];
  for (const name of SECRET_FIELD_NAMES) {
    const field = name.includes('.') ? `["${name}"]` : name;
    const nested = name.includes('.') ? field : `.${field}`;
    paths.push(field, `*${nested}`, `*.*${nested}`);
  }
  return paths;
}

export interface LoggerOptions {
  service: string;
  level?: string;
  destination?: DestinationStream;
}

/** The pino JSON logger every service uses: `service` on every line, secrets censored. */
export function createLogger(options: LoggerOptions): Logger {
  return pino(
    {
      level: options.level ?? process.env['LOG_LEVEL'] ?? 'info',
      base: { service: options.service },
      redact: { paths: redactPaths(), censor: '[redacted]' },
      timestamp: pino.stdTimeFunctions.isoTime,
    },
    options.destination,
  );
}
