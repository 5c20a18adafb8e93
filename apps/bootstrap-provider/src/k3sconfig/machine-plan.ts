import type { V1OwnerReference, V1Secret } from '@kubernetes/client-node';
import {
  ConditionStatus,
  ConditionType,
  LABELS,
  RESOURCES,
  type ConditionInput,
  type K3sConfig,
  type K3sConfigPlanStatus,
  type Machine,
} from '@capstan/api';
import { certificateCheckInstruction, K3S_SERVER_TLS_DIR, type K3sRole, type NodeAgentBootstrap } from '@capstan/k3s-bootstrap';
import { formatLabelValue, isAlreadyExists, type KubeClient, type ResourceClient } from '@capstan/kube';
import {
  decodeSecretData,
  ensurePlanAccess,
  MACHINE_NAME_LABEL,
  MACHINE_PLAN_SECRET_TYPE,
  PLAN_KEYS,
  planChecksum,
  planSecretName,
  probeStatusesOf,
  requestAgentToken,
  text,
  type MachinePlan,
} from '@capstan/node-agent';
import { eventDataBase } from '@capstan/events';
import type { OwedEvent } from '@capstan/provider-kit';

export { MACHINE_NAME_LABEL } from '@capstan/node-agent';

/** How the machine's node agent reaches the management cluster (the provider's own API server by default). */
export interface AgentConnection {
  server: string;
  caPem: string;
}

/** Reasons of the `PlanApplied` condition (Rancher's plan status messages, in v1beta2 form). */
export const PlanAppliedReason = {
  PlanApplied: 'PlanApplied',
  WaitingForAgent: 'WaitingForAgent',
  WaitingForPlanApplied: 'WaitingForPlanApplied',
  WaitingForProbes: 'WaitingForProbes',
  PlanFailed: 'PlanFailed',
  PlanSecretMissing: 'PlanSecretMissing',
  /** The node agent has not renewed its heartbeat Lease for the Lease's duration: what its plan is, nobody knows. */
  AgentNotReporting: 'AgentNotReporting',
} as const;

/**
 * The first plan of a machine: nothing to change (the bootstrap data installed K3s), and for servers a probe of
 * the cluster's API server through the CA the bootstrap data wrote, so `PlanApplied` says the agent checked in and,
 * for servers, that the API answers; and the hourly certificate check whose output says when the server's
 * certificates expire (docs/day2.md). Later plans keep both.
 */
export function initialPlanFor(role: K3sRole, endpoint: { host: string; port: number } | undefined): MachinePlan {
  if (role === 'agent' || !endpoint) return {};
  const host = endpoint.host.includes(':') ? `[${endpoint.host}]` : endpoint.host;
  return {
    periodicInstructions: [certificateCheckInstruction()],
    probes: {
      'kube-apiserver': {
        failureThreshold: 5,
        // The files K3s keeps on every server (Rancher's planner probes with the same ones).
        httpGet: {
          url: `https://${host}:${endpoint.port}/readyz`,
          caCert: `${K3S_SERVER_TLS_DIR}/server-ca.crt`,
          clientCert: `${K3S_SERVER_TLS_DIR}/client-kube-apiserver.crt`,
          clientKey: `${K3S_SERVER_TLS_DIR}/client-kube-apiserver.key`,
        },
      },
    },
  };
}

/**
 * Creates the plan Secret of a machine (controlled by the K3sConfig, labelled with its cluster and machine) with
 * `plan` as its pending plan, or with no plan; one that exists stays as it is.
 */
