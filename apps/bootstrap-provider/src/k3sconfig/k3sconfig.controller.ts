import type { V1Secret } from '@kubernetes/client-node';
import {
  LABELS,
  RESOURCES,
  type Cluster,
  type K3sConfig,
  type K3sControlPlane,
  type Machine,
} from '@capstan/api';
import {
  getControllerOf,
  groupOf,
  LEASES_V1,
  specMetadataOrStatusFieldsChanged,
  specOrMetadataChanged,
  type Lease,
} from '@capstan/kube';
import { PLAN_SECRET_LABEL } from '@capstan/node-agent';
import { clusterChangesProvidersRead, defineController, watch } from '@capstan/provider-kit';
import { AgentLiveness } from './agent-liveness.js';
import {
  configKeysOfCluster,
  K3SCONFIG_CONTROLLER_CONDITIONS,
  K3sConfigReconciler,
} from './k3sconfig.reconciler.js';
import type { AgentConnection } from './machine-plan.js';
import { SECRETS } from './secrets.js';

export const K3SCONFIG_CONTROLLER = 'k3sconfig';

export interface K3sConfigControllerOptions {
  /** How node agents reach the management cluster; without it the bootstrap data installs no node agent. */
  agentConnection?: AgentConnection;
  /** The duration of the agents' heartbeat Leases (default AGENT_LEASE_SECONDS). */
  agentLeaseSeconds?: number;
}

/**
 * The K3sConfig controller: its configs, and what unblocks one: its Machine (spec and metadata), its Cluster, its
 * cluster's control plane (initialization), the cluster's secrets, and its node agent's heartbeat Lease going
 * silent or coming back.
 */
export function k3sConfigController(options: K3sConfigControllerOptions) {
  return defineController<K3sConfig>({
    name: K3SCONFIG_CONTROLLER,
    for: RESOURCES.K3sConfig,
    conditions: { owned: K3SCONFIG_CONTROLLER_CONDITIONS },
    wire: (kit) => {
      const configs = kit.primary;
      const machines = kit.informer<Machine>(RESOURCES.Machine);
      // Only cluster secrets (bootstrap data, token, certificates) are cached, never every secret of the namespace.
      const secrets = kit.informer<V1Secret>(SECRETS, { labelSelector: LABELS.clusterName });
      // The node agents' heartbeat Leases, only those of plan access (they carry its label).
      const liveness = new AgentLiveness(
        kit.informer<Lease>(LEASES_V1, { labelSelector: PLAN_SECRET_LABEL }),
      );
      const ofCluster = (namespace: string | undefined, clusterName: string | undefined) =>
        clusterName ? configKeysOfCluster(configs, machines, namespace, clusterName) : [];
      return {
        reconciler: new K3sConfigReconciler({
          client: kit.context.client,
          configs,
          machines,
          clusters: kit.informer<Cluster>(RESOURCES.Cluster),
          controlPlanes: kit.informer<K3sControlPlane>(RESOURCES.K3sControlPlane),
          secrets,
          liveness,
          ...(options.agentLeaseSeconds !== undefined && { agentLeaseSeconds: options.agentLeaseSeconds }),
          recorder: kit.recorder,
          logger: kit.context.logger,
          agentConnection: options.agentConnection,
        }),
        watches: [
          watch<Machine>(RESOURCES.Machine, {
            map: (machine) => {
              const ref = machine.spec?.bootstrap?.configRef;
              const ours =
                ref?.apiGroup === RESOURCES.K3sConfig.group && ref.kind === RESOURCES.K3sConfig.kind;
              return ours ? [`${machine.metadata?.namespace}/${ref.name}`] : [];
            },
            // Its spec (version, provider ID, cluster) and metadata (role label, in-place annotations); not the status
            // the core writes as the machine comes up.
            predicate: specOrMetadataChanged,
          }),
          watch<Cluster>(RESOURCES.Cluster, {
            map: (cluster) => ofCluster(cluster.metadata?.namespace, cluster.metadata?.name),
            predicate: clusterChangesProvidersRead,
          }),
          watch<K3sControlPlane>(RESOURCES.K3sControlPlane, {
            map: (kcp) => ofCluster(kcp.metadata?.namespace, kcp.metadata?.labels?.[LABELS.clusterName]),
            // Joining machines wait for `status.initialization.controlPlaneInitialized`; its other status is not read.
            predicate: specMetadataOrStatusFieldsChanged<K3sControlPlane>('initialization'),
          }),
          watch<V1Secret>(secrets, {
            map: (secret) => {
              const owner = getControllerOf(secret);
              if (
                owner?.kind === RESOURCES.K3sConfig.kind &&
                groupOf(owner.apiVersion) === RESOURCES.K3sConfig.group
              ) {
                return [`${secret.metadata?.namespace}/${owner.name}`];
              }
              return ofCluster(secret.metadata?.namespace, secret.metadata?.labels?.[LABELS.clusterName]);
            },
          }),
        ],
        sources: [(wake) => liveness.start(wake)],
      };
    },
  });
}
