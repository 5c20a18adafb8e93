import { pino, type Logger } from 'pino';

/** The pino logger this library writes to; services pass theirs (with `service` and redaction set). */
export type EventBusLogger = Pick<Logger, 'debug' | 'info' | 'warn' | 'error' | 'child'>;

export function silentLogger(): EventBusLogger {
  return pino({ enabled: false });
}

/** An error for a log line: type, code and message, never a payload. */
export function errorFields(error: unknown): Record<string, unknown> {
  if (error instanceof Error) {
    const code = (error as { code?: unknown }).code;
    return { err: { type: error.name, message: error.message, ...(code !== undefined ? { code } : {}) } };
  }
  return { err: { message: String(error) } };
}
