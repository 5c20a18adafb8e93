// Looks at the running system for convergence.ts: the services' /readyz and /admin/shards, the management
// cluster's objects, and every workload cluster through its own `<cluster>-kubeconfig` (the front proxy of the
// shared workload API server). Every call is bounded, so a frozen or restarting server only makes a check fail.
import { KubeConfig, type V1Secret } from '@kubernetes/client-node';
import { RESOURCES } from '@capstan/api';
import { createKubeClient, NODES, SECRETS, type KubeClient, type ResourceType, HttpMethod } from '@capstan/kube';
import { adminApiRequest, type LocalService } from '@capstan/testing';
import {
  emptyObjects,
  fleetReasons,
  invariantReasons,
  serviceReasons,
  type FleetExpectation,
  type ServiceProbe,
  type ShardView,
} from './convergence.js';
import {
  checkNodes,
  fleetOnly,
  type FleetObjects,
  type MachineLike,
  type NodeLike,
  type Obj,
  type SecretLike,
} from './invariants.js';
import type { SecretInput } from './secret-scan.js';

const PROBE_TIMEOUT_MS = 3_000;

export interface Check {
  ok: boolean;
  reasons: string[];
  /** Which stage failed: services, objects, invariants, workload clusters. */
  stage: 'services' | 'objects' | 'invariants' | 'workloads' | 'converged';
}

export interface ConvergenceResult {
  converged: boolean;
  /** From `since` to the first check that passed. */
  elapsedMs: number;
  checks: number;
  /** The reasons of the last failed check (what was still wrong). */
  lastReasons: string[];
  /** Stages seen failing while waiting, with how many checks each. */
  stagesSeen: Record<string, number>;
}

