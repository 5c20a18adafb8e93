import type { Machine } from '@capstan/api';
import {
  ambientCallSignal,
  describeFailure,
  isAlreadyExists,
  isDefinitiveRefusal,
  isInvalid,
  isNotFound,
  runWithoutCallSignal,
  statusCodeOf,
  type WriteOptions,
} from '@capstan/kube';
import type { Logger } from 'pino';

// A MachineSet or a control plane creates a Machine as one unit: its bootstrap config and infrastructure machine
// (clones named after it), then the Machine that references them. The rule that keeps a Machine from ever pointing
// at objects that are gone: clones are deleted only when it is certain the Machine does not exist and never will,
// because its create was never sent, the API server refused it, or the server's own deadline for it has passed and a
// read finds no Machine.
//
// A create whose answer was lost (the reconcile cut by a hand-over or its deadline, a timeout, a broken connection,
// a 5xx) may still be committed by the server after a read that says "absent". Every Machine create carries the
// server's deadline (`?timeout=`, MACHINE_CREATE_SERVER_TIMEOUT_SECONDS), so the server applies it within that time
// of reading it or never. While the reconcile may go on, a lost answer is resolved by sending the same create again
// (the name is the unit's own) until the server answers created, already exists or refused. Otherwise the unit
// settles it in the background once that deadline has passed: a read then is definitive, and the clones go when it
// finds no Machine. The owner's orphaned-clone sweep is the backstop for a process that dies first, and the owner
// replaces a Machine whose clones are gone anyway (StrandedMachines).
//
// The requests run under the reconcile's signal: a replica that lost the cluster stops at once and never sends a
// create the new owner cannot know about. Only clean-ups (deletes of clones no Machine can reference) run outside it.

/** One object created before the Machine, which the Machine references by name. */
export interface MachineClone {
  /** For logs and errors: `K3sConfig`, `SimMachine`, ... */
  kind: string;
  /** Creates it with these options (the server's deadline). */
  create(options: WriteOptions): Promise<unknown>;
  /** Deletes it; NotFound counts as done. */
  delete(): Promise<unknown>;
}

export interface MachineCreationUnit {
  /** The Machine's name, which its clones share. */
  name: string;
  /** Clones in creation order; each is created only once the ones before it were. */
  clones: readonly MachineClone[];
  /** Sends the Machine's create (the same body each time) with these options (the server's deadline). */
  createMachine(options: WriteOptions): Promise<Machine>;
  /** Reads the Machine from the API server (undefined when it does not exist). */
  readMachine(): Promise<Machine | undefined>;
  log: Logger;
  /** Pauses between attempts to resolve a create whose answer was lost (tests make them short). */
  resolveDelaysMs?: readonly number[];
  /** How long after a lost answer its fate is settled by a read (SETTLE_AFTER_MS; tests make it short). */
  settleAfterMs?: number;
}

/** How often, and after what pauses, a create whose answer was lost is sent again. */
export const RESOLVE_DELAYS_MS: readonly number[] = [500, 2_000, 5_000];

/** The API server applies a create of the unit (a clone's, the Machine's) within this of reading it, or never. */
export const MACHINE_CREATE_SERVER_TIMEOUT_SECONDS = 10;
const WITH_SERVER_DEADLINE: WriteOptions = { serverTimeoutSeconds: MACHINE_CREATE_SERVER_TIMEOUT_SECONDS };

/**
 * A lost answer's fate is read this long after it was lost: past the server's deadline for the request, with a
 * margin for a server slow to read it.
 */
export const SETTLE_AFTER_MS = MACHINE_CREATE_SERVER_TIMEOUT_SECONDS * 1000 + 5_000;

/**
 * No create is sent again this long after the first was: the orphaned-clone sweep's age threshold counts on it (the
 * last create leaves within this of the first, and the API server may commit it up to its request deadline later).
 */
export const RESOLVE_WINDOW_MS = 60_000;

