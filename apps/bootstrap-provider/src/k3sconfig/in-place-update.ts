import type { V1Secret } from '@kubernetes/client-node';
import { stringify } from 'yaml';
import {
  IN_PLACE_ANNOTATIONS,
  type K3sConfigInPlaceUpdateStatus,
  type K3sConfigPlanStatus,
  type Machine,
} from '@capstan/api';
import {
  K3S_CONFIG_PATH,
  K3S_INSTALL_SCRIPT_PATH,
  execFor,
  k3sConfigFor,
  FileDecodingBudget,
  validateBootstrapInput,
  YAML_OPTIONS,
  type K3sBootstrapInput,
} from '@capstan/k3s-bootstrap';
import { maskSecrets } from '@capstan/kube';
import {
  decodeSecretData,
  gunzipJson,
  InvalidPlanError,
  parsePlan,
  PLAN_KEYS,
  probeStatusesOf,
  text,
  type MachinePlan,
  type PlanFile,
} from '@capstan/node-agent';
import { registriesFilesRemoved, registriesPlanFiles } from './registries-plan.js';

// The bootstrap provider's half of an in-place update (docs/in-place-updates.md): once the core says the machine
// may start (`ready-to-update` equals `update-in-progress`), the machine's plan becomes its K3s config file, its
// registries.yaml, the user's files and, when K3s restarts, the install script with the new release; the agent
// applies it; the outcome goes to `status.inPlaceUpdate` (the contract field the core reads) and
// `machine.updated`.

/** How much of a failed instruction's output a condition shows (its tail). */
const OUTPUT_TAIL = 512;

/** How long the probes of an applied update plan may stay unhealthy before the update counts as failed. */
export const PROBES_DEADLINE_MS = 5 * 60_000;

export interface UpdatePlanInput {
  /** The renderer's input for this machine now (role, spec with the new release, endpoint, token). */
  render: K3sBootstrapInput;
  /** Restart K3s: run the install script with the new release (the core drained the node first). */
  restart: boolean;
  /** The probes and periodic instructions of the machine's plan (kept across updates). */
  probes: MachinePlan['probes'];
  periodicInstructions?: MachinePlan['periodicInstructions'];
  /** The plan in the machine's plan Secret now: the registries files it wrote that the new spec lacks are removed. */
  current?: MachinePlan;
}

/**
 * The plan that brings a running machine to `render`'s configuration. Its input passes the rules the rendered
 * bootstrap data passes (reserved paths, duplicates, flags) and its files the same decoding limit: a plan is as much
 * tenant input as a cloud-config. Throws BootstrapRenderError or BootstrapDataError, naming the field.
 */
export function updatePlanFor(input: UpdatePlanInput): MachinePlan {
  const { render } = input;
  validateBootstrapInput(render, 'in-place-plan');
  const budget = new FileDecodingBudget();
  const files: PlanFile[] = [
    {
      path: K3S_CONFIG_PATH,
      permissions: '0600',
      content: Buffer.from(stringify(k3sConfigFor(render), YAML_OPTIONS)).toString('base64'),
    },
    ...registriesPlanFiles(render.spec.registries),
    ...(render.spec.files ?? []).map((file, index) => {
      const bytes = budget.decode(file.content, file.encoding, `spec.files[${index}].content`);
      return {
        path: file.path,
        ...(file.permissions !== undefined && { permissions: file.permissions }),
        content: bytes.toString('base64'),
      };
    }),
  ];
  files.push(...registriesFilesRemoved(input.current, files));
  const scriptPath = render.spec.airGapped
    ? (render.spec.airGappedInstallScriptPath ?? K3S_INSTALL_SCRIPT_PATH)
    : K3S_INSTALL_SCRIPT_PATH;
  return {
    files,
    ...(input.restart && {
      instructions: [
        {
          name: 'install',
          // The script K3s was installed with, found on the machine (the agent says where its root is).
          command: 'sh',
          args: ['-c', `exec sh "\${CAPSTAN_HOST_ROOT%/}${scriptPath}"`],
          env: [
            `INSTALL_K3S_VERSION=${render.spec.version}`,
            `INSTALL_K3S_EXEC=${execFor(render.role)}`,
            ...(render.spec.airGapped ? ['INSTALL_K3S_SKIP_DOWNLOAD=true'] : []),
          ],
          saveOutput: true,
        },
      ],
    }),
    ...(input.periodicInstructions?.length && { periodicInstructions: input.periodicInstructions }),
    ...(input.probes && Object.keys(input.probes).length > 0 && { probes: input.probes }),
  };
}

/** The update the Machine asks for, and whether the core let it start. */
export function requestedUpdate(machine: Machine): { target: string; ready: boolean; restart: boolean } | undefined {
  const annotations = machine.metadata.annotations ?? {};
  const target = annotations[IN_PLACE_ANNOTATIONS.updateInProgress];
  if (!target) return undefined;
  return {
    target,
    ready: annotations[IN_PLACE_ANNOTATIONS.readyToUpdate] === target,
    restart: annotations[IN_PLACE_ANNOTATIONS.restart] === 'true',
  };
}