export async function createPlanSecret(
  secrets: ResourceClient<V1Secret>,
  config: K3sConfig,
  machine: Machine,
  plan: MachinePlan | undefined,
): Promise<void> {
  try {
    await secrets.create({
      metadata: {
        name: planSecretName(machine.metadata.name!),
        namespace: config.metadata.namespace!,
        labels: { [LABELS.clusterName]: machine.spec.clusterName, [MACHINE_NAME_LABEL]: formatLabelValue(machine.metadata.name!) },
        ownerReferences: [k3sConfigOwner(config)],
      },
      type: MACHINE_PLAN_SECRET_TYPE,
      data: plan
        ? {
            [PLAN_KEYS.plan]: Buffer.from(JSON.stringify(plan)).toString('base64'),
            [PLAN_KEYS.state]: Buffer.from('pending').toString('base64'),
          }
        : {},
    });
  } catch (error) {
    if (!isAlreadyExists(error)) throw error;
  }
}

const k3sConfigOwner = (config: K3sConfig): V1OwnerReference => ({
  apiVersion: `${RESOURCES.K3sConfig.group}/${RESOURCES.K3sConfig.version}`,
  kind: RESOURCES.K3sConfig.kind,
  name: config.metadata.name!,
  uid: config.metadata.uid!,
  controller: true,
  blockOwnerDeletion: true,
});

/**
 * The plan Secret of a machine (created with the initial plan), its ServiceAccount, Role and RoleBinding, and a
 * fresh short-lived token of that ServiceAccount: what the bootstrap data hands the machine's node agent.
 */
export async function prepareNodeAgent(
  client: KubeClient,
  secrets: ResourceClient<V1Secret>,
  config: K3sConfig,
  machine: Machine,
  connection: AgentConnection,
  initialPlan: MachinePlan,
  leaseDurationSeconds?: number,
): Promise<NodeAgentBootstrap> {
  const namespace = config.metadata.namespace!;
  const name = planSecretName(machine.metadata.name!);
  await createPlanSecret(secrets, config, machine, initialPlan);
  await ensurePlanAccess(client, namespace, name, k3sConfigOwner(config), leaseDurationSeconds);
  const { token } = await requestAgentToken(client, namespace, name);
  return { server: connection.server, caPem: connection.caPem, token, namespace, secretName: name };
}

/** What the plan Secret says, as K3sConfig `status.plan` reports it (no content, no output). */
export function planStatusFrom(secretName: string, secret: V1Secret | undefined): K3sConfigPlanStatus {
  if (!secret) return { secretName };
  const data = decodeSecretData(secret.data);
  const raw = data[PLAN_KEYS.plan];
  const state = text(data, PLAN_KEYS.state);
  const probes = Object.values(probeStatusesOf(data));
  const revision = Number.parseInt(text(data, PLAN_KEYS.revision) ?? '', 10);
  const failures = Number.parseInt(text(data, PLAN_KEYS.failureCount) ?? '', 10);
  const applied = text(data, PLAN_KEYS.appliedChecksum);
  return {
    secretName,
    ...(raw && raw.length > 0 && { checksum: planChecksum(raw) }),
    ...(applied && /^[a-f0-9]{64}$/.test(applied) && { appliedChecksum: applied }),
    ...(state && ['pending', 'in-progress', 'succeeded', 'failed'].includes(state) && {
      state: state as NonNullable<K3sConfigPlanStatus['state']>,
    }),
    ...(Number.isFinite(revision) && revision >= 0 && { revision }),
    ...(Number.isFinite(failures) && failures > 0 && { failureCount: failures }),
    ...(probes.length > 0 && { probesHealthy: probes.every((p) => p.healthy) }),
  };
}

/** The probes of the Secret's current report that are not healthy (names only). */
function unhealthyProbes(secret: V1Secret | undefined): string[] {
  if (!secret) return [];
  return Object.entries(probeStatusesOf(decodeSecretData(secret.data)))
    .filter(([, status]) => !status.healthy)
    .map(([name]) => name)
    .sort();
}

