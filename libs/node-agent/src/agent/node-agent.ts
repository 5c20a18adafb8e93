import { randomUUID } from 'node:crypto';
import type { V1Secret } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import { describeFailure, Informer, isNotFound, SECRETS, type KubeClient } from '@capstan/kube';
import { applyPlan } from '../apply/apply-plan.js';
import type { HostRoot } from '../apply/host-root.js';
import { InvalidPlanError, parsePlan, planChecksum } from '../plan/parse-plan.js';
import { PLAN_DEFAULTS, type MachinePlan, type PlanProbe } from '../plan/plan.js';
import { probeOnce } from '../probes/http-probe.js';
import { nextProbeStatus, type ProbeStatus } from '../probes/probe-status.js';
import {
  decide,
  gzipJson,
  markInProgress,
  PLAN_KEYS,
  probeStatusesOf,
  recordOutcome,
  text,
  type PlanData,
} from '../report/plan-secret.js';
import { AttemptRecords, identityOf, isAlive, killOrphanedInstruction, type AttemptRecord } from './attempt-record.js';
import { AgentHeartbeat } from './agent-heartbeat.js';
import { PeriodicRunner } from './periodic-runner.js';
import { TokenRenewer } from './token-renewer.js';
import { PlanSecretClient } from './plan-secret-client.js';

export interface NodeAgentOptions {
  client: KubeClient;
  namespace: string;
  secretName: string;
  root: HostRoot;
  logger: Logger;
  /** How often probes run and the Secret is looked at even without a watch event (default 5 s). */
  probePeriodMs?: number;
  registry?: Registry;
  /** Scales periodic instruction periods (tests). */
  periodScale?: number;
  /**
   * A host directory for the agent's own records (attempt.json): `/var/lib/capstan/agent` on a real host; on the
   * sim the machine's records directory, outside the machine's root (the record names processes the agent kills).
   */
  stateDir: string;
  /** How long another instance's `in-progress` run must go unrenewed before it is taken over (default 30 s). */
  ownerLeaseMs?: number;
  /** The agent's token file, renewed before it expires (token-renewer.ts); absent: the token is used as it is. */
  token?: { file: string; read: () => string; renewAt?: number };
}

/** How often the owner of an `in-progress` run renews it (its lease is three times as long). */
const OWNER_RENEW_MS = 10_000;

/** The plan the agent applied and now probes and runs periodic instructions for. */
interface CurrentPlan {
  checksum: string;
  plan: MachinePlan;
  appliedAt: number;
  probes: Record<string, ProbeStatus>;
}

/**
 * The node agent: watches its own plan Secret, applies a plan when the Secret asks for it (see `decide`), reports
 * the outcome, probe statuses and periodic output on the same Secret. One sync runs at a time; events arriving
 * meanwhile make one more sync afterwards. Everything it logs names the Secret, the plan checksum and the step,
 * never file contents, environment values or output.
 */
export class NodeAgent {
  private readonly secret: PlanSecretClient;
  private readonly informer: Informer<V1Secret>;
  private readonly periodic: PeriodicRunner;
  private readonly log: Logger;
  private readonly stopping = new AbortController();
  private current: CurrentPlan | undefined;
  private running: Promise<void> | undefined;
  private again = false;
  private probeTimer: NodeJS.Timeout | undefined;
  private lastFailureAt: number | undefined;
  /**
   * The last sync left something only time brings (a failed plan's retry after its cooldown, or a sync that failed):
   * the probe tick syncs again. Otherwise only a change of the Secret does.
   */
  private waitingOnTime = true;
  private readonly metrics;
  /** This process's agent: the owner it writes on an `in-progress` plan. */
  private readonly instance = randomUUID();
  private readonly records: AttemptRecords;
  private readonly renewer: TokenRenewer | undefined;
  private readonly heartbeat: AgentHeartbeat;
  /** The attempt this agent runs or ran last and has not reported yet (mirrors attempt.json). */
  private record: AttemptRecord | undefined;
  /** Another instance's renewal seen on an `in-progress` plan, and when this agent first saw that value. */
  private othersRenewal: { owner: string; renewed: string; seenAt: number } | undefined;