export { writePlan } from '@capstan/node-agent';

/** The plan in a machine's plan Secret, or undefined when it holds none or one the agent would refuse too. */
export function currentPlanOf(secret: V1Secret): MachinePlan | undefined {
  const raw = decodeSecretData(secret.data)[PLAN_KEYS.plan];
  if (!raw || raw.length === 0) return undefined;
  try {
    return parsePlan(raw);
  } catch (error) {
    if (error instanceof InvalidPlanError) return undefined;
    throw error;
  }
}

/**
 * Where the update stands, from the plan the agent reported on: Succeeded once the update's plan applied and its
 * probes (if any) are healthy; Failed with the failing step and the tail of its output, secrets masked, or when the
 * machine's agent stopped reporting (its heartbeat Lease went unrenewed) before the update finished, so an update
 * never waits on a dead agent. Both are final for their target: a new target starts a new update.
 */
export function updateOutcome(
  update: K3sConfigInPlaceUpdateStatus,
  plan: K3sConfigPlanStatus,
  secret: V1Secret | undefined,
  knownSecrets: readonly string[],
  now: Date = new Date(),
  /** The heartbeat Lease duration the agent did not renew within, when it is silent (AgentLiveness.silentPast). */
  agentSilentPastSeconds?: number,
): K3sConfigInPlaceUpdateStatus {
  // Done is done: a probe that flaps later (another server restarting) does not reopen the update.
  if (update.state !== 'Updating') return update;
  if (agentSilentPastSeconds !== undefined && !(plan.state === 'succeeded' && plan.appliedChecksum === update.planChecksum && plan.probesHealthy !== false)) {
    return {
      ...update,
      state: 'Failed',
      message: `the node agent stopped reporting (heartbeat Lease not renewed within ${agentSilentPastSeconds}s) before the update finished`,
    };
  }
  if (!update.planChecksum || plan.checksum !== update.planChecksum || !secret) return update;
  if (plan.state === 'failed') {
    const data = decodeSecretData(secret.data);
    const step = text(data, PLAN_KEYS.failureMessage) ?? 'failed';
    let output = Object.values(gunzipJson<Record<string, string>>(data[PLAN_KEYS.failedOutput]) ?? {}).join('\n');
    // Masked whole, then cut: a cut through a secret would leave a piece no pattern recognises.
    for (const value of knownSecrets) if (value) output = output.split(value).join('[redacted]');
    const tail = maskSecrets(output.trim()).slice(-OUTPUT_TAIL);
    const message = maskSecrets(tail ? `${step}: ${tail}` : step).slice(0, 2048);
    return { ...update, state: 'Failed', message };
  }
  const applied = plan.state === 'succeeded' && plan.appliedChecksum === update.planChecksum;
  if (applied && plan.probesHealthy !== false) {
    const { message: _cleared, planAppliedAt: _seen, ...rest } = update;
    return { ...rest, state: 'Succeeded' };
  }
  // The probes' deadline runs from when this provider first saw the plan applied, on its own clock: the agent's
  // `last-apply-time` is the machine's clock, which may be off by any amount.
  const planAppliedAt = applied ? (update.planAppliedAt ?? now.toISOString()) : undefined;
  const waited = planAppliedAt ? now.getTime() - Date.parse(planAppliedAt) : 0;
  if (waited > PROBES_DEADLINE_MS) {
    const unhealthy = Object.entries(probeStatusesOf(decodeSecretData(secret.data)))
      .filter(([, probe]) => !probe.healthy)
      .map(([name]) => name)
      .sort();
    return {
      ...update,
      state: 'Failed',
      message: `probes never became healthy within ${PROBES_DEADLINE_MS / 60_000} minutes of the plan being applied: ${unhealthy.join(', ')}`,
    };
  }
  const { message: _cleared, planAppliedAt: _seen, ...rest } = update;
  return { ...rest, ...(planAppliedAt && { planAppliedAt }), state: 'Updating' };
}

/** When to look again at an update whose plan applied but whose probes are not healthy yet (its deadline). */
export function probesDeadlineIn(update: K3sConfigInPlaceUpdateStatus, plan: K3sConfigPlanStatus, secret: V1Secret | undefined, now: Date = new Date()): number | undefined {
  if (update.state !== 'Updating' || !secret || plan.appliedChecksum !== update.planChecksum || plan.probesHealthy !== false) {
    return undefined;
  }
  const waited = update.planAppliedAt ? now.getTime() - Date.parse(update.planAppliedAt) : 0;
  return Math.max(1000, PROBES_DEADLINE_MS - waited + 1000);
}
