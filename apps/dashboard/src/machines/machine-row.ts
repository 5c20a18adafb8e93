import { ConditionType, getCondition, LABELS, type Machine } from '@capstan/api';
import { conditionView, type ConditionView } from './condition-view.js';

/** A reference as the pages show it: which kind, which object (same namespace as the Machine). */
export interface ObjectRef {
  kind: string;
  name: string;
}

/**
 * One Machine of a Cluster's page: where it is in its life and what it runs on, never its spec beyond the fields
 * named here (no bootstrap data, not even the data Secret's name).
 */
export interface MachineRow {
  namespace: string;
  name: string;
  controlPlane: boolean;
  /** The MachineDeployment it belongs to (its `cluster.x-k8s.io/deployment-name` label). */
  deployment?: string;
  phase?: string;
  version?: string;
  nodeName?: string;
  providerID?: string;
  infrastructure?: ObjectRef;
  bootstrap?: ObjectRef;
  ready?: ConditionView;
  upToDate?: ConditionView;
  /**
   * An in-place update under way or failed: the Machine's v1beta2 `Updating` condition, which Capstan's core sets for
   * its in-place updates (reasons InPlaceUpdating, InPlaceUpdateFailed; docs/in-place-updates.md).
   */
  updating?: ConditionView;
  createdAt?: string;
  deleting: boolean;
}

/** A metadata time as JSON has it (a Date when an object came from client-node's typed clients). */
export function timeText(value: unknown): string | undefined {
  if (value instanceof Date) return value.toISOString();
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/** The row of `machine`. */
export function machineRow(machine: Machine): MachineRow {
  const labels = machine.metadata.labels ?? {};
  const conditions = machine.status?.conditions;
  const infrastructureRef = machine.spec?.infrastructureRef;
  const configRef = machine.spec?.bootstrap?.configRef;
  const deployment = labels[LABELS.deploymentName];
  const ready = conditionView(getCondition(conditions, ConditionType.Ready));
  const upToDate = conditionView(getCondition(conditions, ConditionType.UpToDate));
  const updating = conditionView(getCondition(conditions, ConditionType.Updating));
  const createdAt = timeText(machine.metadata.creationTimestamp);
  return {
    namespace: machine.metadata.namespace ?? '',
    name: machine.metadata.name ?? '',
    controlPlane: LABELS.controlPlane in labels,
    ...(deployment ? { deployment } : {}),
    ...(machine.status?.phase ? { phase: machine.status.phase } : {}),
    ...(machine.spec?.version ? { version: machine.spec.version } : {}),
    ...(machine.status?.nodeRef?.name ? { nodeName: machine.status.nodeRef.name } : {}),
    ...(machine.spec?.providerID ? { providerID: machine.spec.providerID } : {}),
    ...(infrastructureRef?.name
      ? { infrastructure: { kind: infrastructureRef.kind, name: infrastructureRef.name } }
      : {}),
    ...(configRef?.name ? { bootstrap: { kind: configRef.kind, name: configRef.name } } : {}),
    ...(ready ? { ready } : {}),
    ...(upToDate ? { upToDate } : {}),
    ...(updating ? { updating } : {}),
    ...(createdAt ? { createdAt } : {}),
    deleting: machine.metadata.deletionTimestamp !== undefined && machine.metadata.deletionTimestamp !== null,
  };
}