/** The unit failed; `stage` says where, `clonesKept` whether its clones stay until the Machine's fate is settled. */
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
        clonesKept ? ' (its fate is not known yet: its clones stay until it is)' : ''
      }`,
      { cause },
    );
    this.name = 'MachineCreationError';
  }
}

/**
 * Creates the clones, then the Machine, as one unit (see the comment above). Returns the Machine, also when its
 * create was answered only on a later attempt; otherwise throws a MachineCreationError whose cause is the failed
 * request's error.
 */
export async function createMachineUnit(unit: MachineCreationUnit): Promise<Machine> {
  const created: MachineClone[] = [];
  for (const clone of unit.clones) {
    try {
      await clone.create(WITH_SERVER_DEADLINE);
      created.push(clone);
    } catch (err) {
      // The Machine was never sent: nothing can reference the clones. One that already existed is someone else's.
      // One whose create was lost may still land until the server's deadline: it is deleted again after it.
      await runWithoutCallSignal(async () => {
        await deleteClones(unit, isAlreadyExists(err) ? created : [...created, clone]);
        if (!isDefinitiveRefusal(err)) settleLater(unit, [clone], { machineSent: false });
      });
      throw new MachineCreationError(unit.name, 'clone', false, err, clone.kind);
    }
  }
  const outcome = await createResolved(unit);
  if (outcome.state === 'created') return outcome.machine;
  if (outcome.state === 'refused') await runWithoutCallSignal(() => deleteClones(unit, created));
  else {
    unit.log.info(
      { machine: unit.name, err: { message: describeFailure(outcome.error) } },
      'could not learn yet whether the Machine was created: its clones stay until the server has decided',
    );
    runWithoutCallSignal(() => settleLater(unit, created, { machineSent: true }));
  }
  throw new MachineCreationError(unit.name, 'machine', outcome.state === 'unknown', outcome.error);
}

/**
 * Once the server's deadline for every create sent has passed, a read says for good whether the Machine exists:
 * absent (or never sent), the clones go; present, it holds them. A failed read leaves them to the orphaned-clone
 * sweep. In the background: nothing waits for it (a process that stops first leaves the clones to the sweep).
 */
function settleLater(
  unit: MachineCreationUnit,
  clones: readonly MachineClone[],
  { machineSent }: { machineSent: boolean },
): void {
  const timer = setTimeout(() => {
    void (async () => {
      if (machineSent && (await unit.readMachine())) return;
      await deleteClones(unit, clones);
      unit.log.info(
        { machine: unit.name },
        'settled a create whose answer was lost: deleted what no Machine references',
      );
    })().catch((err: unknown) =>
      unit.log.warn(
        { machine: unit.name, err: { message: describeFailure(err) } },
        'could not settle a create whose answer was lost: the orphaned-clone sweep judges the clones later',
      ),
    );
  }, unit.settleAfterMs ?? SETTLE_AFTER_MS);
  timer.unref();
}

type CreateOutcome =
  | { state: 'created'; machine: Machine }
  | { state: 'refused'; error: unknown }
  | { state: 'unknown'; error: unknown };

/** Sends the Machine's create until the answer says whether it exists, while the reconcile may go on. */
async function createResolved(unit: MachineCreationUnit): Promise<CreateOutcome> {
  const delays = unit.resolveDelaysMs ?? RESOLVE_DELAYS_MS;
  const signal = ambientCallSignal();
  const firstSentAt = Date.now();
  let lastError: unknown;
  for (let attempt = 0; attempt <= delays.length; attempt++) {
    if (attempt > 0) {
      if (signal?.aborted || Date.now() - firstSentAt > RESOLVE_WINDOW_MS) break;
      await new Promise((resolve) => setTimeout(resolve, delays[attempt - 1]));
      if (signal?.aborted) break;
    }
    try {
      return {
        state: 'created',
        machine: await unit.createMachine(WITH_SERVER_DEADLINE),
      };
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
      if (refusesEveryAttempt(err, attempt)) return { state: 'refused', error: err };
      unit.log.info(
        { machine: unit.name, attempt: attempt + 1, err: { message: describeFailure(err) } },
        'the Machine create was not answered: sending it again to learn its fate',
      );
    }
  }
  return { state: 'unknown', error: lastError };
}

/**
 * Whether a refusal of attempt `attempt` means no attempt created the Machine. The first attempt's refusal is its own
 * answer; a later one speaks for the earlier ones only when it judged the body itself (400, 422), which is the same
 * every time. A 401, 403, 404 or 429 now says nothing of an attempt the server took before.
 */
function refusesEveryAttempt(err: unknown, attempt: number): boolean {
  if (!isDefinitiveRefusal(err)) return false;
  return attempt === 0 || isInvalid(err) || statusCodeOf(err) === 400;
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
