import { resourcePath, type KubeClient, HttpMethod, PatchStrategy } from '@capstan/kube';
import {
  isAlreadyExists,
  isForbidden,
  isNotFound,
  isTransportError,
  isUnauthorized,
  microTime,
  statusCodeOf,
} from '@capstan/kube';
import type { Logger } from 'pino';
import {
  LEASE_RESOURCE,
  NODE_LEASE_NAMESPACE,
  NODE_RESOURCE,
  nodeLease,
  readyNodeStatus,
  registrationNode,
  unknownConditions,
  unreachableTaints,
  UNREACHABLE_TAINT_KEY,
  withTaints,
  type NodeCondition,
  type NodeIdentity,
  type SimNode,
} from './node-object.js';
import { missingSharedClusterLabels } from './shared-cluster-nodes.js';

/** How a node reaches its cluster's API: a client authenticated with the node's join token. */
export interface WorkloadConnection {
  client: KubeClient;
  url: string;
}

export interface NodeFaults {
  /** The node stops posting status this many seconds after it registered; its conditions turn Unknown. */
  notReadyAfterSeconds?: number;
  /** The Node is deleted this many seconds after it registered, as if the host died. */
  disappearsAfterSeconds?: number;
}

export type NodeAgentPhase =
  /** No API server answers at the node's server URL yet; registration is retried. */
  | 'WaitingForAPIServer'
  /** The API server refused the node's credentials (401/403); retried, as a kubelet does. */
  | 'Rejected'
  /** A Node of that name exists with another provider ID. */
  | 'NameConflict'
  /** Registration or the heartbeat failed otherwise (the message says how); retried. */
  | 'Failed'
  | 'Registered'
  /** The not-ready fault fired: no more heartbeats, conditions Unknown, unreachable taints. */
  | 'NotReady'
  /** The disappear fault fired: the Node is deleted and the host is gone. */
  | 'Deleted'
  | 'Stopped';

export interface NodeAgentStatus {
  phase: NodeAgentPhase;
  message: string;
  /** The Node's creation time: the reference of the fault timers. */
  registeredAt?: Date;
}

export interface NodeAgentOptions {
  identity: NodeIdentity;
  faults: NodeFaults;
  /** The node was deleted by the disappear fault before (the machine's status says so): stay gone. */
  deletedByFault: boolean;
  /** The API at the node's server URL with its token, or undefined when nothing serves there. */
  connect: () => WorkloadConnection | undefined;
  heartbeatMs: number;
  nodeStatusMs: number;
  logger: Logger;
  /** Called after each phase change (the provider then reconciles the machine). */
  onChange: (status: NodeAgentStatus) => void;
  now?: () => Date;
}

const RETRY_MS = 2000;
const NOT_READY_TAINT_KEY = 'node.kubernetes.io/not-ready';

/**
 * Strategic merge patch of a Node's status, as the kubelet sends it: conditions merge by type, so conditions
 * others set on the Node (a test's, a node problem detector's) stay.
 */
function patchNodeStatus(
  connection: WorkloadConnection,
  name: string,
  status: Record<string, unknown>,
): Promise<unknown> {
  return connection.client.request({
    method: HttpMethod.PATCH,
    path: resourcePath(NODE_RESOURCE, { name, subresource: 'status' }),
    body: { status },
    contentType: PatchStrategy.StrategicMergePatch,
  });
}

/**
 * A simulated kubelet: registers the machine's Node, keeps its Lease and Ready condition fresh, and plays
 * the injected faults. One timer per node, all in-process: the per-node cost is a few objects and two
 * small writes per period.
 */
export class NodeAgent {
  private state: NodeAgentStatus;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> = Promise.resolve();
  private stopped = false;
  private lastLeaseAt = 0;
  private lastStatusAt = 0;
  private readySince: Date | undefined;
  private node: SimNode | undefined;
  private readonly log: Logger;
  private readonly now: () => Date;

  constructor(private readonly options: NodeAgentOptions) {
    this.log = options.logger.child({ node: options.identity.name });
    this.now = options.now ?? (() => new Date());
    this.state = options.deletedByFault
      ? { phase: 'Deleted', message: `Node ${options.identity.name} was deleted by the disappear fault` }
      : { phase: 'WaitingForAPIServer', message: 'not registered yet' };
  }

  get identity(): NodeIdentity {
    return this.options.identity;
  }

  get status(): NodeAgentStatus {
    return this.state;
  }

  start(): void {
    if (this.stopped || this.state.phase === 'Deleted') return;
    this.schedule(0);
  }

