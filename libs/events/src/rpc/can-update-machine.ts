import type { NatsConnection, Subscription } from '@nats-io/transport-node';
import { errorFields, type EventBusLogger } from '../logger.js';

// "Can this Machine take that change in place?" — asked by the core (MachineDeployments) and the control plane
// provider, answered by the Machine's bootstrap provider (docs/in-place-updates.md). NATS request/reply: the answer
// is needed before anything is written, and the asker records it on its objects, so nothing is persisted here.
// The request names objects only; specs (which may hold file contents) are read by the provider from the API.

/** Token after the subject root of request/reply subjects; outside the streams' `handoff.>` / `lifecycle.>`. */
export const RPC_TOKEN = 'rpc';

/** How long an asker waits for an answer before it retries on a later reconcile. */
export const CAN_UPDATE_TIMEOUT_MS = 5_000;

/** Queue group of a provider's responders: one replica answers each request. */
export const CAN_UPDATE_QUEUE = 'can-update-machine';

export interface ObjectRef {
  apiGroup: string;
  kind: string;
  name: string;
}

export interface CanUpdateMachineRequest {
  machine: { namespace: string; name: string };
  /** The Machine's bootstrap config (its spec is the current configuration). */
  bootstrapConfig: ObjectRef;
  currentVersion?: string;
  desiredVersion?: string;
  /** Where the desired configuration lives: a bootstrap config template or a control plane object. */
  desiredConfigFrom: ObjectRef;
}

export interface CanUpdateMachineResponse {
  inPlace: boolean;
  /** Applying it restarts the node's Kubernetes: the machine is drained first. */
  restart?: boolean;
  /** Why not, naming what blocks it. */
  reason?: string;
  fields?: string[];
}

/**
 * `<root>.rpc.can-update-machine.<kind>`: the bootstrap config kind, lower-cased (`capstan.rpc.can-update-machine.k3sconfig`).
 * The root is the event topology's, so installs (and test files) sharing a NATS server never answer each other.
 */
export function canUpdateMachineSubject(root: string, bootstrapKind: string): string {
  return `${root}.${RPC_TOKEN}.can-update-machine.${bootstrapKind.toLowerCase()}`;
}

export class CanUpdateMachineError extends Error {
  constructor(
    message: string,
    readonly subject: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = 'CanUpdateMachineError';
  }
}

/** Asks the bootstrap provider; throws CanUpdateMachineError when no answer comes in time or the answer is malformed. */
export async function askCanUpdateMachine(
  nc: NatsConnection,
  root: string,
  request: CanUpdateMachineRequest,
  timeoutMs = CAN_UPDATE_TIMEOUT_MS,
): Promise<CanUpdateMachineResponse> {
  const subject = canUpdateMachineSubject(root, request.bootstrapConfig.kind);
  let text: string;
  try {
    const reply = await nc.request(subject, JSON.stringify(request), { timeout: timeoutMs });
    text = reply.string();
  } catch (error) {
    throw new CanUpdateMachineError(`no answer from the ${request.bootstrapConfig.kind} provider on ${subject}`, subject, {
      cause: error,
    });
  }
  const answer = parseResponse(text);
  if ('error' in answer) throw new CanUpdateMachineError(`${request.bootstrapConfig.kind} provider: ${answer.error}`, subject);
  return answer;
}

function parseResponse(text: string): CanUpdateMachineResponse | { error: string } {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { error: 'answer is not JSON' };
  }
  if (typeof value !== 'object' || value === null) return { error: 'answer is not an object' };
  const record = value as Record<string, unknown>;
  if (typeof record['error'] === 'string') return { error: record['error'] };
  if (typeof record['inPlace'] !== 'boolean') return { error: 'answer has no boolean inPlace' };
  return {
    inPlace: record['inPlace'],
    ...(record['restart'] === true && { restart: true }),
    ...(typeof record['reason'] === 'string' && { reason: record['reason'].slice(0, 1024) }),
    ...(Array.isArray(record['fields']) && {
      fields: record['fields'].filter((f): f is string => typeof f === 'string').slice(0, 32),
    }),
  };
}

function parseRequest(text: string): CanUpdateMachineRequest | undefined {
  try {
    const value = JSON.parse(text) as Partial<CanUpdateMachineRequest>;
    const ref = (r: unknown): r is ObjectRef =>
      typeof r === 'object' && r !== null && ['apiGroup', 'kind', 'name'].every((k) => typeof (r as Record<string, unknown>)[k] === 'string');
    if (typeof value.machine?.namespace !== 'string' || typeof value.machine.name !== 'string') return undefined;
    if (!ref(value.bootstrapConfig) || !ref(value.desiredConfigFrom)) return undefined;
    return value as CanUpdateMachineRequest;
  } catch {
    return undefined;
  }
}

/**
 * Answers can-update requests for one bootstrap config kind, in a queue group so one replica answers each. A
 * malformed request or a failing handler gets `{error}` (the asker retries later); nothing here crashes the process.
 */
export function serveCanUpdateMachine(
  nc: NatsConnection,
  root: string,
  bootstrapKind: string,
  answer: (request: CanUpdateMachineRequest) => Promise<CanUpdateMachineResponse>,
  logger: EventBusLogger,
): Subscription {
  const subject = canUpdateMachineSubject(root, bootstrapKind);
  return nc.subscribe(subject, {
    queue: CAN_UPDATE_QUEUE,
    callback: (error, msg) => {
      if (error) {
        logger.warn({ subject, ...errorFields(error) }, 'can-update subscription error');
        return;
      }
      const request = parseRequest(msg.string());
      if (!request) {
        msg.respond(JSON.stringify({ error: 'malformed can-update-machine request' }));
        return;
      }
      answer(request).then(
        (response) => msg.respond(JSON.stringify(response)),
        (failure: unknown) => {
          logger.warn({ subject, machine: request.machine, ...errorFields(failure) }, 'can-update-machine failed');
          msg.respond(JSON.stringify({ error: failure instanceof Error ? failure.message.slice(0, 512) : 'failed' }));
        },
      );
    },
  });
}