  constructor(private readonly options: NodeAgentOptions) {
    this.records = new AttemptRecords(options.stateDir);
    this.record = this.records.read();
    this.log = options.logger.child({ secret: `${options.namespace}/${options.secretName}` });
    this.secret = new PlanSecretClient(options.client, options.namespace, options.secretName);
    this.heartbeat = new AgentHeartbeat(options.client, options.namespace, options.secretName, this.log);
    this.renewer =
      options.token &&
      new TokenRenewer({
        client: options.client,
        root: options.root,
        tokenFile: options.token.file,
        readToken: options.token.read,
        logger: this.log,
        ...(options.token.renewAt !== undefined && { renewAt: options.token.renewAt }),
      });
    this.informer = new Informer<V1Secret>(options.client, SECRETS, {
      namespace: options.namespace,
      fieldSelector: `metadata.name=${options.secretName}`,
      logger: this.log,
    });
    this.periodic = new PeriodicRunner(
      options.root,
      (outputs) => this.reportPeriodic(outputs),
      options.periodScale ?? 1,
    );
    const registers = options.registry ? [options.registry] : [];
    this.metrics = {
      applies: new Counter({
        name: 'capstan_agent_plan_applies_total',
        help: 'Plans applied, by result',
        labelNames: ['result'] as const,
        registers,
      }),
      applySeconds: new Histogram({
        name: 'capstan_agent_plan_apply_seconds',
        help: 'Time to apply a plan, from in-progress to the reported result',
        registers,
      }),
      probesHealthy: new Gauge({
        name: 'capstan_agent_probes_healthy',
        help: 'Probes of the current plan that are healthy',
        registers,
      }),
    };
  }

  /** Starts watching; the first sync runs at once (a plan left in progress by a crash is run again). */
  start(): void {
    // A previous agent process died with an instruction running: what is left of it stops before anything else runs.
    if (this.record && this.record.instance !== this.instance && !isAlive(this.record.agent) && killOrphanedInstruction(this.record)) {
      this.log.warn('killed the instruction a stopped agent left running');
    }
    this.informer.addEventHandler({
      onAdd: () => this.trigger(),
      // The agent's own write comes back as an event: the sync that wrote it already decided on that version.
      onUpdate: (_old, secret) => this.secret.observed(secret.metadata?.resourceVersion, () => this.trigger()),
      onDelete: () => this.trigger(),
    });
    this.informer.start();
    this.renewer?.start();
    this.heartbeat.start();
    this.trigger();
    this.scheduleProbes();
  }

  async stop(): Promise<void> {
    this.stopping.abort();
    this.renewer?.stop();
    this.heartbeat.stop();
    clearTimeout(this.probeTimer);
    this.periodic.stop();
    await this.informer.stop();
    await this.running;
  }

  /** Resolves once the syncs asked for so far are done (tests and benchmarks). */
  async idle(): Promise<void> {
    while (this.running) await this.running;
  }

  private trigger(): void {
    if (this.stopping.signal.aborted) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = this.sync()
      .catch((error: unknown) => {
        this.waitingOnTime = true;
        this.log.warn({ err: { message: safeMessage(error) } }, 'sync failed: retried on the next event or probe tick');
      })
      .finally(() => {
        this.running = undefined;
        if (this.again) {
          this.again = false;
          this.trigger();
        }
      });
  }