/** `PlanApplied` as Rancher's planner words it, from the plan Secret. */
export function planAppliedCondition(
  plan: K3sConfigPlanStatus,
  secret: V1Secret | undefined,
  /** The duration (seconds) of the heartbeat Lease the agent did not renew, when it is silent. */
  agentSilentPastSeconds?: number,
): ConditionInput {
  const condition = (status: ConditionStatus, reason: string, message?: string): ConditionInput => ({
    type: ConditionType.PlanApplied,
    status,
    reason,
    ...(message && { message }),
  });
  if (!secret) {
    return condition(ConditionStatus.Unknown, PlanAppliedReason.PlanSecretMissing, `plan Secret ${plan.secretName} not found`);
  }
  if (agentSilentPastSeconds !== undefined) {
    return condition(
      ConditionStatus.Unknown,
      PlanAppliedReason.AgentNotReporting,
      `node agent has not renewed its heartbeat Lease within ${agentSilentPastSeconds}s`,
    );
  }
  if (plan.state === 'failed' && plan.checksum !== undefined) {
    const failure = text(decodeSecretData(secret.data), PLAN_KEYS.failureMessage) ?? 'failed';
    return condition(ConditionStatus.False, PlanAppliedReason.PlanFailed, `plan failed: ${failure.slice(0, 512)}`);
  }
  const applied = plan.checksum !== undefined && plan.appliedChecksum === plan.checksum && plan.state !== 'pending' && plan.state !== 'in-progress';
  if (!applied) {
    return plan.appliedChecksum === undefined
      ? condition(ConditionStatus.False, PlanAppliedReason.WaitingForAgent, 'waiting for agent to check in and apply the initial plan')
      : condition(ConditionStatus.False, PlanAppliedReason.WaitingForPlanApplied, 'waiting for plan to be applied');
  }
  const unhealthy = unhealthyProbes(secret);
  if (unhealthy.length > 0 || plan.probesHealthy === false) {
    return condition(ConditionStatus.False, PlanAppliedReason.WaitingForProbes, `waiting for probes: ${unhealthy.join(', ')}`);
  }
  return condition(ConditionStatus.True, PlanAppliedReason.PlanApplied, `plan ${plan.checksum!.slice(0, 12)} applied`);
}

/** The machine-plan hand-offs a change of `status.plan` makes (durable: derived from the object, not memory). */
export function planEvents(
  before: K3sConfigPlanStatus | undefined,
  after: K3sConfigPlanStatus,
  machine: Machine,
  secret: V1Secret | undefined,
): OwedEvent[] {
  if (!after.checksum) return [];
  const base = {
    ...eventDataBase(machine, RESOURCES.Machine, machine.spec.clusterName),
    planSecretName: after.secretName,
    checksum: after.checksum,
    revision: after.revision ?? 0,
  };
  const events: OwedEvent[] = [];
  const newlyApplied =
    after.state === 'succeeded' &&
    after.appliedChecksum === after.checksum &&
    (before?.state !== 'succeeded' || before.appliedChecksum !== after.appliedChecksum);
  if (newlyApplied) events.push({ name: 'machine-plan.applied', data: base });
  const newlyFailed =
    after.state === 'failed' &&
    (before?.state !== 'failed' || before.failureCount !== after.failureCount || before.checksum !== after.checksum);
  if (newlyFailed) {
    const failure = (secret && text(decodeSecretData(secret.data), PLAN_KEYS.failureMessage)) || 'failed';
    events.push({
      name: 'machine-plan.failed',
      data: { ...base, failure: failure.slice(0, 1024), failureCount: after.failureCount ?? 1 },
    });
  }
  const newlyHealthy =
    after.state === 'succeeded' &&
    after.probesHealthy === true &&
    !(before?.probesHealthy === true && before.appliedChecksum === after.appliedChecksum);
  if (newlyHealthy) {
    const probes = secret ? Object.keys(probeStatusesOf(decodeSecretData(secret.data))).sort() : [];
    events.push({ name: 'machine-plan.probes-healthy', data: { ...base, probes } });
  }
  return events;
}
