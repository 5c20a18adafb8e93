import type { V1Secret } from '@kubernetes/client-node';
import {
  LABELS,
  RESOURCES,
  type Cluster,
  type EtcdSnapshot,
  type K3sConfig,
  type K3sControlPlane,
} from '@capstan/api';
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
 * The second controller of K3sControlPlane (as upstream's topology controller is a second one of Cluster): scheduled
 * etcd snapshots, their retention, restores, guarded upgrades and certificate rotation. It owns only its own conditions and status.etcdSnapshotRestore, and
 * does not stop for a paused Cluster (a restore pauses it). Woken by spec changes of its control planes, their
 * snapshots and their servers' plan Secrets.
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
    // Its own controller writes the status all the time: only a new spec, or the control plane becoming initialized, matters here.
    updates: (event) =>
      event.oldObject?.metadata.generation !== event.object.metadata.generation ||
      event.oldObject?.status?.initialization?.controlPlaneInitialized !==
        event.object.status?.initialization?.controlPlaneInitialized,
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
