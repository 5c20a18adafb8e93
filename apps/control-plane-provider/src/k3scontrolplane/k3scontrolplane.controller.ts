import type { V1Secret } from '@kubernetes/client-node';
import {
  FINALIZERS,
  LABELS,
  RESOURCES,
  type Cluster,
  type K3sControlPlane,
  type Machine,
} from '@capstan/api';
import { clusterChangesProvidersRead, defineController, watch } from '@capstan/provider-kit';
import { type AskCanUpdate } from './k3scontrolplane.in-place.js';
import { K3sControlPlaneReconciler } from './k3scontrolplane.reconciler.js';
import { CONTROL_PLANE_CONDITIONS } from './k3scontrolplane.status.js';
import { SECRETS } from './secrets.js';

export const K3SCONTROLPLANE_CONTROLLER = 'k3scontrolplane';

/**
 * The K3sControlPlane controller: its control planes, the Machines and cluster secrets (certificates, kubeconfig)
 * they own, and the Cluster that references one (infrastructure, endpoint, pause).
 */
export function k3sControlPlaneController(deps: { askCanUpdate?: AskCanUpdate } = {}) {
  return defineController<K3sControlPlane>({
    name: K3SCONTROLPLANE_CONTROLLER,
    for: RESOURCES.K3sControlPlane,
    conditions: { owned: CONTROL_PLANE_CONDITIONS },
    finalizer: FINALIZERS.k3sControlPlane,
    wire: (kit) => {
      const { context } = kit;
      // Only cluster secrets are cached (certificates, kubeconfigs), never every secret of the namespace.
      const secrets = kit.informer<V1Secret>(SECRETS, { labelSelector: LABELS.clusterName });
      return {
        reconciler: new K3sControlPlaneReconciler({
          client: context.client,
          clusters: kit.informer<Cluster>(RESOURCES.Cluster),
          machines: kit.informer<Machine>(RESOURCES.Machine),
          secrets,
          recorder: kit.recorder,
          logger: context.logger,
          ...(deps.askCanUpdate && { askCanUpdate: deps.askCanUpdate }),
          templateCacheOf: (type) => kit.informer(type),
        }),
        owns: [RESOURCES.Machine, secrets],
        watches: [
          watch<Cluster>(RESOURCES.Cluster, {
            map: (cluster) => {
              const ref = cluster.spec?.controlPlaneRef;
              const ours =
                ref?.apiGroup === RESOURCES.K3sControlPlane.group &&
                ref.kind === RESOURCES.K3sControlPlane.kind;
              return ours ? [`${cluster.metadata?.namespace}/${ref.name}`] : [];
            },
            predicate: clusterChangesProvidersRead,
          }),
        ],
      };
    },
  });
}
