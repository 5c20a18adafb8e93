// The Status bodies the API server answers a refused request with, for the in-memory API server.

import type { KubeStatus } from '../../errors.js';

/** A refusal the in-memory API server answers with a Status, as the real one would. */
export class ApiRefusal extends Error {
  constructor(
    readonly code: number,
    readonly reason: string,
    message: string,
    readonly details: KubeStatus['details'] = {},
  ) {
    super(message);
    this.name = 'ApiRefusal';
  }

  toStatus(): KubeStatus & { apiVersion: string; metadata: object } {
    return {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: this.message,
      reason: this.reason,
      details: this.details,
      code: this.code,
    };
  }
}

export interface Target {
  /** `widgets.runtimetest.capstan.dev`, `configmaps`: how the real server names a kind in its messages. */
  resource: string;
  name: string;
  group: string;
  plural: string;
}

export const notFound = (t: Target) =>
  new ApiRefusal(404, 'NotFound', `${t.resource} "${t.name}" not found`, { name: t.name, group: t.group, kind: t.plural });

export const alreadyExists = (t: Target) =>
  new ApiRefusal(409, 'AlreadyExists', `${t.resource} "${t.name}" already exists`, {
    name: t.name,
    group: t.group,
    kind: t.plural,
  });

export const conflict = (t: Target, why: string) =>
  new ApiRefusal(409, 'Conflict', `Operation cannot be fulfilled on ${t.resource} "${t.name}": ${why}`, {
    name: t.name,
    group: t.group,
    kind: t.plural,
  });

export const uidMismatch = (t: Target, sent: string, actual: string | undefined) =>
  conflict(t, `Precondition failed: UID in precondition: ${sent}, UID in object meta: ${actual}`);

export const invalid = (t: Target, field: string, why: string) =>
  new ApiRefusal(422, 'Invalid', `${t.resource} "${t.name}" is invalid: ${field}: ${why}`, {
    name: t.name,
    group: t.group,
    kind: t.plural,
    causes: [{ field, message: why, reason: 'FieldValueInvalid' }],
  });

export const badRequest = (message: string) => new ApiRefusal(400, 'BadRequest', message);

export const noSuchResource = () =>
  new ApiRefusal(404, 'NotFound', 'the server could not find the requested resource');
