import { RpcException } from '@nestjs/microservices';

export const UNPROCESSABLE_EVENT_CODE = 'unprocessable-event';

export interface UnprocessableEventPayload {
  status: 'error';
  code: typeof UNPROCESSABLE_EVENT_CODE;
  message: string;
}

/**
 * Thrown from a Nest handler or pipe for an event that no retry can make acceptable. Nest's exception
 * filter turns it into its payload, which the transport recognises and dead-letters at once.
 */
export class UnprocessableEventException extends RpcException {
  constructor(message: string) {
    super({ status: 'error', code: UNPROCESSABLE_EVENT_CODE, message } satisfies UnprocessableEventPayload);
  }
}

export function isUnprocessablePayload(value: unknown): value is UnprocessableEventPayload {
  return (
    typeof value === 'object' &&
    value !== null &&
    (value as { code?: unknown }).code === UNPROCESSABLE_EVENT_CODE
  );
}
