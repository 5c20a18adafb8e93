// The chaos run's agent phase (issue 32): node agent processes, each confined and applying a stream of plans, under
// agent faults: SIGKILL mid-instruction (then started again, as the sim's supervisor or systemd would), the plan
// Secret deleted mid-apply (then made again without a plan, as the bootstrap provider does), and the management
// kube-apiserver stopped for a while during an apply. Every plan's one instruction leaves side effects in its
// machine (`start <plan> <attempt>`, `end <plan>`): a plan applied twice without a crash between is counted.
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { V1Secret } from '@kubernetes/client-node';
import { KubeConfig } from '@kubernetes/client-node';
import { isNotFound, SECRETS, type KubeClient } from '@capstan/kube';
import {
  agentMachineRoot,
  createPlanMachine,
  decodeSecretData,
  MACHINE_PLAN_SECRET_TYPE,
  PLAN_KEYS,
  planChecksum,
  text,
  type MachinePlan,
} from '@capstan/node-agent';
import { eventually, repoRoot, restartApiServer, type LocalEnvironment } from '@capstan/testing';
import { startProcess, stopPid, type ManagedProcess } from '@capstan/testing/local-host';
import type { Random } from './random.js';

export type AgentFaultKind = 'agent-kill' | 'plan-secret-deleted' | 'api-refused';

export interface AgentFaultsReport {
  agents: number;
  plans: number;
  /** Plans that reached `succeeded` (a plan whose Secret was deleted mid-apply is not expected to). */
  applied: number;
  faults: Record<AgentFaultKind, number>;
  /** How long the management kube-apiserver was down during applies. */
  apiOutageSeconds: number;
  /** Instruction runs in all, and those a kill made legitimate (a plan resumed after its agent died). */
  runs: number;
  resumesAfterKill: number;
  /** Plans whose effects show a second application that no crash explains. */
  doubleApplications: number;
  /** Plans that did not reach `succeeded` within the wait (their agents are named in `samples`). */
  stuck: number;
  samples: string[];
  elapsedMs: number;
}

export interface AgentFaultsInput {
  env: LocalEnvironment;
  admin: KubeClient;
  namespace: string;
  /** Roots, state and logs of the agents go under it (logs to `<logDir>/agent-<i>.log`). */
  dir: string;
  logDir: string;
  random: Random;
  log: (line: string) => void;
  agents: number;
  rounds: number;
  apiOutageSeconds: number;
}

interface ChaosAgent {
  index: number;
  secretName: string;
  root: string;
  stateDir: string;
  logFile: string;
  process: ManagedProcess;
  /** Plan number -> kills that landed while it ran. */
  killsDuring: Map<number, number>;
  /** Plans whose Secret was deleted while they ran: they may have run once or not finished. */
  deletedDuring: Set<number>;
  token: string;
}

const PLAN_WAIT_MS = 240_000;
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** One plan: a file and one instruction that records its run in the machine and takes a few seconds. */
function planOf(round: number, seconds: number): MachinePlan {
  return {
    files: [{ path: `/etc/chaos/round`, content: Buffer.from(String(round)).toString('base64'), permissions: '0644' }],
    instructions: [
      {
        name: 'effects',
        command: 'sh',
        args: ['-c', `echo "start ${round} $CAPSTAN_AGENT_ATTEMPT_NUMBER" >> /effects; sleep ${seconds}; echo "end ${round}" >> /effects`],
        timeoutSeconds: 120,
      },
    ],
  };
}

/** Every line the instruction wrote into the machine so far. */
function effectsOf(agent: ChaosAgent): string[] {
  const file = join(agent.root, 'effects');
  return existsSync(file) ? readFileSync(file, 'utf8').trim().split('\n').filter(Boolean) : [];
}

const startsIn = (effects: readonly string[], round: number) => effects.filter((l) => l.startsWith(`start ${round} `)).length;
const endsIn = (effects: readonly string[], round: number) => effects.filter((l) => l === `end ${round}`).length;
const startsOf = (agent: ChaosAgent, round: number) => startsIn(effectsOf(agent), round);
const endsOf = (agent: ChaosAgent, round: number) => endsIn(effectsOf(agent), round);

/**
 * How one plan ran, from the side effects its instruction left: a second complete run, or more runs than the kills
 * of its agent during it explain (each kill mid-instruction allows one resumed run), is a double application.
 */
export function applicationsOf(
  effects: readonly string[],
  round: number,
  killsDuring: number,
): { runs: number; resumesAfterKill: number; double: boolean } {
  const runs = startsIn(effects, round);
  const completed = endsIn(effects, round);
  return {
    runs,
    resumesAfterKill: Math.min(killsDuring, Math.max(0, runs - 1)),
    double: completed > 1 || runs > 1 + killsDuring,
  };
}

function startAgent(agent: Omit<ChaosAgent, 'process'> & { process?: ManagedProcess }): ManagedProcess {
  return startProcess({
    name: `node-agent-${agent.index}`,
    command: process.execPath,
    args: [
      join(repoRoot(), 'apps/node-agent/dist/main.js'),
      '--host-root',
      agent.root,
      '--state-dir',
      agent.stateDir,
      '--health-port',
      '0',
      '--probe-period',
      '1000',
      '--confine',
    ],
    logFile: agent.logFile,
  });
}

/** Whether `check` holds within the time (`eventually`, with a timeout as an answer rather than an error). */
const until = (check: () => Promise<boolean> | boolean, timeoutMs: number): Promise<boolean> =>
  eventually(check, { timeoutMs, intervalMs: 250 }).then(
    () => true,
    () => false,
  );

