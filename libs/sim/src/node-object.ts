import { createHash } from 'node:crypto';
import type { KubernetesObject } from '@kubernetes/client-node';
import type { K3sRole, NodeTaint } from '@capstan/k3s-bootstrap';
import { microTime } from '@capstan/kube';

export interface NodeAddress {
  type: 'Hostname' | 'InternalIP' | 'ExternalIP' | 'InternalDNS' | 'ExternalDNS';
  address: string;
}

/** What a simulated host registers as: from its machine and its K3s config. */
export interface NodeIdentity {
  name: string;
  providerID: string;
  role: K3sRole;
  /** The K3s release from the install command, reported as kubelet version (`v1.31.4+k3s1`). */
  version: string;
  /** `node-label` entries of the K3s config. */
  labels: Record<string, string>;
  /** `node-taint` entries of the K3s config. */
  taints: readonly NodeTaint[];
  addresses: readonly NodeAddress[];
  /** Stable per machine (its uid): machine-id, system UUID. */
  machineUID: string;
}

export interface NodeCondition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  reason: string;
  message: string;
  lastHeartbeatTime: string;
  lastTransitionTime: string;
}

export interface NodeTaintSpec {
  key: string;
  value?: string;
  effect: string;
  timeAdded?: string;
}

export interface SimNode extends KubernetesObject {
  spec?: { providerID?: string; taints?: NodeTaintSpec[]; podCIDR?: string };
  status?: { conditions?: NodeCondition[] } & Record<string, unknown>;
}

export const NODE_RESOURCE = {
  group: '',
  version: 'v1',
  plural: 'nodes',
  kind: 'Node',
  namespaced: false,
} as const;
export const LEASE_RESOURCE = {
  group: 'coordination.k8s.io',
  version: 'v1',
  plural: 'leases',
  kind: 'Lease',
  namespaced: true,
} as const;
export const NODE_LEASE_NAMESPACE = 'kube-node-lease';
/** The kubelet's default node lease duration. */
export const NODE_LEASE_DURATION_SECONDS = 40;

/** metav1.Time: RFC 3339, second precision. */
export function metaTime(date: Date): string {
  return date.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** Labels a K3s node carries: the kubelet's well-known ones, K3s's role labels, then its `node-label`s. */
export function nodeLabels(identity: NodeIdentity): Record<string, string> {
  const server = identity.role !== 'agent';
  return {
    'kubernetes.io/hostname': identity.name,
    'kubernetes.io/os': 'linux',
    'kubernetes.io/arch': 'amd64',
    'beta.kubernetes.io/os': 'linux',
    'beta.kubernetes.io/arch': 'amd64',
    'node.kubernetes.io/instance-type': 'k3s',
    'beta.kubernetes.io/instance-type': 'k3s',
    ...(server && {
      'node-role.kubernetes.io/control-plane': 'true',
      'node-role.kubernetes.io/master': 'true',
      'node-role.kubernetes.io/etcd': 'true',
    }),
    ...identity.labels,
  };
}

/** The Node a kubelet creates when it registers: labels, provider ID and its registration taints. */
export function registrationNode(identity: NodeIdentity): SimNode {
  const internalIP = identity.addresses.find((a) => a.type === 'InternalIP')?.address;
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name: identity.name,
      labels: nodeLabels(identity),
      annotations: {
        'node.alpha.kubernetes.io/ttl': '0',
        'volumes.kubernetes.io/controller-managed-attach-detach': 'true',
        'k3s.io/hostname': identity.name,
        ...(internalIP && { 'k3s.io/internal-ip': internalIP }),
      },
    },
    spec: {
      providerID: identity.providerID,
      ...(identity.taints.length > 0 && {
        taints: identity.taints.map((t) => ({
          key: t.key,
          ...(t.value !== undefined && { value: t.value }),
          effect: t.effect,
        })),
      }),
    },
  };
}

function hex(input: string, length: number): string {
  return createHash('sha256').update(input).digest('hex').slice(0, length);
}

const CAPACITY = { cpu: '2', memory: '4030184Ki', pods: '110', 'ephemeral-storage': '20470152Ki' };

