import { LABELS, MachinePhase, RESOURCES, type Machine, type MachineStatus } from '@capstan/api';
import { eventDataBase } from '@capstan/events';
import { type OwedEvent } from '@capstan/provider-kit';

type MachineEventName =
  'machine.provisioning' | 'machine.provisioned' | 'machine.running' | 'machine.deleting' | 'machine.deleted';

function base(machine: Machine) {
  return {
    ...eventDataBase(machine, RESOURCES.Machine, machine.spec.clusterName),
    phase: machine.status?.phase ?? MachinePhase.Pending,
    controlPlane: machine.metadata?.labels?.[LABELS.controlPlane] !== undefined,
  };
}

/** The lifecycle event `name` about the Machine as written (its resourceVersion is part of the message id). */
export function machineEvent(name: MachineEventName, machine: Machine): OwedEvent {
  const data = base(machine);
  switch (name) {
    case 'machine.provisioning': {
      const secret = machine.spec.bootstrap?.dataSecretName;
      const ref = machine.spec.infrastructureRef;
      return {
        name,
        data: {
          ...data,
          ...(secret ? { bootstrapDataSecretName: secret } : {}),
          ...(ref ? { infrastructureRef: { apiGroup: ref.apiGroup, kind: ref.kind, name: ref.name } } : {}),
        },
      };
    }
    case 'machine.provisioned': {
      const addresses = machine.status?.addresses;
      return {
        name,
        data: { ...data, providerID: machine.spec.providerID!, ...(addresses?.length ? { addresses } : {}) },
      };
    }
    case 'machine.running':
      return {
        name,
        data: { ...data, providerID: machine.spec.providerID!, nodeName: machine.status!.nodeRef!.name },
      };
    case 'machine.deleting': {
      const nodeName = machine.status?.nodeRef?.name;
      return { name, data: { ...data, ...(nodeName ? { nodeName } : {}) } };
    }
    case 'machine.deleted':
      return { name, data };
  }
}

const PROGRESS: readonly string[] = [
  MachinePhase.Pending,
  MachinePhase.Provisioning,
  MachinePhase.Provisioned,
  MachinePhase.Running,
];
const MILESTONE: Record<string, MachineEventName> = {
  [MachinePhase.Provisioning]: 'machine.provisioning',
  [MachinePhase.Provisioned]: 'machine.provisioned',
  [MachinePhase.Running]: 'machine.running',
};

/**
 * The milestones a Machine crossed between two statuses, in order. A Machine that jumps phases (everything was
 * ready at once) still gets each milestone it passed whose data it has; Provisioning is only announced when the
 * Machine actually waited for its infrastructure.
 */
export function machineTransitions(
  before: MachineStatus | undefined,
  after: MachineStatus,
  machine: Machine,
): MachineEventName[] {
  const from = before?.phase ?? MachinePhase.Pending;
  const to = after.phase ?? MachinePhase.Pending;
  if (to === MachinePhase.Deleting) return from === MachinePhase.Deleting ? [] : ['machine.deleting'];
  const fromRank = PROGRESS.indexOf(from);
  const toRank = PROGRESS.indexOf(to);
  if (fromRank < 0 || toRank <= fromRank) return [];
  const events: MachineEventName[] = [];
  for (let rank = fromRank + 1; rank <= toRank; rank++) {
    const phase = PROGRESS[rank]!;
    if (phase === MachinePhase.Provisioning && rank !== toRank) continue;
    if (phase !== MachinePhase.Provisioning && !machine.spec.providerID) continue;
    events.push(MILESTONE[phase]!);
  }
  return events;
}
