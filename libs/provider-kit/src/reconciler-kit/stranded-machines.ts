import { ConditionReason, ConditionType, getCondition, type Machine } from '@capstan/api';
import {
  describeFailure,
  isConflict,
  isNotFound,
  type EventRecorder,
  type KubeClient,
  type ResourceClient,
  type ResourceType,
} from '@capstan/kube';
import type { KubernetesObject } from '@kubernetes/client-node';
import type { Logger } from 'pino';

// A Machine created by a MachineSet or a control plane references clones named after it. Should they be gone before
// it was ever provisioned (deleted by hand, or by an older replica's clean-up racing a create the API server
// committed late), the Machine would wait forever with BootstrapConfigReady or InfrastructureReady False
// (ObjectDoesNotExist). Its owner replaces it: nothing ran on it yet (no bootstrap data, no Node, no etcd member),
// so deleting it is safe whatever the quorum, and the owner creates a new one in its place. Upstream leaves such a
// Machine to a MachineHealthCheck's node start-up timeout; Capstan does not wait for one to be configured.

/** A Machine younger than this is not judged: whoever made it may not have created its references yet. */
export const STRANDED_MACHINE_GRACE_MS = 30_000;

/** A stranded Machine and what it misses, as `<Kind> <name>`. */
export interface StrandedMachine {
  machine: Machine;
  missing: string[];
}

export interface StrandedMachineDeps {
  client: KubeClient;
  machinesApi: ResourceClient<Machine>;
  /** The resource of a referenced kind (by its CRD's contract label). */
  resolve(apiGroup: string, kind: string): Promise<ResourceType>;
  recorder: EventRecorder;
  /** Defaults to STRANDED_MACHINE_GRACE_MS (tests shorten it). */
  graceMs?: number;
}

export interface StrandedMachineScan {
  stranded: StrandedMachine[];
  /** When a Machine that may turn out stranded is old enough to judge (ms from now). */
  recheckInMs?: number;
}

export class StrandedMachines {
  private readonly graceMs: number;

  constructor(private readonly deps: StrandedMachineDeps) {
    this.graceMs = deps.graceMs ?? STRANDED_MACHINE_GRACE_MS;
  }

  /**
   * The owner's Machines whose bootstrap config or infrastructure machine does not exist although it never got
   * bootstrap data: suspected from the core's conditions in the cache, confirmed by reading each reference from
   * the API server (a failed read confirms nothing).
   */
  async scan(machines: readonly Machine[], now: Date, log: Logger): Promise<StrandedMachineScan> {
    const stranded: StrandedMachine[] = [];
    let recheckInMs: number | undefined;
    for (const machine of machines) {
      if (machine.metadata.deletionTimestamp || machine.spec.bootstrap?.dataSecretName) continue;
      if (!suspected(machine)) continue;
      const age = now.getTime() - Date.parse(String(machine.metadata.creationTimestamp));
      if (!(age >= this.graceMs)) {
        const wait = Number.isNaN(age) ? this.graceMs : this.graceMs - age;
        recheckInMs = Math.min(recheckInMs ?? wait, wait);
        continue;
      }
      const missing = await this.missingReferences(machine).catch((err: unknown) => {
        log.info(
          { machine: machine.metadata.name, err: { message: describeFailure(err) } },
          'could not read the references of a Machine that looks stranded: looking again later',
        );
        recheckInMs = Math.min(recheckInMs ?? this.graceMs, this.graceMs);
        return [];
      });
      if (missing.length > 0) stranded.push({ machine, missing });
    }
    return { stranded, ...(recheckInMs !== undefined && { recheckInMs: Math.max(1_000, recheckInMs) }) };
  }

  /**
   * Deletes a stranded Machine (this version only: one that changed since it was judged is judged again) and says
   * so on the owner and the Machine. Returns whether it was deleted.
   */
  async replace(owner: KubernetesObject, stranded: StrandedMachine, log: Logger): Promise<boolean> {
    const { machine, missing } = stranded;
    const name = machine.metadata.name!;
    try {
      await this.deps.machinesApi.delete(
        { namespace: machine.metadata.namespace, name },
        { preconditions: { uid: machine.metadata.uid!, resourceVersion: machine.metadata.resourceVersion! } },
      );
    } catch (err) {
      if (isNotFound(err) || isConflict(err)) return false;
      throw err;
    }
    const note = `Replacing Machine ${name}: ${missing.join(' and ')} ${missing.length > 1 ? 'do' : 'does'} not exist and it was never provisioned`;
    log.warn({ machine: name, missing }, 'replacing a stranded machine');
    for (const regarding of [owner, machine]) {
      void this.deps.recorder.event(regarding, {
        type: 'Warning',
        reason: 'StrandedMachineReplaced',
        action: 'Delete',
        note,
        ...(regarding !== machine && { related: machine }),
      });
    }
    return true;
  }

  private async missingReferences(machine: Machine): Promise<string[]> {
    const namespace = machine.metadata.namespace;
    const missing: string[] = [];
    const refs = [machine.spec.bootstrap?.configRef, machine.spec.infrastructureRef].filter(
      (ref): ref is NonNullable<typeof ref> => ref !== undefined,
    );
    for (const ref of refs) {
      const type = await this.deps.resolve(ref.apiGroup, ref.kind);
      const found = await this.deps.client.resource(type).getIfExists({ namespace, name: ref.name });
      if (!found) missing.push(`${ref.kind} ${ref.name}`);
    }
    return missing;
  }
}

/** The core found a reference missing before the Machine was provisioned. */
function suspected(machine: Machine): boolean {
  const conditions = machine.status?.conditions;
  return [ConditionType.BootstrapConfigReady, ConditionType.InfrastructureReady].some((type) => {
    const condition = getCondition(conditions, type);
    return condition?.status === 'False' && condition.reason === ConditionReason.ObjectDoesNotExist;
  });
}