  private async sync(): Promise<void> {
    const signal = this.stopping.signal;
    let data: PlanData;
    try {
      ({ data } = await this.secret.read(signal));
    } catch (error) {
      if (isNotFound(error)) {
        this.log.debug('no plan Secret (yet)');
        return;
      }
      throw error;
    }
    if (await this.reportKeptOutcome(data)) return;
    const decision = decide(data, Date.now(), this.lastFailureAt);
    this.waitingOnTime = decision.action === 'idle' && decision.coolingDown === true;
    if (decision.action === 'idle') {
      this.adopt(data, decision.checksum);
      return;
    }
    if (decision.action !== 'apply' || decision.why === 'resume') {
      if (!this.mayTakeOver(data)) {
        this.waitingOnTime = true;
        return;
      }
      if (killOrphanedInstruction(this.record)) this.log.warn('killed the instruction a stopped agent left running');
    }
    if (decision.action === 'give-up') {
      const outcome = {
        checksum: decision.checksum,
        succeeded: false,
        failure: `the agent stopped while applying the plan in each of its ${decision.attempt} runs`,
        output: {},
        at: new Date(),
      };
      await this.secret.update((d) => recordOutcome(d, outcome), { forChecksum: decision.checksum, signal });
      this.log.warn({ checksum: decision.checksum.slice(0, 12), runs: decision.attempt }, 'plan given up');
      return;
    }
    const { checksum, attempt, why } = decision;
    const marked = await this.secret.update((d) => markInProgress(d, attempt, this.instance, new Date()), {
      forChecksum: checksum,
      signal,
    });
    if (!marked) return; // the plan changed before it started: the next sync sees the new one
    const log = this.log.child({ checksum: checksum.slice(0, 12), attempt });
    log.info({ why }, 'applying plan');
    const started = Date.now();
    this.keep({
      instance: this.instance,
      agent: identityOf(process.pid)!,
      checksum,
      revision: text(marked, PLAN_KEYS.revision) ?? '',
      attempt,
    });
    const renewal = setInterval(() => void this.renewOwnership(checksum), OWNER_RENEW_MS);
    renewal.unref();
    let plan: MachinePlan | undefined;
    let outcome: Parameters<typeof recordOutcome>[1];
    await this.periodic.pause();
    try {
      try {
        plan = parsePlan(marked[PLAN_KEYS.plan]!);
        const result = await applyPlan(this.options.root, plan, attempt, signal, (instruction) =>
          this.keep({ ...this.record!, instruction: instruction === undefined ? undefined : identityOf(instruction) }),
        );
        outcome = { checksum, ...result, at: new Date() };
      } catch (error) {
        if (!(error instanceof InvalidPlanError)) throw error;
        outcome = { checksum, succeeded: false, failure: `invalid plan: ${error.message}`, output: {}, at: new Date() };
      }
    } finally {
      clearInterval(renewal);
    }
    if (signal.aborted) return; // stopped mid-plan: the next start runs it again from in-progress
    // Kept before it is reported: a report that fails is written again on the next sync, and the plan is not run
    // again for it (it runs again only when the agent died before this line).
    this.keep({ ...this.record!, instruction: undefined, outcome: { ...outcome, at: outcome.at.toISOString() } });
    this.metrics.applies.inc({ result: outcome.succeeded ? 'succeeded' : 'failed' });
    this.metrics.applySeconds.observe((Date.now() - started) / 1000);
    if (!outcome.succeeded) {
      this.lastFailureAt = Date.now();
      // The plan applied before stays the machine's: its periodic instructions run again.
      this.periodic.replace(this.current?.plan.periodicInstructions ?? []);
      log.warn({ failure: outcome.failure }, 'plan failed');
    } else {
      this.lastFailureAt = undefined;
      log.info({ ms: Date.now() - started }, 'plan applied');
    }
    await this.reportKeptOutcome(await this.secret.read(signal).then((r) => r.data));
  }

  /**
   * Writes the outcome of a run that finished but is not on the Secret yet (the write failed, or the agent stopped
   * in between): true when there was one for the Secret's plan and run. An outcome for a plan the Secret no longer
   * holds is dropped; the newer plan is applied.
   */
  private async reportKeptOutcome(data: PlanData): Promise<boolean> {
    const kept = this.record?.outcome;
    if (!kept || !this.record) return false;
    const raw = data[PLAN_KEYS.plan];
    const current =
      raw !== undefined &&
      planChecksum(raw) === this.record.checksum &&
      text(data, PLAN_KEYS.state) === 'in-progress' &&
      text(data, PLAN_KEYS.revision) === this.record.revision &&
      text(data, PLAN_KEYS.attempt) === String(this.record.attempt);
    if (!current) {
      this.forget();
      return false;
    }
    const outcome = { ...kept, at: new Date(kept.at) };
    try {
      await this.secret.update((d) => recordOutcome(d, outcome), { forChecksum: kept.checksum, signal: this.stopping.signal });
    } catch (error) {
      this.waitingOnTime = true;
      this.log.warn(
        { checksum: kept.checksum.slice(0, 12), err: { message: safeMessage(error) } },
        'plan outcome not written: written again on the next sync, the plan is not run again',
      );
      return true;
    }
    this.forget();
    this.waitingOnTime = !kept.succeeded;
    if (kept.succeeded) {
      try {
        const plan = parsePlan(data[PLAN_KEYS.plan]!);
        this.use({ checksum: kept.checksum, plan, appliedAt: Date.now(), probes: {} });
        await this.runProbes();
      } catch {
        /* an applied plan parsed when it ran */
      }
    }
    return true;
  }

  /**
   * Whether this agent may run an `in-progress` plan it does not run itself: yes when it owns the run (it stopped
   * mid-plan), when the recorded owner's process is gone from this host, or when the owner has not renewed the run
   * for the lease, timed on this agent's own clock from when it first saw that renewal (clocks of two hosts are
   * never compared). Two agents on one plan Secret therefore never apply it together.
   */
  private mayTakeOver(data: PlanData): boolean {
    const owner = text(data, PLAN_KEYS.owner);
    if (owner === undefined || owner === this.instance) return true;
    if (this.record?.instance === owner && !isAlive(this.record.agent)) return true;
    const renewed = text(data, PLAN_KEYS.ownerRenewed) ?? '';
    const seen = this.othersRenewal;
    if (!seen || seen.owner !== owner || seen.renewed !== renewed) {
      this.othersRenewal = { owner, renewed, seenAt: Date.now() };
      return false;
    }
    return Date.now() - seen.seenAt >= (this.options.ownerLeaseMs ?? 3 * OWNER_RENEW_MS);
  }

