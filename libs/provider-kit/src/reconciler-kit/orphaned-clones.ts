import { LABELS, type Machine } from '@capstan/api';
import {
  describeFailure,
  isConflict,
  isNotFound,
  type EventRecorder,
  type Informer,
  type KubeClient,
  type ResourceClient,
  type ResourceType,
} from '@capstan/kube';
import type { KubernetesObject } from '@kubernetes/client-node';
import type { Logger } from 'pino';

// A MachineSet or a control plane creates a Machine's infrastructure machine and bootstrap config first, then the
// Machine that references them (createMachineUnit). A process killed between the two, or a create whose fate stayed
// unknown, leaves objects that nothing may reference; they are owned by the set or control plane, so nothing else
// deletes them while it lives. After the owner created Machines, once such an object is old enough that no request
// could still create its Machine, the owner looks for them and deletes them.

/**
 * An unreferenced clone younger than this may still get its Machine: the first Machine create leaves within one
 * request timeout (30 s) of the last clone's, the last within RESOLVE_WINDOW_MS (60 s) of the first, and the API
 * server may commit a create until its own request deadline (`--request-timeout`, 60 s) after the client gave up:
 * 150 s, and a margin for a slow server.
 */
export const ORPHANED_CLONE_AGE_MS = 180_000;

export interface OrphanedCloneDeps {
  client: KubeClient;
  /** The Machine cache, read before the API server. */
  machines: Pick<Informer<Machine>, 'getByName'>;
  machinesApi: ResourceClient<Machine>;
  recorder: EventRecorder;
}

/** Where an owner's clones are: their kinds, and the labels every clone of this owner carries. */
export interface CloneLocation {
  types: readonly ResourceType[];
  labelSelector: string;
}

export class OrphanedClones {
  /** Per owner uid: when to look for orphaned clones (epoch ms). */
  private readonly due = new Map<string, number>();
  /** Owners this process has reconciled. */
  private readonly noticed = new Set<string>();

  constructor(private readonly deps: OrphanedCloneDeps) {}

  /**
   * The first reconcile of an owner in this process: clones that an earlier process (another replica before a
   * hand-over, this one before a restart) kept for a sweep are looked for once old enough.
   */
  notice(owner: KubernetesObject, now: Date): void {
    const uid = owner.metadata!.uid!;
    if (this.noticed.has(uid)) return;
    this.noticed.add(uid);
    this.expect(owner, now);
  }

  /** The owner created (or failed to create) Machines: clones left behind are looked for once old enough. */
  expect(owner: KubernetesObject, now: Date): void {
    const uid = owner.metadata!.uid!;
    if (!this.due.has(uid)) this.due.set(uid, now.getTime() + ORPHANED_CLONE_AGE_MS);
  }

  forget(uid: string | undefined): void {
    if (!uid) return;
    this.due.delete(uid);
    this.noticed.delete(uid);
  }

  /**
   * Deletes the owner's orphaned clones when a sweep is due; returns how long until the next sweep is due (a
   * clone too young to judge), or undefined when none is. A failed sweep is due again after the age threshold.
   */
  async sweepIfDue(
    owner: KubernetesObject,
    locate: () => Promise<CloneLocation>,
    now: Date,
    log: Logger,
  ): Promise<number | undefined> {
    const uid = owner.metadata!.uid!;
    const due = this.due.get(uid);
    if (due === undefined) return undefined;
    if (due > now.getTime()) return due - now.getTime();
    this.due.set(uid, now.getTime() + ORPHANED_CLONE_AGE_MS);
    const youngest = await this.sweep(owner, await locate(), now, log);
    if (youngest === undefined) {
      this.due.delete(uid);
      return undefined;
    }
    const next = youngest + ORPHANED_CLONE_AGE_MS;
    this.due.set(uid, next);
    return Math.max(1000, next - now.getTime());
  }

  /** sweepIfDue for a reconcile: a failed sweep is logged and due again later, never the reconcile's error. */
  async sweepOrRetryLater(
    owner: KubernetesObject,
    locate: () => Promise<CloneLocation>,
    now: Date,
    log: Logger,
  ): Promise<number | undefined> {
    try {
      return await this.sweepIfDue(owner, locate, now, log);
    } catch (err) {
      log.warn(
        { err: { message: describeFailure(err) } },
        'could not look for orphaned clones: trying again later',
      );
      return ORPHANED_CLONE_AGE_MS;
    }
  }

  /** Deletes every old enough unreferenced clone; returns the creation time of the youngest one left to judge. */
  private async sweep(
    owner: KubernetesObject,
    location: CloneLocation,
    now: Date,
    log: Logger,
  ): Promise<number | undefined> {
    const namespace = owner.metadata!.namespace!;
    let youngest: number | undefined;
    for (const type of location.types) {
      const clones = this.deps.client.resource<KubernetesObject>(type);
      const { items } = await clones.list({ namespace, labelSelector: location.labelSelector });
      for (const clone of items) {
        if (!unreferencedCloneOf(clone, owner)) continue;
        const created = Date.parse(clone.metadata?.creationTimestamp as unknown as string);
        if (now.getTime() - created < ORPHANED_CLONE_AGE_MS) {
          youngest = Math.max(youngest ?? created, created);
          continue;
        }
        const name = clone.metadata!.name!;
        if (await this.machineExists(namespace, name)) continue;
        // This version only: a Machine that took the clone over since the list (the core sets itself as its
        // controller) changed it, and the delete is refused.
        const deleted = await clones
          .delete(
            { namespace, name },
            {
              preconditions: { uid: clone.metadata!.uid!, resourceVersion: clone.metadata!.resourceVersion! },
            },
          )
          .then(() => true)
          .catch((err: unknown) => {
            if (isNotFound(err)) return false;
            if (isConflict(err)) {
              log.info(
                { kind: type.kind, clone: name },
                'a clone changed while being judged: looking again later',
              );
              youngest = Math.max(youngest ?? 0, now.getTime() - ORPHANED_CLONE_AGE_MS + 1_000);
              return false;
            }
            throw err;
          });
        if (!deleted) continue;
        log.info(
          { kind: type.kind, clone: name, cluster: clone.metadata?.labels?.[LABELS.clusterName] },
          'deleted a clone no Machine was created for',
        );
        void this.deps.recorder.event(owner, {
          type: 'Normal',
          reason: 'SuccessfulDelete',
          action: 'Delete',
          note: `Deleted ${type.kind} ${name}: no Machine was created for it`,
        });
      }
    }
    return youngest;
  }

  /** A clone is named after its Machine: the cache first, then the API server, so a lagging cache deletes nothing. */
  private async machineExists(namespace: string, name: string): Promise<boolean> {
    if (this.deps.machines.getByName(namespace, name)) return true;
    return (await this.deps.machinesApi.getIfExists({ namespace, name })) !== undefined;
  }
}

/** Owned by `owner` and not yet taken over by a Machine (the core makes the Machine its controller). */
function unreferencedCloneOf(clone: KubernetesObject, owner: KubernetesObject): boolean {
  if (clone.metadata?.deletionTimestamp) return false;
  const owners = clone.metadata?.ownerReferences ?? [];
  return owners.some((o) => o.uid === owner.metadata?.uid) && !owners.some((o) => o.controller);
}