export async function runAgentFaults(input: AgentFaultsInput): Promise<{ report: AgentFaultsReport; tokens: string[] }> {
  const began = Date.now();
  const { admin, namespace, random, log } = input;
  const secrets = admin.resource<V1Secret>(SECRETS);
  const kc = new KubeConfig();
  kc.loadFromString(input.env.kubeconfig);
  const agents: ChaosAgent[] = [];
  for (let index = 0; index < input.agents; index++) {
    const { secretName, token } = await createPlanMachine(admin, namespace, `chaos-agent-${index}`);
    const root = agentMachineRoot(kc, { namespace, secretName, token });
    const stateDir = join(input.dir, `agent-${index}-state`);
    mkdirSync(stateDir, { recursive: true });
    const base = { index, secretName, root, stateDir, logFile: join(input.logDir, `agent-${index}.log`), killsDuring: new Map(), deletedDuring: new Set<number>(), token };
    agents.push({ ...base, process: startAgent(base) });
  }
  log(`agent phase: ${agents.length} node agent processes (confined), ${input.rounds} plans each`);
  const report: AgentFaultsReport = {
    agents: agents.length,
    plans: 0,
    applied: 0,
    faults: { 'agent-kill': 0, 'plan-secret-deleted': 0, 'api-refused': 0 },
    apiOutageSeconds: input.apiOutageSeconds,
    runs: 0,
    resumesAfterKill: 0,
    doubleApplications: 0,
    stuck: 0,
    samples: [],
    elapsedMs: 0,
  };
  const apiRound = input.rounds > 1 ? random.int(1, input.rounds - 1) : 0;
  try {
    for (let round = 0; round < input.rounds; round++) {
      const checksums = new Map<number, string>();
      await Promise.all(
        agents.map(async (agent) => {
          const raw = JSON.stringify(planOf(round, random.int(2, 4)));
          checksums.set(agent.index, planChecksum(raw));
          await secrets.mergePatch(
            { namespace, name: agent.secretName },
            { data: { plan: Buffer.from(raw).toString('base64'), 'plan-state': Buffer.from('pending').toString('base64') } },
          );
        }),
      );
      report.plans += agents.length;
      const midInstruction = (agent: ChaosAgent) =>
        until(() => startsOf(agent, round) > 0 && endsOf(agent, round) === 0, 30_000);
      if (round === apiRound && input.apiOutageSeconds > 0) {
        // Every agent is inside its instruction when the API goes away: each outcome is written after it is back.
        await Promise.all(agents.map(midInstruction));
        log(`  agent phase: management kube-apiserver stopped for ${input.apiOutageSeconds} s during round ${round}`);
        await restartApiServer(input.env, { whileStopped: () => sleep(input.apiOutageSeconds * 1000), readyTimeoutMs: 120_000 });
        report.faults['api-refused']++;
      } else {
        await Promise.all(
          agents.map(async (agent) => {
            const fault = random.pick(['none', 'agent-kill', 'agent-kill', 'plan-secret-deleted'] as const);
            if (fault === 'none' || !(await midInstruction(agent))) return;
            if (fault === 'agent-kill') {
              process.kill(agent.process.pid, 'SIGKILL');
              await agent.process.exited;
              agent.killsDuring.set(round, (agent.killsDuring.get(round) ?? 0) + 1);
              await sleep(random.int(200, 2000));
              agent.process = startAgent(agent);
              report.faults['agent-kill']++;
            } else {
              await secrets.delete({ namespace, name: agent.secretName });
              await secrets.create({ metadata: { name: agent.secretName, namespace }, type: MACHINE_PLAN_SECRET_TYPE, data: {} });
              agent.deletedDuring.add(round);
              report.faults['plan-secret-deleted']++;
            }
          }),
        );
      }
      await Promise.all(
        agents.map(async (agent) => {
          if (agent.deletedDuring.has(round)) {
            // Its plan is gone: the instruction finishes on its own and nothing is reported.
            await until(() => endsOf(agent, round) >= 1 || startsOf(agent, round) === 0, 30_000);
            return;
          }
          const applied = await until(async () => {
              const data = decodeSecretData((await secrets.get({ namespace, name: agent.secretName })).data);
              return text(data, PLAN_KEYS.state) === 'succeeded' && text(data, PLAN_KEYS.appliedChecksum) === checksums.get(agent.index);
            },
            PLAN_WAIT_MS,
          );
          if (applied) report.applied++;
          else {
            report.stuck++;
            report.samples.push(`agent ${agent.index}: plan ${round} not applied within ${PLAN_WAIT_MS / 1000} s`);
          }
        }),
      );
    }
  } finally {
    for (const agent of agents) {
      const effects = effectsOf(agent);
      for (let round = 0; round < input.rounds; round++) {
        const kills = agent.killsDuring.get(round) ?? 0;
        const { runs, resumesAfterKill, double } = applicationsOf(effects, round, kills);
        report.runs += runs;
        report.resumesAfterKill += resumesAfterKill;
        if (double) {
          report.doubleApplications++;
          report.samples.push(`agent ${agent.index}: plan ${round} ran ${runs} times (${endsIn(effects, round)} completed) with ${kills} kills`);
        }
      }
      await stopPid(agent.process.pid).catch(() => undefined);
      await secrets.delete({ namespace, name: agent.secretName }).catch((error: unknown) => {
        if (!isNotFound(error)) throw error;
      });
    }
    report.elapsedMs = Date.now() - began;
  }
  return { report, tokens: agents.map((agent) => agent.token) };
}
