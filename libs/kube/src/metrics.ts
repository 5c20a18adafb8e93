import { Counter, Gauge, Histogram, Registry } from 'prom-client';

export type ReconcileResultLabel = 'success' | 'error' | 'requeue' | 'requeue_after';

/** What a work queue reports; implemented by RuntimeMetrics, labelled with the queue name. */
export interface WorkQueueMetrics {
  depth(name: string, depth: number): void;
  added(name: string): void;
  retried(name: string): void;
  queued(name: string, seconds: number): void;
  worked(name: string, seconds: number): void;
}

const RECONCILE_BUCKETS = [
  0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7, 0.8, 0.9, 1, 1.25, 1.5,
  1.75, 2, 2.5, 3, 3.5, 4, 4.5, 5, 6, 7, 8, 9, 10, 15, 20, 25, 30, 40, 50, 60,
];
/** client-go: ExponentialBuckets(10e-9, 10, 12), 10 ns to 1000 s. */
const QUEUE_BUCKETS = Array.from({ length: 12 }, (_, i) => 10e-9 * 10 ** i);

/**
 * The metrics of controller-runtime and client-go's workqueue, under their names, in one registry. Each
 * manager gets its own registry, so several managers in one process don't collide.
 */
export class RuntimeMetrics implements WorkQueueMetrics {
  readonly reconcileTotal: Counter<'controller' | 'result'>;
  readonly reconcileErrors: Counter<'controller'>;
  readonly terminalReconcileErrors: Counter<'controller'>;
  readonly reconcilePanics: Counter<'controller'>;
  readonly reconcileTime: Histogram<'controller'>;
  readonly maxConcurrentReconciles: Gauge<'controller'>;
  readonly activeWorkers: Gauge<'controller'>;
  readonly leaderElectionMasterStatus: Gauge<'name'>;
  private readonly workqueueDepth: Gauge<'name'>;
  private readonly workqueueAdds: Counter<'name'>;
  private readonly workqueueRetries: Counter<'name'>;
  private readonly workqueueQueueDuration: Histogram<'name'>;
  private readonly workqueueWorkDuration: Histogram<'name'>;

  constructor(readonly registry: Registry = new Registry()) {
    const registers = [registry];
    this.reconcileTotal = new Counter({
      name: 'controller_runtime_reconcile_total',
      help: 'Total number of reconciliations per controller',
      labelNames: ['controller', 'result'],
      registers,
    });
    this.reconcileErrors = new Counter({
      name: 'controller_runtime_reconcile_errors_total',
      help: 'Total number of reconciliation errors per controller',
      labelNames: ['controller'],
      registers,
    });
    this.terminalReconcileErrors = new Counter({
      name: 'controller_runtime_terminal_reconcile_errors_total',
      help: 'Total number of terminal reconciliation errors per controller',
      labelNames: ['controller'],
      registers,
    });
    this.reconcilePanics = new Counter({
      name: 'controller_runtime_reconcile_panics_total',
      help: 'Total number of reconciliations that threw something other than an Error',
      labelNames: ['controller'],
      registers,
    });
    this.reconcileTime = new Histogram({
      name: 'controller_runtime_reconcile_time_seconds',
      help: 'Length of time per reconciliation per controller',
      labelNames: ['controller'],
      buckets: RECONCILE_BUCKETS,
      registers,
    });
    this.maxConcurrentReconciles = new Gauge({
      name: 'controller_runtime_max_concurrent_reconciles',
      help: 'Maximum number of concurrent reconciles per controller',
      labelNames: ['controller'],
      registers,
    });
    this.activeWorkers = new Gauge({
      name: 'controller_runtime_active_workers',
      help: 'Number of currently used workers per controller',
      labelNames: ['controller'],
      registers,
    });
    this.leaderElectionMasterStatus = new Gauge({
      name: 'leader_election_master_status',
      help: '1 while this replica holds the lease, 0 otherwise',
      labelNames: ['name'],
      registers,
    });
    this.workqueueDepth = new Gauge({
      name: 'workqueue_depth',
      help: 'Current depth of workqueue',
      labelNames: ['name'],
      registers,
    });
    this.workqueueAdds = new Counter({
      name: 'workqueue_adds_total',
      help: 'Total number of adds handled by workqueue',
      labelNames: ['name'],
      registers,
    });
    this.workqueueRetries = new Counter({
      name: 'workqueue_retries_total',
      help: 'Total number of retries handled by workqueue',
      labelNames: ['name'],
      registers,
    });
    this.workqueueQueueDuration = new Histogram({
      name: 'workqueue_queue_duration_seconds',
      help: 'How long in seconds an item stays in workqueue before being requested',
      labelNames: ['name'],
      buckets: QUEUE_BUCKETS,
      registers,
    });
    this.workqueueWorkDuration = new Histogram({
      name: 'workqueue_work_duration_seconds',
      help: 'How long in seconds processing an item from workqueue takes',
      labelNames: ['name'],
      buckets: QUEUE_BUCKETS,
      registers,
    });
  }

  depth(name: string, depth: number): void {
    this.workqueueDepth.set({ name }, depth);
  }

  added(name: string): void {
    this.workqueueAdds.inc({ name });
  }

  retried(name: string): void {
    this.workqueueRetries.inc({ name });
  }

  queued(name: string, seconds: number): void {
    this.workqueueQueueDuration.observe({ name }, seconds);
  }

  worked(name: string, seconds: number): void {
    this.workqueueWorkDuration.observe({ name }, seconds);
  }
}
