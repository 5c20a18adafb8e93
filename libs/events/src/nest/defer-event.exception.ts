import { RpcException } from '@nestjs/microservices';

export const DEFER_EVENT_CODE = 'defer-event';

export interface DeferEventPayload {
  status: 'error';
  code: typeof DEFER_EVENT_CODE;
  message: string;
}

/**
 * Thrown from a Nest handler for an event it cannot act on yet (see DeferredEventError). Nest's exception filter
 * turns it into its payload, which the transport recognises and hands back for a later delivery.
 */
export class DeferEventException extends RpcException {
  constructor(message: string) {
    super({ status: 'error', code: DEFER_EVENT_CODE, message } satisfies DeferEventPayload);
  }
}

export function isDeferPayload(value: unknown): value is DeferEventPayload {
  return typeof value === 'object' && value !== null && (value as { code?: unknown }).code === DEFER_EVENT_CODE;
}
