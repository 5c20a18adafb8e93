import type { Machine } from '@capstan/api';
import {
  ambientCallSignal,
  describeFailure,
  isAlreadyExists,
  isDefinitiveRefusal,
  isNotFound,
  isTooManyRequests,
  runWithoutCallSignal,
} from '@capstan/kube';
import type { Logger } from 'pino';

// A MachineSet or a control plane creates a Machine as one unit: its bootstrap config and infrastructure machine
// (clones named after it), then the Machine that references them. Two rules keep a Machine from ever pointing at
// objects that are gone:
// - Once the first clone is created, the unit is not cut by the reconcile's signal (a hand-over to another
//   replica, the reconcile deadline): each request keeps its own timeout, so the unit ends within a few of them.
// - Clones are deleted only when it is certain the Machine does not exist and never will: its create was refused
//   by the API server, or never sent. A create whose answer was lost (an abort, a timeout, a broken connection,
//   a 5xx) may still be committed by the server after any read that says "absent"; it is resolved by sending the
//   same create again (the name is the unit's own) until the server answers definitively: created, already
//   exists, or refused. Still unresolved, the clones are kept; the owner's orphaned-clone sweep judges them once
//   no request could still create the Machine.

/** One object created before the Machine, which the Machine references by name. */
export interface MachineClone {
  /** For logs and errors: `K3sConfig`, `SimMachine`, ... */
  kind: string;
  create(): Promise<unknown>;
  /** Deletes it; NotFound counts as done. */
  delete(): Promise<unknown>;
}

export interface MachineCreationUnit {
  /** The Machine's name, which its clones share. */
  name: string;
  /** Clones in creation order; each is created only once the ones before it were. */
  clones: readonly MachineClone[];
  /** Sends the Machine's create (the same body each time). */
  createMachine(): Promise<Machine>;
  /** Reads the Machine from the API server (undefined when it does not exist). */
  readMachine(): Promise<Machine | undefined>;
  log: Logger;
  /** Pause between attempts to resolve a create whose answer was lost (tests make it short). */
  resolveDelaysMs?: readonly number[];
}

/** How often, and after what pauses, a create whose answer was lost is sent again. */
export const RESOLVE_DELAYS_MS: readonly number[] = [500, 2_000, 5_000];

/** The unit failed; `stage` says where, `clonesKept` whether clones were left for the sweep (fate unknown). */
export class MachineCreationError extends Error {
  constructor(
    readonly machine: string,
    readonly stage: 'clone' | 'machine',
    readonly clonesKept: boolean,
    override readonly cause: unknown,
    readonly cloneKind?: string,
  ) {
    super(
      `creating Machine ${machine} failed at ${cloneKind ?? 'the Machine'}: ${describeFailure(cause)}${
        clonesKept ? ' (its fate is unknown: its clones are kept for the orphaned-clone sweep)' : ''
      }`,
      { cause },
    );
    this.name = 'MachineCreationError';
  }
}

/**
 * Creates the clones, then the Machine, as one unit (see the comment above). Returns the Machine, also when its
 * create was answered only on a later attempt. Throws the reconcile's abort before creating anything when the
 * reconcile was already cut; otherwise a MachineCreationError whose cause is the failed request's error.
 */
export async function createMachineUnit(unit: MachineCreationUnit): Promise<Machine> {
  ambientCallSignal()?.throwIfAborted();
  return runWithoutCallSignal(() => createUnit(unit));
}

async function createUnit(unit: MachineCreationUnit): Promise<Machine> {
  const created: MachineClone[] = [];
  for (const clone of unit.clones) {
    try {
      await clone.create();
      created.push(clone);
    } catch (err) {
      // The Machine was never sent: nothing can reference the clones. One whose create was lost may still appear:
      // the delete below finds it or not, and the sweep takes one that appears later.
      await deleteClones(unit, [...created, clone]);
      throw new MachineCreationError(unit.name, 'clone', false, err, clone.kind);
    }
  }
  const outcome = await createResolved(unit);
  if (outcome.state === 'created') return outcome.machine;
  if (outcome.state === 'refused') await deleteClones(unit, created);
  else
    unit.log.warn(
      { machine: unit.name, err: { message: describeFailure(outcome.error) } },
      'could not learn whether the Machine was created: keeping its clones for the orphaned-clone sweep',
    );
  throw new MachineCreationError(unit.name, 'machine', outcome.state === 'unknown', outcome.error);
}

type CreateOutcome =
  | { state: 'created'; machine: Machine }
  | { state: 'refused'; error: unknown }
  | { state: 'unknown'; error: unknown };

/** Sends the Machine's create until the answer says whether it exists, within the unit's attempts. */
async function createResolved(unit: MachineCreationUnit): Promise<CreateOutcome> {
  const delays = unit.resolveDelaysMs ?? RESOLVE_DELAYS_MS;
  let lastError: unknown;
  for (let attempt = 0; attempt <= delays.length; attempt++) {
    if (attempt > 0) await new Promise((resolve) => setTimeout(resolve, delays[attempt - 1]));
    try {
      return { state: 'created', machine: await unit.createMachine() };
    } catch (err) {
      lastError = err;
      if (isAlreadyExists(err)) {
        // The name is this unit's: a Machine by it is this unit's own create, answered on a lost response.
        const machine = await unit.readMachine().catch(() => undefined);
        if (machine) {
          unit.log.info({ machine: unit.name }, 'the Machine create was answered late: the Machine exists');
          return { state: 'created', machine };
        }
        continue; // deleted again meanwhile, or the read failed: ask once more
      }
      // A refusal of the same body answers for every earlier attempt too, except "too many requests", which says
      // nothing of an attempt the server did take.
      if (isDefinitiveRefusal(err) && (attempt === 0 || !isTooManyRequests(err)))
        return { state: 'refused', error: err };
      unit.log.info(
        { machine: unit.name, attempt: attempt + 1, err: { message: describeFailure(err) } },
        'the Machine create was not answered: sending it again to learn its fate',
      );
    }
  }
  return { state: 'unknown', error: lastError };
}

async function deleteClones(unit: MachineCreationUnit, clones: readonly MachineClone[]): Promise<void> {
  for (const clone of [...clones].reverse()) {
    await clone.delete().catch((err: unknown) => {
      if (isNotFound(err)) return;
      unit.log.warn(
        { machine: unit.name, kind: clone.kind, err: { message: describeFailure(err) } },
        'could not delete a clone of a Machine that was not created: the orphaned-clone sweep takes it later',
      );
    });
  }
}
