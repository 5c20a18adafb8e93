import { pino, type Logger } from 'pino';

/** Used when no logger is injected: JSON to stdout at LOG_LEVEL (default info). */
export function defaultLogger(): Logger {
  return pino({ level: process.env['LOG_LEVEL'] ?? 'info' });
}
