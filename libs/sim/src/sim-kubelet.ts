import type { V1Node, V1Pod, V1PodCondition } from '@kubernetes/client-node';
import {
  Informer,
  isAlreadyExists,
  isConflict,
  isNotFound,
  isTransportError,
  NODES,
  objectKey,
  PODS,
  WorkQueue,
  type KubeClient,
} from '@capstan/kube';
import type { K3sRole } from '@capstan/k3s-bootstrap';
import type { Logger } from 'pino';
import { isMirrorPod, mirrorPodsFor } from './static-pods.js';
import { PodAddresses } from './pod-addresses.js';
import { nextPodStep, podNeedsOwnIP } from './pod-lifecycle.js';

/**
 * A node whose agent runs in this provider: `Running` (registered; its kubelet runs its pods) or `NotReady` (the
 * injected fault stopped it; the sim, standing in for the node lifecycle controller as it does for the node's
 * conditions, marks its pods not ready and leaves them otherwise alone).
 */
export interface KubeletNode {
  name: string;
  state: 'Running' | 'NotReady';
  internalIP: string;
  role: K3sRole;
  /** The release the node runs (`v1.34.4+k3s1`). */
  version: string;
}

export interface SimKubeletOptions {
  /** `namespace/cluster`, for logs. */
  clusterKey: string;
  /** The cluster's API with the nodes' credentials. */
  client: KubeClient;
  /** The node of that name, or undefined (not this provider's, not registered yet, or gone). */
  runningNode: (name: string) => KubeletNode | undefined;
  logger: Logger;
  /** Pods worked on at once (default 4). */
  concurrency?: number;
}

const BY_NODE = 'byNode';
/** Queue keys of nodes whose mirror pods are to be created (pod keys are `namespace/name`, never with this prefix). */
const MIRROR_KEY_PREFIX = 'mirror-pods:';
const CONFLICT_RETRY_MS = 200;
/** Each request of a pod step is bounded: a hung API server must not hold a worker. */
const REQUEST_TIMEOUT_MS = 15_000;
/** Steps that need no wait between them (ContainerCreating with no start delay, then Running) are taken in one go. */
const MAX_STEPS_PER_PASS = 4;

/**
 * The kubelets of one workload cluster's sim nodes, kwok-style: one pod watch for the cluster (not one per node), and
 * for every pod bound to a running node of this provider the steps `nextPodStep` gives, written as the kubelet
 * writes them (status merge patches guarded by resourceVersion, a final delete with grace period 0). Pods of a node
 * whose kubelet stopped (NotReady, deleted, another provider's) are left alone, so the controller manager treats
 * them as a real cluster does.
 */
export class SimKubelet {
  private readonly pods: Informer<V1Pod>;
  private readonly nodes: Informer<V1Node>;
  private readonly queue = new WorkQueue({ name: 'sim-kubelet' });
  private readonly addresses = new PodAddresses();
  private readonly log: Logger;
  private workers: Promise<void>[] = [];

  constructor(private readonly options: SimKubeletOptions) {
    this.log = options.logger.child({ component: 'sim-kubelet', cluster: options.clusterKey });
    this.pods = new Informer<V1Pod>(options.client, PODS, {
      logger: this.log,
      indexers: { [BY_NODE]: (pod) => (pod.spec?.nodeName ? [pod.spec.nodeName] : []) },
    });
    this.nodes = new Informer<V1Node>(options.client, NODES, { logger: this.log });
    this.pods.addEventHandler({
      onAdd: (pod) => this.observe(pod),
      onUpdate: (_, pod) => this.observe(pod),
      onDelete: (pod) => {
        if (pod.spec?.nodeName && pod.metadata?.uid) this.addresses.release(pod.spec.nodeName, pod.metadata.uid);
        // A kubelet recreates the mirror of a static pod that is deleted while it runs.
        if (isMirrorPod(pod) && pod.spec?.nodeName) this.queueMirrorPods(pod.spec.nodeName);
      },
    });
    // A node that gets its pod CIDR lets its waiting pods start.
    this.nodes.addEventHandler({
      onAdd: (node) => this.nodeChanged(node.metadata!.name!),
      onUpdate: (before, node) => {
        if (before.spec?.podCIDR !== node.spec?.podCIDR) this.nodeChanged(node.metadata!.name!);
      },
    });
  }

  start(): void {
    this.pods.start();
    this.nodes.start();
    for (let i = 0; i < (this.options.concurrency ?? 4); i++) this.workers.push(this.work());
  }

  /** A node's kubelet started, came back or stopped: its pods are looked at again, and its static pods mirrored. */
  nodeChanged(name: string): void {
    for (const pod of this.pods.byIndex(BY_NODE, name)) this.queue.add(objectKey(pod));
    this.queueMirrorPods(name);
  }

  private queueMirrorPods(nodeName: string): void {
    this.queue.add(`${MIRROR_KEY_PREFIX}${nodeName}`);
  }