  /**
   * The machine's K3s was installed again (a plan ran install.sh): the node reports the new release as its kubelet
   * and kube-proxy version on its next status, posted at once.
   */
  reinstalled(version: string): void {
    if (this.options.identity.version === version) return;
    this.options.identity = { ...this.options.identity, version };
    this.lastStatusAt = 0;
    if (this.state.phase === 'Registered') this.schedule(0);
  }

  /**
   * The node's K3s restarted (after a cluster reset every node restarts, as Rancher's restore restarts them): a kubelet
   * registers its Node again on start, so a Node the restored data does not hold comes back. Faults keep counting from
   * the first registration; a Node the disappear fault deleted stays gone.
   */
  restarted(): void {
    if (this.stopped || this.state.phase === 'Deleted' || this.state.phase === 'NotReady') return;
    this.lastStatusAt = 0;
    this.lastLeaseAt = 0;
    this.set({
      phase: 'WaitingForAPIServer',
      message: `Node ${this.options.identity.name} registering again: its K3s restarted`,
      registeredAt: this.state.registeredAt,
    });
    this.schedule(0);
  }

  /**
   * The machine's fault fields changed while it runs: they apply at once, counted from registration as at boot.
   * A not-ready fault taken away lets a NotReady node come back (it registers again and posts Ready, and its
   * taints go, as when a kubelet that stopped returns); a Node the disappear fault deleted stays gone.
   */
  setFaults(faults: NodeFaults): void {
    const current = this.options.faults;
    if (
      current.notReadyAfterSeconds === faults.notReadyAfterSeconds &&
      current.disappearsAfterSeconds === faults.disappearsAfterSeconds
    ) {
      return;
    }
    this.options.faults = { ...faults };
    if (this.stopped) return;
    if (this.state.phase === 'NotReady' && faults.notReadyAfterSeconds === undefined) {
      this.set({
        phase: 'WaitingForAPIServer',
        message: `Node ${this.options.identity.name} recovering: the not-ready fault was removed`,
        registeredAt: this.state.registeredAt,
      });
    }
    if (this.state.phase !== 'Deleted') this.schedule(0);
  }