/** A kubelet's node status with every condition healthy; `since` is when Ready last changed. */
export function readyNodeStatus(identity: NodeIdentity, now: Date, since: Date): Record<string, unknown> {
  const heartbeat = metaTime(now);
  const transition = metaTime(since);
  const condition = (
    type: string,
    status: 'True' | 'False',
    reason: string,
    message: string,
  ): NodeCondition => ({
    type,
    status,
    reason,
    message,
    lastHeartbeatTime: heartbeat,
    lastTransitionTime: transition,
  });
  const uuid = hex(identity.machineUID, 32);
  return {
    conditions: [
      condition(
        'MemoryPressure',
        'False',
        'KubeletHasSufficientMemory',
        'kubelet has sufficient memory available',
      ),
      condition('DiskPressure', 'False', 'KubeletHasNoDiskPressure', 'kubelet has no disk pressure'),
      condition('PIDPressure', 'False', 'KubeletHasSufficientPID', 'kubelet has sufficient PID available'),
      condition('Ready', 'True', 'KubeletReady', 'kubelet is posting ready status'),
    ],
    addresses: identity.addresses.map((a) => ({ type: a.type, address: a.address })),
    capacity: CAPACITY,
    allocatable: CAPACITY,
    daemonEndpoints: { kubeletEndpoint: { Port: 10250 } },
    nodeInfo: {
      machineID: uuid,
      systemUUID: `${uuid.slice(0, 8)}-${uuid.slice(8, 12)}-${uuid.slice(12, 16)}-${uuid.slice(16, 20)}-${uuid.slice(20)}`,
      bootID: hex(`${identity.machineUID}:boot`, 32),
      kernelVersion: '6.1.0-capstan-sim',
      osImage: `Capstan Sim (K3s ${identity.version})`,
      containerRuntimeVersion: 'containerd://1.7.0-sim',
      kubeletVersion: identity.version,
      kubeProxyVersion: identity.version,
      operatingSystem: 'linux',
      architecture: 'amd64',
    },
  };
}

/**
 * What the node lifecycle controller writes when a node stops posting status: every condition Unknown
 * (reason NodeStatusUnknown), heartbeats left as they were.
 */
export function unknownConditions(conditions: readonly NodeCondition[], now: Date): NodeCondition[] {
  return conditions.map((c) => ({
    ...c,
    status: 'Unknown',
    reason: 'NodeStatusUnknown',
    message: 'Kubelet stopped posting node status.',
    lastTransitionTime: c.status === 'Unknown' ? c.lastTransitionTime : metaTime(now),
  }));
}

/** The node lifecycle controller's taints for an unreachable node. */
export const UNREACHABLE_TAINT_KEY = 'node.kubernetes.io/unreachable';

export function unreachableTaints(now: Date): NodeTaintSpec[] {
  return [
    { key: UNREACHABLE_TAINT_KEY, effect: 'NoSchedule' },
    { key: UNREACHABLE_TAINT_KEY, effect: 'NoExecute', timeAdded: metaTime(now) },
  ];
}

/** `existing` plus the taints of `added` it does not have (same key and effect). */
export function withTaints(
  existing: readonly NodeTaintSpec[] | undefined,
  added: readonly NodeTaintSpec[],
): NodeTaintSpec[] {
  const list = [...(existing ?? [])];
  for (const taint of added) {
    if (!list.some((t) => t.key === taint.key && t.effect === taint.effect)) list.push(taint);
  }
  return list;
}

export function nodeLease(node: SimNode, now: Date): KubernetesObject & { spec: Record<string, unknown> } {
  const name = node.metadata!.name!;
  return {
    apiVersion: 'coordination.k8s.io/v1',
    kind: 'Lease',
    metadata: {
      name,
      namespace: NODE_LEASE_NAMESPACE,
      ownerReferences: [{ apiVersion: 'v1', kind: 'Node', name, uid: node.metadata!.uid! }],
    },
    spec: {
      holderIdentity: name,
      leaseDurationSeconds: NODE_LEASE_DURATION_SECONDS,
      renewTime: microTime(now),
    },
  };
}

/**
 * A stable loopback address for a simulated host (127.x.y.z, never 127.0.0.1): distinct per machine like a
 * cloud's private IPs, and on this host, like the machine.
 */
export function simulatedAddress(namespace: string, name: string): string {
  const digest = createHash('sha256').update(`${namespace}/${name}`).digest();
  return `127.${1 + (digest[0]! % 254)}.${digest[1]!}.${1 + (digest[2]! % 254)}`;
}