  /** Creates the mirror pods of a running server node that are missing (the informer has synced: it knows). */
  private async ensureMirrorPods(nodeName: string): Promise<void> {
    const running = this.options.runningNode(nodeName);
    const node = this.nodes.getByName(undefined, nodeName);
    if (running?.state !== 'Running' || !node?.metadata?.uid) return;
    if (!this.pods.hasSynced()) {
      this.queue.addAfter(`${MIRROR_KEY_PREFIX}${nodeName}`, 500);
      return;
    }
    const wanted = mirrorPodsFor({ name: nodeName, uid: node.metadata.uid, role: running.role, version: running.version });
    for (const pod of wanted) {
      if (this.pods.getByName('kube-system', pod.metadata!.name!)) continue;
      await this.options.client
        .resource<V1Pod>(PODS)
        .create(pod, { signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) })
        .catch((error: unknown) => {
          if (!isAlreadyExists(error)) throw error;
        });
    }
  }

  /** Pods this kubelet sees (all nodes). */
  get podCount(): number {
    return this.pods.keys().length;
  }

  async stop(): Promise<void> {
    this.queue.shutDown();
    await Promise.all([this.pods.stop(), this.nodes.stop(), ...this.workers]);
    this.workers = [];
  }

  private observe(pod: V1Pod): void {
    const node = pod.spec?.nodeName;
    if (!node) return;
    if (pod.status?.podIP && podNeedsOwnIP(pod) && pod.metadata?.uid)
      this.addresses.hold(node, pod.metadata.uid, pod.status.podIP);
    if (this.options.runningNode(node)) this.queue.add(objectKey(pod));
  }

  private async work(): Promise<void> {
    for (;;) {
      const key = await this.queue.get();
      if (key === undefined) return;
      try {
        await this.process(key);
        this.queue.forget(key);
      } catch (error) {
        if (isConflict(error)) this.queue.addAfter(key, CONFLICT_RETRY_MS);
        else {
          if (!isTransportError(error)) this.log.warn({ err: error, pod: key }, 'pod step failed; retrying');
          this.queue.addRateLimited(key);
        }
      } finally {
        this.queue.done(key);
      }
    }
  }

  private async process(key: string): Promise<void> {
    if (key.startsWith(MIRROR_KEY_PREFIX)) return this.ensureMirrorPods(key.slice(MIRROR_KEY_PREFIX.length));
    let pod = this.pods.get(key);
    const nodeName = pod?.spec?.nodeName;
    const node = nodeName ? this.options.runningNode(nodeName) : undefined;
    if (!pod || !nodeName || !node) return;
    const resources = this.options.client.resource<V1Pod>(PODS);
    const ref = { namespace: pod.metadata!.namespace!, name: pod.metadata!.name! };
    if (node.state === 'NotReady') {
      const conditions = markedNotReady(pod, new Date());
      if (conditions) {
        await resources.mergePatch(
          ref,
          { metadata: { resourceVersion: pod.metadata!.resourceVersion }, status: { conditions } },
          { subresource: 'status', signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) },
        );
      }
      return;
    }
    for (let pass = 0; pass < MAX_STEPS_PER_PASS; pass++) {
      const step = nextPodStep(pod, { now: new Date(), nodeIP: node.internalIP, podIP: this.podIP(nodeName, pod) });
      switch (step.kind) {
        case 'none':
          return;
        case 'wait':
          this.queue.addAfter(key, step.afterMs);
          return;
        case 'delete':
          await resources
            .delete(ref, {
              gracePeriodSeconds: 0,
              preconditions: { uid: pod.metadata!.uid },
              signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
            })
            .catch((error: unknown) => {
              if (!isNotFound(error)) throw error;
            });
          return;
        case 'status':
          // Guarded by the resourceVersion the step was computed from: a stale cache gets a conflict, not a regression.
          pod = await resources.mergePatch(
            ref,
            { metadata: { resourceVersion: pod.metadata!.resourceVersion }, status: step.status },
            { subresource: 'status', signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) },
          );
          if (step.recheckMs === undefined) return;
          if (step.recheckMs > 0) {
            this.queue.addAfter(key, step.recheckMs);
            return;
          }
      }
    }
    this.queue.add(key);
  }

  private podIP(nodeName: string, pod: V1Pod): string | undefined {
    if (pod.status?.podIP) return pod.status.podIP;
    if (!podNeedsOwnIP(pod)) return undefined;
    const podCIDR = this.nodes.getByName(undefined, nodeName)?.spec?.podCIDR;
    return podCIDR ? this.addresses.assign(nodeName, podCIDR, pod.metadata!.uid!) : undefined;
  }
}

/**
 * The pod's conditions with Ready False, as the node lifecycle controller's MarkPodsNotReady leaves a pod of a node
 * that stopped answering; undefined when there is nothing to change (already not ready, or finished).
 */
function markedNotReady(pod: V1Pod, now: Date): V1PodCondition[] | undefined {
  const phase = pod.status?.phase;
  if (phase === 'Succeeded' || phase === 'Failed') return undefined;
  const conditions = pod.status?.conditions ?? [];
  const ready = conditions.find((c) => c.type === 'Ready');
  if (!ready || ready.status === 'False') return undefined;
  return conditions.map((c) => (c.type === 'Ready' ? { ...c, status: 'False', lastTransitionTime: now } : c));
}
