import type { KubernetesObject, V1Secret } from '@kubernetes/client-node';
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
  type ClusterConnection,
  type Lease,
} from '@capstan/kube';
import { PLAN_SECRET_LABEL } from '@capstan/node-agent';
import { clusterChangesProvidersRead, type ServiceDefinition } from '@capstan/provider-kit';
import { serveCanUpdateMachine } from '@capstan/events';
import { AgentLiveness } from './k3sconfig/agent-liveness.js';
import { answerCanUpdate } from './k3sconfig/can-update-responder.js';
import { configKeysOfCluster, K3sConfigReconciler } from './k3sconfig/k3sconfig.reconciler.js';
import type { AgentConnection } from './k3sconfig/machine-plan.js';
import { SECRETS } from './k3sconfig/secrets.js';

export const BOOTSTRAP_PROVIDER_SERVICE = 'bootstrap-provider';

/**
 * How machines' node agents reach the management cluster: `CAPSTAN_AGENT_API_SERVER` when set (in a cluster, the
 * provider's own URL is the in-cluster service, which machines cannot reach), else the provider's API server; the
 * CA is the provider's kubeconfig CA. Without a CA no agent is installed (its connection could not be verified).
 */
export function agentConnectionOf(connection: ClusterConnection, override?: string): AgentConnection | undefined {
  const caPem = connection.tls.ca;
  if (!caPem) return undefined;
  return { server: override || connection.server, caPem };
}
export const K3SCONFIG_CONTROLLER = 'k3sconfig';

/** `CAPSTAN_AGENT_LEASE_SECONDS`: the node agents' heartbeat Lease duration (whole seconds, at least 3). */
export function agentLeaseSecondsOf(value: string | undefined): number | undefined {
  if (value === undefined || value === '') return undefined;
  const seconds = Number(value);
  if (!Number.isInteger(seconds) || seconds < 3) throw new Error(`CAPSTAN_AGENT_LEASE_SECONDS: ${value} is not a whole number of seconds >= 3`);
  return seconds;
}

/**
 * The K3s bootstrap provider: one controller that renders each K3sConfig's bootstrap data. K3sConfigTemplate
 * needs none (the core clones it). It watches the Machines, Clusters, K3sControlPlanes and cluster secrets
 * that unblock a K3sConfig, and publishes `bootstrap.data-secret-created`; it consumes no events. Each machine
 * also gets a plan Secret and a node agent (docs/node-agent.md), whose reports it turns into `PlanApplied` and
 * `machine-plan.*` hand-offs.
 */
export const bootstrapProviderService: ServiceDefinition = {
  name: BOOTSTRAP_PROVIDER_SERVICE,
  setup(context) {
    const manager = context.manager;
    const configs = manager.informer<K3sConfig>(RESOURCES.K3sConfig);
    const machines = manager.informer<Machine>(RESOURCES.Machine);
    const clusters = manager.informer<Cluster>(RESOURCES.Cluster);
    const controlPlanes = manager.informer<K3sControlPlane>(RESOURCES.K3sControlPlane);
    // Only cluster secrets (bootstrap data, token, certificates) are cached, never every secret of the namespace.
    const secrets = manager.informer<V1Secret>(SECRETS, { labelSelector: LABELS.clusterName });
    const agentLeaseSeconds = agentLeaseSecondsOf(process.env['CAPSTAN_AGENT_LEASE_SECONDS']);
    // The node agents' heartbeat Leases, only those of plan access (they carry its label).
    const liveness = new AgentLiveness(manager.informer<Lease>(LEASES_V1, { labelSelector: PLAN_SECRET_LABEL }), (key) =>
      context.controllers.enqueue(K3SCONFIG_CONTROLLER, key),
    );
    liveness.start();
    const reconciler = new K3sConfigReconciler({
      client: context.client,
      configs,
      machines,
      clusters,
      controlPlanes,
      secrets,
      liveness,
      ...(agentLeaseSeconds !== undefined && { agentLeaseSeconds }),
      outbox: context.outbox,
      recorder: context.recorder(K3SCONFIG_CONTROLLER),
      logger: context.logger,
      agentConnection: agentConnectionOf(context.connection, process.env['CAPSTAN_AGENT_API_SERVER']),
    });
    const ofCluster = (namespace: string | undefined, clusterName: string | undefined) =>
      clusterName ? configKeysOfCluster(configs, machines, namespace, clusterName) : [];

    // Asked by the core and the control plane provider before an in-place update (docs/in-place-updates.md).
    serveCanUpdateMachine(
      context.bus.nc,
      context.topology.root,
      RESOURCES.K3sConfig.kind,
      (request) => answerCanUpdate({ client: context.client, configs, machines, controlPlanes }, request),
      context.logger,
    );

    context.addController<K3sConfig>({
      name: K3SCONFIG_CONTROLLER,
      for: configs,
      reconcile: reconciler.reconcile,
      maxConcurrentReconciles: context.options.concurrency,
      resyncPeriodMs: context.options.syncPeriodSeconds * 1000,
      // Kinds given by resource resolve to the same shared informers as above (same kind, same scope).
      watches: [
        {
          for: RESOURCES.Machine,
          map: (obj: KubernetesObject) => {
            const ref = (obj as Machine).spec?.bootstrap?.configRef;
            const ours = ref?.apiGroup === RESOURCES.K3sConfig.group && ref.kind === RESOURCES.K3sConfig.kind;
            return ours ? [`${obj.metadata?.namespace}/${ref.name}`] : [];
          },
          // Its spec (version, provider ID, cluster) and metadata (role label, in-place annotations); not the status
          // the core writes as the machine comes up.
          predicate: specOrMetadataChanged,
        },
        {
          for: RESOURCES.Cluster,
          map: (obj) => ofCluster(obj.metadata?.namespace, obj.metadata?.name),
          predicate: clusterChangesProvidersRead,
        },
        {
          for: RESOURCES.K3sControlPlane,
          map: (obj) => ofCluster(obj.metadata?.namespace, obj.metadata?.labels?.[LABELS.clusterName]),
          // Joining machines wait for `status.initialization.controlPlaneInitialized`; its other status is not read.
          predicate: specMetadataOrStatusFieldsChanged<K3sControlPlane>('initialization'),
        },
        {
          for: secrets,
          map: (obj) => {
            const owner = getControllerOf(obj);
            if (
              owner?.kind === RESOURCES.K3sConfig.kind &&
              groupOf(owner.apiVersion) === RESOURCES.K3sConfig.group
            ) {
              return [`${obj.metadata?.namespace}/${owner.name}`];
            }
            return ofCluster(obj.metadata?.namespace, obj.metadata?.labels?.[LABELS.clusterName]);
          },
        },
      ],
    });
  },
};
