import { askCanUpdateMachine } from '@capstan/events';
import type { V1Secret } from '@kubernetes/client-node';
import { LABELS, RESOURCES, type Cluster, type K3sControlPlane, type Machine } from '@capstan/api';
import { clusterChangesProvidersRead, type ServiceDefinition } from '@capstan/provider-kit';
import { K3sControlPlaneReconciler } from './k3scontrolplane/k3scontrolplane.reconciler.js';
import { SECRETS } from './k3scontrolplane/secrets.js';

export const CONTROL_PLANE_PROVIDER_SERVICE = 'control-plane-provider';
export const K3SCONTROLPLANE_CONTROLLER = 'k3scontrolplane';

/**
 * The K3s control plane provider: one controller for K3sControlPlane. It owns the control plane Machines
 * and the cluster certificate and kubeconfig secrets, watches Clusters (infrastructure, endpoint, pause),
 * and publishes `control-plane.initialized`, `.available` and `.scaled`; it consumes no events.
 */
export const controlPlaneProviderService: ServiceDefinition = {
  name: CONTROL_PLANE_PROVIDER_SERVICE,
  setup(context) {
    const manager = context.manager;
    const controlPlanes = manager.informer<K3sControlPlane>(RESOURCES.K3sControlPlane);
    const clusters = manager.informer<Cluster>(RESOURCES.Cluster);
    const machines = manager.informer<Machine>(RESOURCES.Machine);
    // Only cluster secrets are cached (certificates, kubeconfigs), never every secret of the namespace.
    const secrets = manager.informer<V1Secret>(SECRETS, { labelSelector: LABELS.clusterName });
    const reconciler = new K3sControlPlaneReconciler({
      client: context.client,
      controlPlanes,
      clusters,
      machines,
      secrets,
      outbox: context.outbox,
      recorder: context.recorder(K3SCONTROLPLANE_CONTROLLER),
      logger: context.logger,
      askCanUpdate: (request) => askCanUpdateMachine(context.bus.nc, context.topology.root, request),
      templateCacheOf: (type) => manager.informer(type),
    });
    context.addController<K3sControlPlane>({
      name: K3SCONTROLPLANE_CONTROLLER,
      for: controlPlanes,
      reconcile: reconciler.reconcile,
      maxConcurrentReconciles: context.options.concurrency,
      resyncPeriodMs: context.options.syncPeriodSeconds * 1000,
      // Kinds given by resource resolve to the same shared informers as above (same kind, same scope).
      owns: [RESOURCES.Machine, secrets],
      watches: [
        {
          for: RESOURCES.Cluster,
          map: (obj) => {
            const ref = (obj as Cluster).spec?.controlPlaneRef;
            const ours =
              ref?.apiGroup === RESOURCES.K3sControlPlane.group &&
              ref.kind === RESOURCES.K3sControlPlane.kind;
            return ours ? [`${obj.metadata?.namespace}/${ref.name}`] : [];
          },
          predicate: clusterChangesProvidersRead,
        },
      ],
    });
  },
};
