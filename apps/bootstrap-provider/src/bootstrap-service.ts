import { RESOURCES, type K3sConfig, type K3sControlPlane, type Machine } from '@capstan/api';
import { type ClusterConnection } from '@capstan/kube';
import { type ServiceDefinition } from '@capstan/provider-kit';
import { serveCanUpdateMachine } from '@capstan/events';
import { answerCanUpdate } from './k3sconfig/can-update-responder.js';
import { k3sConfigController } from './k3sconfig/k3sconfig.controller.js';
import type { AgentConnection } from './k3sconfig/machine-plan.js';

export const BOOTSTRAP_PROVIDER_SERVICE = 'bootstrap-provider';

/**
 * How machines' node agents reach the management cluster: `CAPSTAN_AGENT_API_SERVER` when set (in a cluster, the
 * provider's own URL is the in-cluster service, which machines cannot reach), else the provider's API server; the
 * CA is the provider's kubeconfig CA. Without a CA no agent is installed (its connection could not be verified).
 */
export function agentConnectionOf(
  connection: ClusterConnection,
  override?: string,
): AgentConnection | undefined {
  const caPem = connection.tls.ca;
  if (!caPem) return undefined;
  return { server: override || connection.server, caPem };
}
export { K3SCONFIG_CONTROLLER } from './k3sconfig/k3sconfig.controller.js';

/** `CAPSTAN_AGENT_LEASE_SECONDS`: the node agents' heartbeat Lease duration (whole seconds, at least 3). */
export function agentLeaseSecondsOf(value: string | undefined): number | undefined {
  if (value === undefined || value === '') return undefined;
  const seconds = Number(value);
  if (!Number.isInteger(seconds) || seconds < 3)
    throw new Error(`CAPSTAN_AGENT_LEASE_SECONDS: ${value} is not a whole number of seconds >= 3`);
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
    // Asked by the core and the control plane provider before an in-place update (docs/in-place-updates.md).
    serveCanUpdateMachine(
      context.bus.nc,
      context.topology.root,
      RESOURCES.K3sConfig.kind,
      (request) =>
        answerCanUpdate(
          {
            client: context.client,
            configs: manager.informer<K3sConfig>(RESOURCES.K3sConfig),
            machines: manager.informer<Machine>(RESOURCES.Machine),
            controlPlanes: manager.informer<K3sControlPlane>(RESOURCES.K3sControlPlane),
          },
          request,
        ),
      context.logger,
    );
    const agentLeaseSeconds = agentLeaseSecondsOf(process.env['CAPSTAN_AGENT_LEASE_SECONDS']);
    k3sConfigController({
      agentConnection: agentConnectionOf(context.connection, process.env['CAPSTAN_AGENT_API_SERVER']),
      ...(agentLeaseSeconds !== undefined && { agentLeaseSeconds }),
    }).register(context);
  },
};
