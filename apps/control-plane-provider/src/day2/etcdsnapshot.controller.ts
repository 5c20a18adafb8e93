import type { V1Secret } from '@kubernetes/client-node';
import { FINALIZERS, LABELS, RESOURCES, type EtcdSnapshot, type K3sControlPlane } from '@capstan/api';
import { defineController, watch } from '@capstan/provider-kit';
import { MACHINE_NAME_LABEL } from '@capstan/node-agent';
import { clusterOfControlPlane, etcdCaches } from './etcd-servers.js';
import { EtcdSnapshotReconciler } from './etcdsnapshot.reconciler.js';
import { SECRETS } from '../k3scontrolplane/secrets.js';

export const ETCDSNAPSHOT_CONTROLLER = 'etcdsnapshot';

/** Snapshots still waiting on a machine's plan: a change of that machine's plan Secret moves them on. */
const ACTIVE = new Set(['Pending', 'Running', 'Deleting', undefined]);

/**
 * The EtcdSnapshot controller: takes each snapshot through its server's plan, and deletes the file with the object.
 * Woken by its snapshots, by the plan Secrets of the machines they run on, and by their control planes (initialized,
 * S3 settings).
 */
export function etcdSnapshotController() {
  return defineController<EtcdSnapshot>({
    name: ETCDSNAPSHOT_CONTROLLER,
    for: RESOURCES.EtcdSnapshot,
    conditions: { owned: ['Ready'] },
    finalizer: FINALIZERS.etcdSnapshot,
    wire: (kit) => {
      const { context, primary } = kit;
      const secrets = kit.informer<V1Secret>(SECRETS, { labelSelector: LABELS.clusterName });
      const waitingIn = (namespace: string | undefined, matches: (s: EtcdSnapshot) => boolean) =>
        primary
          .list()
          .filter((s) => s.metadata.namespace === namespace && ACTIVE.has(s.status?.phase) && matches(s))
          .map((s) => `${s.metadata.namespace}/${s.metadata.name}`);
      const caches = etcdCaches(kit, secrets);
      return {
        reconciler: new EtcdSnapshotReconciler({
          caches,
          secrets: context.client.resource<V1Secret>(SECRETS),
          recorder: kit.recorder,
        }),
        watches: [
          watch<V1Secret>(secrets, {
            map: (secret) => {
              const machine = secret.metadata?.labels?.[MACHINE_NAME_LABEL];
              return machine
                ? waitingIn(
                    secret.metadata?.namespace,
                    (s) => !s.status?.machineName || s.status.machineName === machine,
                  )
                : [];
            },
            fingerprint: (secret) => secret.data,
          }),
          watch<K3sControlPlane>(RESOURCES.K3sControlPlane, {
            map: (kcp) => {
              const cluster = clusterOfControlPlane(caches, kcp)?.metadata.name;
              return cluster ? waitingIn(kcp.metadata.namespace, (s) => s.spec.clusterName === cluster) : [];
            },
            fingerprint: (kcp) => [kcp.status?.initialization, kcp.spec.etcd],
          }),
        ],
      };
    },
  });
}