  /** Stops the loop; with `deleteNode`, deletes the Node and its Lease (what happens when the host goes away). */
  async stop(options: { deleteNode: boolean }): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
    if (options.deleteNode && this.state.phase !== 'Deleted') {
      const connection = this.options.connect();
      if (connection)
        await this.deleteNode(connection).catch((error: unknown) =>
          this.log.warn({ err: error }, 'could not delete the Node'),
        );
    }
    this.set(
      { phase: 'Stopped', message: 'the node agent stopped', registeredAt: this.state.registeredAt },
      false,
    );
  }

  private schedule(delayMs: number): void {
    if (this.stopped) return;
    clearTimeout(this.timer);
    this.timer = setTimeout(
      () => {
        this.running = this.tick().then((next) => {
          if (next !== undefined) this.schedule(next);
        });
      },
      Math.max(0, delayMs),
    );
    this.timer.unref();
  }

  private set(next: NodeAgentStatus, notify = true): void {
    const changed = next.phase !== this.state.phase || next.message !== this.state.message;
    this.state = next;
    if (changed && notify) {
      this.log.info({ phase: next.phase }, next.message);
      this.options.onChange(next);
    }
  }

  /** One step; returns when to run again (undefined: never). */
  private async tick(): Promise<number | undefined> {
    if (this.stopped) return undefined;
    const connection = this.options.connect();
    switch (this.state.phase) {
      case 'Registered':
        return connection ? this.heartbeat(connection) : this.options.heartbeatMs;
      case 'NotReady':
        return connection ? this.afterNotReady(connection) : this.options.heartbeatMs;
      case 'Deleted':
      case 'Stopped':
        return undefined;
      default:
        if (!connection) {
          this.set({
            phase: 'WaitingForAPIServer',
            message: "no API server answers at the node's server URL yet",
          });
          return RETRY_MS;
        }
        return this.register(connection);
    }
  }

  private async register(connection: WorkloadConnection): Promise<number | undefined> {
    const { identity } = this.options;
    const nodes = connection.client.resource<SimNode>(NODE_RESOURCE);
    try {
      let node: SimNode;
      try {
        node = await nodes.create(registrationNode(identity));
      } catch (error) {
        if (!isAlreadyExists(error)) throw error;
        node = await nodes.get({ name: identity.name });
        if (node.spec?.providerID !== identity.providerID) {
          this.set({
            phase: 'NameConflict',
            message: `a Node named ${identity.name} exists with another provider ID`,
          });
          return RETRY_MS * 5;
        }
        const labels = missingSharedClusterLabels(node.metadata?.labels, identity.labels);
        if (labels) node = await nodes.mergePatch({ name: identity.name }, { metadata: { labels } });
      }
      this.node = node;
      const registeredAt = new Date(node.metadata?.creationTimestamp ?? this.now());
      const ready = node.status?.conditions?.find((c) => c.type === 'Ready');
      this.readySince = ready?.status === 'True' ? new Date(ready.lastTransitionTime) : this.now();
      this.state = { ...this.state, registeredAt };
      const faultDelay = this.nextFault(registeredAt);
      if (faultDelay !== undefined && faultDelay <= 0) return this.fireFaults(connection, registeredAt);
      await this.postStatus(connection);
      await this.clearNotReadyTaint(connection, node);
      await this.renewLease(connection);
      this.set({
        phase: 'Registered',
        message: `Node ${identity.name} registered; Lease renewed every ${this.options.heartbeatMs / 1000} s`,
        registeredAt,
      });
      return this.nextWake(registeredAt);
    } catch (error) {
      this.set(this.failure(error, 'registration'));
      return RETRY_MS;
    }
  }

  private async heartbeat(connection: WorkloadConnection): Promise<number | undefined> {
    const registeredAt = this.state.registeredAt!;
    const due = this.nextFault(registeredAt);
    if (due !== undefined && due <= 0) return this.fireFaults(connection, registeredAt);
    const now = this.now().getTime();
    try {
      if (now - this.lastStatusAt >= this.options.nodeStatusMs) await this.postStatus(connection);
      if (now - this.lastLeaseAt >= this.options.heartbeatMs) await this.renewLease(connection);
    } catch (error) {
      if (isNotFound(error)) {
        // A kubelet whose Node was deleted under it does not register again until it restarts.
        this.set({
          phase: 'Failed',
          message: `Node ${this.options.identity.name} was deleted by someone else; it registers again when the provider restarts`,
          registeredAt,
        });
        return undefined;
      }
      this.log.debug({ err: error }, 'heartbeat failed; retrying');
    }
    return this.nextWake(registeredAt);
  }

  private async afterNotReady(connection: WorkloadConnection): Promise<number | undefined> {
    const registeredAt = this.state.registeredAt!;
    const due = this.nextFault(registeredAt);
    if (due === undefined) return undefined;
    if (due > 0) return due;
    return this.fireFaults(connection, registeredAt);
  }

  /** Milliseconds until the next fault that has not fired yet (negative: overdue), undefined when none is left. */
  private nextFault(registeredAt: Date): number | undefined {
    const { notReadyAfterSeconds, disappearsAfterSeconds } = this.options.faults;
    const at = (seconds: number | undefined) =>
      seconds === undefined ? undefined : registeredAt.getTime() + seconds * 1000 - this.now().getTime();
    const candidates = [
      this.state.phase === 'NotReady' ? undefined : at(notReadyAfterSeconds),
      at(disappearsAfterSeconds),
    ].filter((value): value is number => value !== undefined);
    return candidates.length === 0 ? undefined : Math.min(...candidates);
  }

  private nextWake(registeredAt: Date): number {
    const now = this.now().getTime();
    const lease = this.lastLeaseAt + this.options.heartbeatMs - now;
    const status = this.lastStatusAt + this.options.nodeStatusMs - now;
    const fault = this.nextFault(registeredAt);
    return Math.max(50, Math.min(lease, status, fault ?? Number.POSITIVE_INFINITY));
  }

  private async fireFaults(connection: WorkloadConnection, registeredAt: Date): Promise<number | undefined> {
    const { notReadyAfterSeconds, disappearsAfterSeconds } = this.options.faults;
    const elapsed = this.now().getTime() - registeredAt.getTime();
    const name = this.options.identity.name;
    try {
      if (disappearsAfterSeconds !== undefined && elapsed >= disappearsAfterSeconds * 1000) {
        await this.deleteNode(connection);
        this.set({
          phase: 'Deleted',
          message: `Node ${name} deleted ${disappearsAfterSeconds} s after it registered (injected fault)`,
          registeredAt,
        });
        return undefined;
      }
      if (
        notReadyAfterSeconds !== undefined &&
        elapsed >= notReadyAfterSeconds * 1000 &&
        this.state.phase !== 'NotReady'
      ) {
        await this.markNotReady(connection);
        this.set({
          phase: 'NotReady',
          message: `Node ${name} stopped posting status ${notReadyAfterSeconds} s after it registered (injected fault)`,
          registeredAt,
        });
      }
    } catch (error) {
      this.log.warn({ err: error }, 'could not apply an injected fault; retrying');
      return RETRY_MS;
    }
    const next = this.nextFault(registeredAt);
    return next === undefined ? undefined : Math.max(50, next);
  }

  private async postStatus(connection: WorkloadConnection): Promise<void> {
    const now = this.now();
    await patchNodeStatus(
      connection,
      this.options.identity.name,
      readyNodeStatus(this.options.identity, now, this.readySince ?? now),
    );
    this.lastStatusAt = now.getTime();
  }

  private async renewLease(connection: WorkloadConnection): Promise<void> {
    const now = this.now();
    const leases = connection.client.resource(LEASE_RESOURCE);
    const ref = { namespace: NODE_LEASE_NAMESPACE, name: this.options.identity.name };
    try {
      await leases.mergePatch(ref, { spec: { holderIdentity: ref.name, renewTime: microTime(now) } });
    } catch (error) {
      if (!isNotFound(error)) throw error;
      await leases.create(nodeLease(this.node!, now));
    }
    this.lastLeaseAt = now.getTime();
  }

  /**
   * The API server's TaintNodesByCondition admission taints every new Node not-ready; the node lifecycle
   * controller takes that taint, and the unreachable ones of a node that stopped posting, off once the node
   * reports Ready. No controller manager runs in the sim, so the node does it.
   */
  private async clearNotReadyTaint(connection: WorkloadConnection, node: SimNode): Promise<void> {
    const taints = node.spec?.taints ?? [];
    const kept = taints.filter((t) => t.key !== NOT_READY_TAINT_KEY && t.key !== UNREACHABLE_TAINT_KEY);
    if (kept.length === taints.length) return;
    await connection.client.resource<SimNode>(NODE_RESOURCE).jsonPatch({ name: node.metadata!.name! }, [
      { op: 'test', path: '/spec/taints', value: taints },
      { op: 'replace', path: '/spec/taints', value: kept },
    ]);
  }

  /** As the node lifecycle controller would, once the grace period passed without heartbeats. */
  private async markNotReady(connection: WorkloadConnection): Promise<void> {
    const nodes = connection.client.resource<SimNode>(NODE_RESOURCE);
    const node = await nodes.get({ name: this.options.identity.name });
    const now = this.now();
    const conditions: NodeCondition[] = unknownConditions(node.status?.conditions ?? [], now);
    await patchNodeStatus(connection, this.options.identity.name, { conditions });
    const taints = withTaints(
      node.spec?.taints?.filter((t) => t.key !== NOT_READY_TAINT_KEY),
      unreachableTaints(now),
    );
    await nodes.mergePatch({ name: this.options.identity.name }, { spec: { taints } });
  }

  private async deleteNode(connection: WorkloadConnection): Promise<void> {
    const name = this.options.identity.name;
    await connection.client
      .resource(LEASE_RESOURCE)
      .delete({ namespace: NODE_LEASE_NAMESPACE, name })
      .catch((error: unknown) => {
        if (!isNotFound(error)) throw error;
      });
    const nodes = connection.client.resource<SimNode>(NODE_RESOURCE);
    const node = await nodes.get({ name }).catch((error: unknown) => {
      if (isNotFound(error)) return undefined;
      throw error;
    });
    // Only this machine's Node: one of the same name with another provider ID is someone else's.
    if (node?.spec?.providerID !== this.options.identity.providerID) return;
    await nodes.delete({ name }, { preconditions: { uid: node.metadata?.uid } }).catch((error: unknown) => {
      if (!isNotFound(error)) throw error;
    });
  }

  private failure(error: unknown, during: string): NodeAgentStatus {
    const registeredAt = this.state.registeredAt;
    if (isUnauthorized(error) || isForbidden(error)) {
      return {
        phase: 'Rejected',
        message: `the API server refused the node's credentials during ${during} (HTTP ${statusCodeOf(error)})`,
        registeredAt,
      };
    }
    if (isTransportError(error)) {
      return {
        phase: 'WaitingForAPIServer',
        message: `the API server does not answer (${during})`,
        registeredAt,
      };
    }
    const code = statusCodeOf(error);
    return {
      phase: 'Failed',
      message: `${during} failed${code ? ` (HTTP ${code})` : ''}: ${error instanceof Error ? error.message : String(error)}`,
      registeredAt,
    };
  }
}
