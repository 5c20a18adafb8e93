import type { KubernetesObject } from '@kubernetes/client-node';
import { readInfrastructureMachine, RESOURCES, type Machine } from '@capstan/api';
import { isForbidden, isNotFound, SECRETS, type KubeClient } from '@capstan/kube';
import { decodeSecretData, planSecretName } from '@capstan/node-agent';
import { ProviderKindError, type ProviderKinds } from '@capstan/provider-kit';
import { conditionView, conditionViews, type ConditionView } from './condition-view.js';
import { machineRow, type MachineRow } from './machine-row.js';
import { summarizePlan, type PlanSummary } from './plan-summary.js';
import { readWorkloadNode, type NodeView } from './workload-node.js';

/** A Machine's page: the Machine, its infrastructure machine, its Node and its plan, each read as the user. */
export interface MachineDetail {
  machine: MachineRow & {
    conditions: ConditionView[];
    addresses?: { type: string; address: string }[];
    nodeInfo?: Record<string, string>;
    failureDomain?: string;
    failureReason?: string;
    failureMessage?: string;
  };
  infrastructure?: {
    kind: string;
    name: string;
    conditions: ConditionView[];
    /** Provisioned (v1beta2 `status.initialization.provisioned`, v1beta1 `status.ready`). */
    ready?: boolean;
    providerID?: string;
  };
  /** Why there is no `infrastructure` section. */
  infrastructureUnavailable?: string;
  node?: NodeView;
  /** Why there is no `node` section (no Node yet, the kubeconfig not readable by the user, the cluster not answering). */
  nodeUnavailable?: string;
  plan?: PlanSummary;
  /** Why there is no `plan` section. */
  planUnavailable?: string;
}

/**
 * Reads a Machine's page with `client`, which acts as the signed-in user: a Machine they may not get fails with the
 * API server's answer; each other part they may not read (or that is not there) is left out, saying why.
 */
export async function readMachineDetail(
  client: KubeClient,
  kinds: ProviderKinds,
  namespace: string,
  name: string,
): Promise<MachineDetail> {
  const machine = await client.resource<Machine>(RESOURCES.Machine).get({ namespace, name });
  const [infrastructure, node, plan] = await Promise.all([
    readInfrastructure(client, kinds, machine),
    machine.status?.nodeRef?.name
      ? readWorkloadNode(client, namespace, machine.spec.clusterName, machine.status.nodeRef.name)
      : { unavailable: 'the Machine has no Node yet' },
    readPlan(client, namespace, name),
  ]);
  return {
    machine: machineView(machine),
    ...infrastructure,
    ...('node' in node ? { node: node.node } : { nodeUnavailable: node.unavailable }),
    ...plan,
  };
}

function machineView(machine: Machine): MachineDetail['machine'] {
  const status = machine.status;
  const addresses = status?.addresses?.map(({ type, address }) => ({ type, address }));
  const nodeInfo = status?.nodeInfo
    ? Object.fromEntries(
        Object.entries(status.nodeInfo).filter(
          (entry): entry is [string, string] => typeof entry[1] === 'string',
        ),
      )
    : undefined;
  const failure = status?.deprecated?.v1beta1;
  return {
    ...machineRow(machine),
    conditions: conditionViews(status?.conditions),
    ...(addresses && addresses.length > 0 ? { addresses } : {}),
    ...(nodeInfo && Object.keys(nodeInfo).length > 0 ? { nodeInfo } : {}),
    ...(status?.failureDomain ? { failureDomain: status.failureDomain } : {}),
    ...(failure?.failureReason ? { failureReason: failure.failureReason } : {}),
    ...(failure?.failureMessage ? { failureMessage: failure.failureMessage } : {}),
  };
}

async function readInfrastructure(
  client: KubeClient,
  kinds: ProviderKinds,
  machine: Machine,
): Promise<Pick<MachineDetail, 'infrastructure' | 'infrastructureUnavailable'>> {
  const ref = machine.spec?.infrastructureRef;
  if (!ref?.name) return { infrastructureUnavailable: 'the Machine names no infrastructure machine' };
  const what = `${ref.kind} ${machine.metadata.namespace}/${ref.name}`;
  try {
    const kind = await kinds.resolve(ref);
    const object = await client
      .resource<KubernetesObject>(kind.resource)
      .get({ namespace: machine.metadata.namespace, name: ref.name });
    const contract = readInfrastructureMachine(object, kind.contract);
    return {
      infrastructure: {
        kind: ref.kind,
        name: ref.name,
        conditions: contract.conditions
          .map((condition) => conditionView(condition))
          .filter((view): view is ConditionView => view !== undefined),
        ready: contract.provisioned,
        ...(contract.providerID ? { providerID: contract.providerID } : {}),
      },
    };
  } catch (error) {
    if (error instanceof ProviderKindError)
      return { infrastructureUnavailable: `no CRD serves ${ref.kind}.${ref.apiGroup}` };
    if (isForbidden(error)) return { infrastructureUnavailable: `you may not get ${what}` };
    if (isNotFound(error)) return { infrastructureUnavailable: `${what} does not exist` };
    throw error;
  }
}

/**
 * The plan Secret (`<machine>-machine-plan`), read as the user: what the agent reports on it, never the plan. A user
 * who may not get that Secret gets no plan section.
 */
async function readPlan(
  client: KubeClient,
  namespace: string,
  machineName: string,
): Promise<Pick<MachineDetail, 'plan' | 'planUnavailable'>> {
  const secretName = planSecretName(machineName);
  try {
    const secret = await client
      .resource<KubernetesObject & { data?: Record<string, string> }>(SECRETS)
      .get({ namespace, name: secretName });
    return { plan: summarizePlan(decodeSecretData(secret.data)) };
  } catch (error) {
    if (isForbidden(error))
      return {
        planUnavailable: `the plan's state is in Secret ${namespace}/${secretName}, which you may not get`,
      };
    if (isNotFound(error))
      return {
        planUnavailable: `no plan Secret (${secretName}): the Machine has no node agent, or is not bootstrapped yet`,
      };
    throw error;
  }
}