  private async renewOwnership(checksum: string): Promise<void> {
    await this.secret
      .update(
        (d) =>
          text(d, PLAN_KEYS.owner) === this.instance && text(d, PLAN_KEYS.state) === 'in-progress'
            ? { ...d, [PLAN_KEYS.ownerRenewed]: Buffer.from(new Date().toISOString()) }
            : undefined,
        { forChecksum: checksum, signal: this.stopping.signal },
      )
      .catch((error: unknown) => this.log.debug({ err: { message: safeMessage(error) } }, 'ownership not renewed'));
  }

  private keep(record: AttemptRecord): void {
    this.record = record;
    this.records.write(record);
  }

  private forget(): void {
    this.record = undefined;
    this.records.clear();
  }

  /** After a restart, or when nothing is to be applied: probe and run periodic instructions for the applied plan. */
  private adopt(data: PlanData, checksum: string | undefined): void {
    if (!checksum || text(data, PLAN_KEYS.appliedChecksum) !== checksum || this.current?.checksum === checksum) return;
    try {
      const plan = parsePlan(data[PLAN_KEYS.plan]!);
      this.use({ checksum, plan, appliedAt: Date.now(), probes: probeStatusesOf(data) });
    } catch {
      /* an applied plan always parsed; a Secret edited by hand is reported by the next apply */
    }
  }

  private use(current: CurrentPlan): void {
    this.current = current;
    this.periodic.replace(current.plan.periodicInstructions ?? []);
  }

  private scheduleProbes(): void {
    const period = this.options.probePeriodMs ?? 5_000;
    this.probeTimer = setTimeout(() => {
      void this.runProbes()
        .catch((error: unknown) => this.log.debug({ err: { message: safeMessage(error) } }, 'probe report failed'))
        .finally(() => {
          if (!this.stopping.signal.aborted) this.scheduleProbes();
        });
      // The tick also catches a retry whose cooldown has passed, without a watch event.
      if (this.waitingOnTime) this.trigger();
    }, period);
    this.probeTimer.unref();
  }

  private async runProbes(): Promise<void> {
    const current = this.current;
    if (!current?.plan.probes) return;
    const now = Date.now();
    const next: Record<string, ProbeStatus> = { ...current.probes };
    await Promise.all(
      Object.entries(current.plan.probes).map(async ([name, probe]) => {
        if (now - current.appliedAt < (probe.initialDelaySeconds ?? 0) * 1000) return;
        next[name] = nextProbeStatus(probe, current.probes[name], await probeOnce(this.options.root, probe));
      }),
    );
    this.metrics.probesHealthy.set(Object.values(next).filter((s) => s.healthy).length);
    const changed =
      JSON.stringify(probeReport(next, current.plan.probes)) !== JSON.stringify(probeReport(current.probes, current.plan.probes));
    current.probes = next;
    if (!changed) return;
    await this.secret.update(
      (d) =>
        text(d, PLAN_KEYS.probeStatuses) === JSON.stringify(next)
          ? undefined
          : { ...d, [PLAN_KEYS.probeStatuses]: Buffer.from(JSON.stringify(next)) },
      { forChecksum: current.checksum, signal: this.stopping.signal },
    );
  }

  private async reportPeriodic(outputs: Record<string, unknown>): Promise<void> {
    const checksum = this.current?.checksum;
    if (!checksum) return;
    await this.secret.update((d) => ({ ...d, [PLAN_KEYS.periodicOutput]: gzipJson(outputs) }), {
      forChecksum: checksum,
      signal: this.stopping.signal,
    });
  }
}

/**
 * What is worth a write: health flips and the counters up to the probe's thresholds (how close it is to flipping),
 * not every success of a healthy probe.
 */
function probeReport(statuses: Record<string, ProbeStatus>, probes: Record<string, PlanProbe>): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(statuses).map(([name, s]) => [
      name,
      [
        s.healthy,
        Math.min(s.successCount, probes[name]?.successThreshold ?? PLAN_DEFAULTS.successThreshold),
        Math.min(s.failureCount, probes[name]?.failureThreshold ?? PLAN_DEFAULTS.failureThreshold),
      ],
    ]),
  );
}

/** An error for the agent's logs: the call and status that failed, never a request or response body. */
const safeMessage = describeFailure;


