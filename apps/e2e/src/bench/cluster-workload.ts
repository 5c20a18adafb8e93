// The timed part the cluster benchmarks share: from the first create until every Machine is Running and every
// Cluster Available, then from deleting every Cluster until none (and no Machine) is left, watched through informers
// on the management cluster. The Cluster and Machine kinds are cluster.x-k8s.io/v1beta2 on both Capstan and upstream.
import { text as streamText } from 'node:stream/consumers';
import { RESOURCES, getCondition, type Cluster, type Machine } from '@capstan/api';
import { Informer, isNotFound, type KubeClient, HttpMethod } from '@capstan/kube';
import { recordedSimProcesses } from '@capstan/testing';
import { log, oneMinuteLoad, sleep } from './bench-machine.js';

/** The sim settings the cluster benchmarks run with: node agents inside the machine-provider, no boot jitter. */
export const BENCH_SIM_ENV = { CAPSTAN_SIM_NODE_AGENT: 'in-process', CAPSTAN_SIM_PROVISIONING_JITTER: '0' } as const;

/**
 * The processes the sim runs outside the machine-provider for shared-mode clusters, as its state dir records them: the
 * shared kube-apiserver and, without CAPSTAN_SIM_ETCD_URL, the sim's own etcd (node agents run in-process here).
 */
export function simProcesses(simStateDir: string): { service: string; pid: number }[] {
  return recordedSimProcesses(simStateDir).map((p) => ({
    service: p.name === 'kube-apiserver' && p.pidFile.includes('/shared/') ? 'sim shared kube-apiserver' : `sim ${p.name}`,
    pid: p.pid,
  }));
}

/** A controller's /metrics text (Prometheus text format), read within 10 s; an error answer throws. */
export async function metricsText(metricsUrl: string): Promise<string> {
  const response = await fetch(metricsUrl, { signal: AbortSignal.timeout(10_000) });
  if (!response.ok) throw new Error(`${metricsUrl}: HTTP ${response.status}`);
  return response.text();
}

/** The management API server's /metrics text. */
export async function apiserverMetrics(client: KubeClient): Promise<string> {
  const stream = await client.stream({ method: HttpMethod.GET, path: '/metrics' });
  return streamText(stream);
}

export interface Provisioned {
  /** Undefined: not within the timeout (`progress` says how far it got). */
  machinesRunningSeconds?: number;
  clustersAvailableSeconds?: number;
  progress: string;
  /** Seconds from the first create to convergence (or the timeout). */
  windowSeconds: number;
}

export interface Deleted {
  /** From the deletes until no Machine is left. */
  machinesGoneSeconds?: number;
  /** Until no Cluster and no Machine is left. */
  clustersGoneSeconds?: number;
  /** Set when not everything went within the timeout: what was left. */
  deletionProgress?: string;
}

const isAvailable = (c: Cluster) => getCondition(c.status?.conditions, 'Available')?.status === 'True';

/** Informers on the Machines and Clusters of one namespace, and the two timed waits. */
export class ClusterWorkload {
  private readonly machines: Informer<Machine>;
  private readonly clusters: Informer<Cluster>;

  constructor(
    private readonly client: KubeClient,
    private readonly namespace: string,
  ) {
    this.machines = new Informer<Machine>(client, RESOURCES.Machine, { namespace });
    this.clusters = new Informer<Cluster>(client, RESOURCES.Cluster, { namespace });
  }

  async start(): Promise<void> {
    this.machines.start();
    this.clusters.start();
    await Promise.all([this.machines.waitForSync(), this.clusters.waitForSync()]);
  }

  async stop(): Promise<void> {
    await Promise.all([this.machines.stop(), this.clusters.stop()]);
  }

  /**
   * Runs `create` (every cluster at once) and waits until `expectedMachines` Machines are Running and `expectedClusters`
   * Clusters Available, calling `poll` about every 250 ms. Time counts from the start of `create`.
   */
  async provision(options: {
    expectedClusters: number;
    expectedMachines: number;
    timeoutMs: number;
    create: () => Promise<void>;
    poll?: () => void;
  }): Promise<Provisioned> {
    const ns = this.namespace;
    const t0 = performance.now();
    const elapsed = () => (performance.now() - t0) / 1000;
    await options.create();
    log(`created in ${elapsed().toFixed(1)} s`);
    let machinesRunningSeconds: number | undefined;
    let clustersAvailableSeconds: number | undefined;
    let progress = '';
    let lastLog = 0;
    while (performance.now() - t0 < options.timeoutMs) {
      options.poll?.();
      const live = this.machines.list(ns).filter((m) => !m.metadata.deletionTimestamp);
      const running = live.filter((m) => m.status?.phase === 'Running').length;
      const available = this.clusters.list(ns).filter(isAvailable).length;
      progress = `${running}/${options.expectedMachines} Machines Running, ${available}/${options.expectedClusters} Clusters Available`;
      if (machinesRunningSeconds === undefined && running === options.expectedMachines && live.length === options.expectedMachines) {
        machinesRunningSeconds = elapsed();
      }
      if (clustersAvailableSeconds === undefined && available === options.expectedClusters) clustersAvailableSeconds = elapsed();
      if (machinesRunningSeconds !== undefined && clustersAvailableSeconds !== undefined) break;
      if (elapsed() - lastLog >= 30) {
        lastLog = elapsed();
        log(`${elapsed().toFixed(0)} s: ${progress}, 1-min load ${oneMinuteLoad().toFixed(2)}`);
      }
      await sleep(250);
    }
    return {
      ...(machinesRunningSeconds !== undefined && { machinesRunningSeconds }),
      ...(clustersAvailableSeconds !== undefined && { clustersAvailableSeconds }),
      progress,
      windowSeconds: elapsed(),
    };
  }

  /** Deletes every Cluster at once and waits until no Machine, then no Cluster, is left. */
  async deleteAll(options: { timeoutMs: number; poll?: () => void }): Promise<Deleted> {
    const ns = this.namespace;
    const d0 = performance.now();
    const elapsed = () => (performance.now() - d0) / 1000;
    await Promise.all(
      this.clusters.list(ns).map((cluster) =>
        this.client
          .resource<Cluster>(RESOURCES.Cluster)
          .delete({ namespace: ns, name: cluster.metadata.name! })
          .catch((error: unknown) => {
            if (!isNotFound(error)) throw error;
          }),
      ),
    );
    let machinesGoneSeconds: number | undefined;
    let progress = '';
    let lastLog = 0;
    while (performance.now() - d0 < options.timeoutMs) {
      options.poll?.();
      const clustersLeft = this.clusters.list(ns).length;
      const machinesLeft = this.machines.list(ns).length;
      progress = `${clustersLeft} Clusters, ${machinesLeft} Machines left`;
      if (machinesGoneSeconds === undefined && machinesLeft === 0) machinesGoneSeconds = elapsed();
      if (clustersLeft === 0 && machinesLeft === 0) {
        log(`deletion: ${elapsed().toFixed(1)} s`);
        return { machinesGoneSeconds: machinesGoneSeconds!, clustersGoneSeconds: elapsed() };
      }
      if (elapsed() - lastLog >= 30) {
        lastLog = elapsed();
        log(`deleting, ${lastLog.toFixed(0)} s: ${progress}`);
      }
      await sleep(250);
    }
    log(`deletion: not within ${(options.timeoutMs / 60_000).toFixed(0)} min (${progress})`);
    return { ...(machinesGoneSeconds !== undefined && { machinesGoneSeconds }), deletionProgress: progress };
  }
}