export interface ObserverOptions {
  client: KubeClient;
  namespace: string;
  services: () => LocalService[];
  adminToken: string;
  expected: FleetExpectation;
  /** Progress lines while waiting (every 30 s). */
  progress?: (line: string) => void;
  /** Stops waiting when this says why (a service crashed: waiting longer measures nothing). */
  abortWhen?: () => string | undefined;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export class Observer {
  /** Nodes left in the shared workload API server by deleted clusters (reported, not a convergence failure). */
  nodesOfDeletedClusters: string[] = [];
  /** Every Secret seen during the run (the deleted ones' values must not be logged either). */
  readonly secretsSeen = new Map<string, SecretInput>();
  private readonly workloadClients = new Map<string, { version: string; client: KubeClient }>();

  constructor(private readonly options: ObserverOptions) {}

  get expected(): FleetExpectation {
    return this.options.expected;
  }

  async probeServices(): Promise<ServiceProbe[]> {
    return Promise.all(
      this.options.services().map(async (s): Promise<ServiceProbe> => {
        const probe: ServiceProbe = {
          service: s.name,
          replica: s.replica,
          identity: `${s.name}-${s.replica}`,
          pid: s.pid,
          alive: s.child.exitCode === null && s.child.signalCode === null,
          ready: false,
        };
        if (!probe.alive) return probe;
        try {
          probe.ready = (
            await fetch(`${s.url}/readyz`, { signal: AbortSignal.timeout(PROBE_TIMEOUT_MS) })
          ).ok;
          const shards = await adminApiRequest(s, '/admin/shards', { token: this.options.adminToken, timeoutMs: PROBE_TIMEOUT_MS });
          if (shards.status === 200) probe.shards = shards.json<ShardView>();
          else probe.error = `/admin/shards answered ${shards.status}`;
        } catch (error) {
          probe.error = (error as Error).message;
        }
        return probe;
      }),
    );
  }

  private async list<T extends Obj>(resource: ResourceType): Promise<T[]> {
    return (await this.options.client.resource(resource).list({ namespace: this.options.namespace }))
      .items as unknown as T[];
  }

  async listObjects(full: boolean): Promise<FleetObjects> {
    const [clusters, machines] = await Promise.all([
      this.list(RESOURCES.Cluster),
      this.list<MachineLike>(RESOURCES.Machine),
    ]);
    if (!full) return { ...emptyObjects(), clusters, machines };
    const [machineSets, machineDeployments, controlPlanes, simMachines, k3sConfigs, secrets] =
      await Promise.all([
        this.list(RESOURCES.MachineSet),
        this.list(RESOURCES.MachineDeployment),
        this.list(RESOURCES.K3sControlPlane),
        this.list(RESOURCES.SimMachine),
        this.list(RESOURCES.K3sConfig),
        this.list<SecretLike>(SECRETS),
      ]);
    this.remember(secrets);
    return {
      clusters,
      machines,
      machineSets,
      machineDeployments,
      controlPlanes,
      simMachines,
      k3sConfigs,
      secrets,
    };
  }

  remember(secrets: SecretLike[]): void {
    for (const s of secrets) {
      const key = `${s.metadata?.uid}:${(s.metadata as { resourceVersion?: string } | undefined)?.resourceVersion ?? ''}`;
      if (!this.secretsSeen.has(key))
        this.secretsSeen.set(key, {
          name: `${s.metadata?.namespace}/${s.metadata?.name}`,
          type: s.type,
          data: s.data,
        });
    }
  }

  /** A client for a workload cluster, from its `<cluster>-kubeconfig` Secret. */
  private workloadClient(cluster: string, secrets: SecretLike[]): KubeClient | undefined {
    const secret = secrets.find((s) => s.metadata?.name === `${cluster}-kubeconfig`) as
      (V1Secret & SecretLike) | undefined;
    const value = secret?.data?.['value'];
    if (!secret || !value) return undefined;
    const version = secret.metadata?.resourceVersion ?? '';
    const cached = this.workloadClients.get(cluster);
    if (cached?.version === version) return cached.client;
    void cached?.client.close();
    const kc = new KubeConfig();
    kc.loadFromString(Buffer.from(value, 'base64').toString('utf8'));
    const client = createKubeClient(kc, { requestTimeoutMs: 5_000 });
    this.workloadClients.set(cluster, { version, client });
    return client;
  }

  /** Every fleet cluster answers through its own endpoint; every Machine's Node is there and Ready; no stale Node. */
  async workloadReasons(objects: FleetObjects): Promise<string[]> {
    const reasons: string[] = [];
    const listed: NodeLike[][] = [];
    await Promise.all(
      this.options.expected.clusters.map(async (cluster) => {
        const client = this.workloadClient(cluster, objects.secrets);
        if (!client) return void reasons.push(`${cluster}: no kubeconfig Secret`);
        try {
          // Shared mode: each endpoint lists its own cluster's Nodes (a deleted cluster's are out of sight).
          listed.push(
            (
              await client.request<{ items: NodeLike[] }>({
                method: HttpMethod.GET,
                path: `/api/${NODES.version}/nodes`,
              })
            ).items,
          );
        } catch (error) {
          reasons.push(
            `${cluster}: its endpoint does not answer (${(error as Error).message.slice(0, 160)})`,
          );
        }
      }),
    );
    const nodes = listed.flat();
    if (nodes.length > 0) {
      const prefix = `sim://${this.options.namespace}/`;
      const found = checkNodes(fleetOnly(objects).machines, nodes, prefix);
      const all = checkNodes(
        objects.machines,
        nodes,
        prefix,
        new Set(objects.clusters.map((c) => c.metadata?.name ?? '')),
      );
      this.nodesOfDeletedClusters = all.ofDeletedClusters.map((f) => f.name);
      for (const f of [...found.missing, ...found.notReady, ...all.stale])
        reasons.push(`${f.kind} ${f.name}: ${f.problem}`);
    } else if (reasons.length === 0) {
      reasons.push('no workload cluster listed any Node');
    }
    return reasons;
  }

  /** One look at everything; stops at the first stage that is not converged (the later ones cost more). */
  async check(options: { services?: boolean } = {}): Promise<Check> {
    try {
      if (options.services !== false) {
        const reasons = serviceReasons(await this.probeServices());
        if (reasons.length > 0) return { ok: false, reasons, stage: 'services' };
      }
      const cheap = await this.listObjects(false);
      const objectReasons = fleetReasons(this.options.expected, cheap);
      if (objectReasons.length > 0) return { ok: false, reasons: objectReasons, stage: 'objects' };
      const objects = await this.listObjects(true);
      const again = fleetReasons(this.options.expected, objects);
      if (again.length > 0) return { ok: false, reasons: again, stage: 'objects' };
      const invariants = invariantReasons(objects);
      if (invariants.length > 0) return { ok: false, reasons: invariants, stage: 'invariants' };
      const workloads = await this.workloadReasons(objects);
      if (workloads.length > 0) return { ok: false, reasons: workloads, stage: 'workloads' };
      return { ok: true, reasons: [], stage: 'converged' };
    } catch (error) {
      return {
        ok: false,
        reasons: [`management API: ${(error as Error).message.slice(0, 200)}`],
        stage: 'objects',
      };
    }
  }

  /** Polls `check` until it passes or `timeoutMs` after `since`. */
  async waitForConvergence(
    since: number,
    timeoutMs: number,
    options: { services?: boolean; intervalMs?: number } = {},
  ): Promise<ConvergenceResult> {
    const abort = this.options.abortWhen;
    const stagesSeen: Record<string, number> = {};
    let checks = 0;
    let lastReasons: string[] = [];
    let lastProgress = performance.now();
    for (;;) {
      const check = await this.check({ services: options.services });
      checks++;
      const now = performance.now();
      if (!check.ok && now - lastProgress > 30_000) {
        lastProgress = now;
        this.options.progress?.(
          `  waiting ${((now - since) / 1000).toFixed(0)} s: ${check.stage}: ${check.reasons.slice(0, 3).join('; ')}${check.reasons.length > 3 ? ` (+${check.reasons.length - 3})` : ''}`,
        );
      }
      if (check.ok) return { converged: true, elapsedMs: now - since, checks, lastReasons, stagesSeen };
      stagesSeen[check.stage] = (stagesSeen[check.stage] ?? 0) + 1;
      lastReasons = check.reasons;
      if (now - since > timeoutMs)
        return { converged: false, elapsedMs: now - since, checks, lastReasons, stagesSeen };
      const why = abort?.();
      if (why)
        return {
          converged: false,
          elapsedMs: now - since,
          checks,
          lastReasons: [why, ...lastReasons],
          stagesSeen,
        };
      await sleep(options.intervalMs ?? 1_000);
    }
  }

  async close(): Promise<void> {
    await Promise.all([...this.workloadClients.values()].map((c) => c.client.close()));
  }
}
