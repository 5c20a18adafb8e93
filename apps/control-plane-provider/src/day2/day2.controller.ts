import type { V1Secret } from '@kubernetes/client-node';
import {
  getCondition,
  LABELS,
  RESOURCES,
  type Cluster,
  type EtcdSnapshot,
  type K3sConfig,
  type K3sControlPlane,
  type Machine,
} from '@capstan/api';
import { deepEqual, getControllerOf, type WatchEvent } from '@capstan/kube';
import { defineController, watch } from '@capstan/provider-kit';
import { MACHINE_NAME_LABEL } from '@capstan/node-agent';
import { SECRETS } from '../k3scontrolplane/secrets.js';
import { etcdCaches } from './etcd-servers.js';
import { EtcdCondition, Day2Reconciler } from './day2.reconciler.js';
import { UPGRADE_CONDITION } from './upgrade-guard.js';
import { CERTIFICATES_CONDITION } from './certificate-rotation.js';
import { ENCRYPTION_CONDITION } from './encryption-key-rotation.js';

export const DAY2_CONTROLLER = 'k3scontrolplane-day2';

/**
 * What the operations read of the control plane's own status, beside its spec: whether it is initialized, and the
 * rollout a guarded upgrade (or its rollback) waits for. The main controller writes the rest all the time.
 */
const controlPlaneFingerprint = (kcp: K3sControlPlane) => [
  kcp.metadata.generation,
  kcp.status?.initialization?.controlPlaneInitialized,
  kcp.status?.version,
  kcp.status?.replicas,
  kcp.status?.upToDateReplicas,
];

/** Which updates of a K3sControlPlane by others wake its operations: a new spec, or a change they wait for. */
export const day2Updates = (event: WatchEvent<K3sControlPlane>): boolean =>
  !event.oldObject ||
  !deepEqual(controlPlaneFingerprint(event.oldObject), controlPlaneFingerprint(event.object));

/**
 * What the operations read of a server Machine: whether it runs an etcd member (a Node, not deleting), whether its
 * Node is Ready (a rotation waits for the other servers to be), and the certificate expiry the core copied on.
 */
export const serverFingerprint = (m: Machine) => [
  m.status?.nodeRef?.name,
  m.metadata.deletionTimestamp,
  getCondition(m.status?.conditions, 'NodeReady')?.status,
  m.status?.certificatesExpiryDate,
];

/** The K3sControlPlane that controls a Machine (its servers are its own). */
export const controlPlaneOfMachine = (m: Machine): string[] => {
  const owner = getControllerOf(m);
  return owner?.kind === RESOURCES.K3sControlPlane.kind &&
    owner.apiVersion.startsWith(`${RESOURCES.K3sControlPlane.group}/`)
    ? [`${m.metadata.namespace}/${owner.name}`]
    : [];
};

/**
 * The second controller of K3sControlPlane (as upstream's topology controller is a second one of Cluster): scheduled
 * etcd snapshots, their retention, restores, guarded upgrades and certificate rotation. It owns only its own conditions and status.etcdSnapshotRestore, and
 * does not stop for a paused Cluster (a restore pauses it). Woken by spec changes of its control planes and the
 * status changes its operations wait for (initialized, a rollout), their snapshots, their server Machines (a Node,
 * Ready, deleting) and their servers' plan Secrets.
 */
export function day2Controller(deps: { now?: () => Date } = {}) {
  return defineController<K3sControlPlane>({
    name: DAY2_CONTROLLER,
    for: RESOURCES.K3sControlPlane,
    conditions: {
      owned: [
        EtcdCondition.SnapshotsScheduled,
        EtcdCondition.SnapshotRestored,
        UPGRADE_CONDITION,
        CERTIFICATES_CONDITION,
        ENCRYPTION_CONDITION,
      ],
      secondary: { failureCondition: EtcdCondition.OperationsReconciled },
    },
    // Its own controller writes the status all the time: only a new spec, or what an operation waits for, matters here.
    updates: day2Updates,
    wire: (kit) => {
      const { context } = kit;
      const secrets = kit.informer<V1Secret>(SECRETS, { labelSelector: LABELS.clusterName });
      const snapshots = kit.informer<EtcdSnapshot>(RESOURCES.EtcdSnapshot);
      const caches = etcdCaches(kit, secrets);
      const controlPlaneOfCluster = (namespace: string | undefined, clusterName: string | undefined) => {
        const ref = clusterName
          ? caches.clusters.getByName(namespace, clusterName)?.spec?.controlPlaneRef
          : undefined;
        return ref?.kind === RESOURCES.K3sControlPlane.kind ? [`${namespace}/${ref.name}`] : [];
      };
      return {
        reconciler: new Day2Reconciler({
          caches,
          snapshots,
          snapshotClient: context.client.resource<EtcdSnapshot>(RESOURCES.EtcdSnapshot),
          clusterClient: context.client.resource<Cluster>(RESOURCES.Cluster),
          controlPlaneClient: context.client.resource<K3sControlPlane>(RESOURCES.K3sControlPlane),
          configClient: context.client.resource<K3sConfig>(RESOURCES.K3sConfig),
          secrets: context.client.resource<V1Secret>(SECRETS),
          recorder: kit.recorder,
          ...(deps.now && { now: deps.now }),
        }),
        watches: [
          watch<EtcdSnapshot>(snapshots, {
            map: (s) => controlPlaneOfCluster(s.metadata.namespace, s.spec.clusterName),
            fingerprint: (s) => [s.status?.phase, s.metadata.deletionTimestamp],
          }),
          // A rotation waits for the other servers' Nodes to be Ready, a restore for a server with a Node.
          watch<Machine>(RESOURCES.Machine, {
            map: controlPlaneOfMachine,
            fingerprint: serverFingerprint,
          }),
          watch<V1Secret>(secrets, {
            // A restore waits on a server's plan: any plan change of the cluster's machines may be its outcome.
            map: (secret) =>
              secret.metadata?.labels?.[MACHINE_NAME_LABEL]
                ? controlPlaneOfCluster(secret.metadata.namespace, secret.metadata.labels[LABELS.clusterName])
                : [],
            fingerprint: (secret) => secret.data,
          }),
        ],
      };
    },
  });
}
