import { CoreV1Api, KubeConfig, type KubernetesObject } from '@kubernetes/client-node';
import {
  BOOTSTRAP_GROUP,
  CLUSTER_SECRET_TYPE,
  INFRASTRUCTURE_GROUP,
  LABELS,
  RESOURCES,
  type Cluster,
  type Machine,
  type SimCluster,
  type SimClusterMode,
  type SimMachine,
} from '@capstan/api';
import type { K3sAgentConfigSpec, K3sRole } from '@capstan/k3s-bootstrap';
import { SECRETS, type KubeClient } from '@capstan/kube';
import { ClusterBlueprint } from '@capstan/sim';
import { eventually } from '@capstan/testing';


interface SecretObject extends KubernetesObject {
  type?: string;
  stringData?: Record<string, string>;
}

export interface FixtureMachineOptions {
  role: K3sRole;
  spec?: SimMachine['spec'];
  agentConfig?: K3sAgentConfigSpec;
  /** Bootstrap data to store instead of the rendered cloud-config. */
  data?: string;
  /** Leave the Machine without `spec.bootstrap.dataSecretName` (set it later with `provideBootstrapData`). */
  withoutData?: boolean;
  failureDomain?: string;
}

/**
 * A workload cluster as the core and the K3s providers would set it up, made by hand: Cluster, a provisioned
 * SimCluster, cluster certificates and token, and per machine a Machine, its bootstrap data secret rendered
 * with renderK3sCloudConfig, and a SimMachine controlled by the Machine.
 */
export class SimClusterFixture {
  private constructor(
    readonly client: KubeClient,
    readonly blueprint: ClusterBlueprint,
  ) {}

  get namespace(): string {
    return this.blueprint.ref.namespace;
  }

  get clusterName(): string {
    return this.blueprint.ref.clusterName;
  }

  get endpoint(): { host: string; port: number } {
    return this.blueprint.ref.endpoint;
  }

  get token(): string {
    return this.blueprint.token;
  }

  static async create(
    client: KubeClient,
    namespace: string,
    clusterName: string,
    options: { mode?: SimClusterMode } = {},
  ): Promise<SimClusterFixture> {
    const blueprint = await ClusterBlueprint.create(namespace, clusterName, { mode: options.mode });
    const fixture = new SimClusterFixture(client, blueprint);
    const { endpoint } = blueprint.ref;
    await client.resource<Cluster>(RESOURCES.Cluster).create({
      apiVersion: RESOURCES.Cluster.apiVersion,
      kind: 'Cluster',
      metadata: { name: clusterName, namespace },
      spec: { infrastructureRef: { apiGroup: INFRASTRUCTURE_GROUP, kind: 'SimCluster', name: clusterName } },
    });
    const simClusters = client.resource<SimCluster>(RESOURCES.SimCluster);
    await simClusters.create({
      apiVersion: RESOURCES.SimCluster.apiVersion,
      kind: 'SimCluster',
      metadata: { name: clusterName, namespace, labels: { [LABELS.clusterName]: clusterName } },
      spec: { controlPlaneEndpoint: endpoint, mode: options.mode ?? 'dedicated' },
    });
    // What the cluster-provider reports once it allocated the endpoint.
    await simClusters.patchStatus(
      { namespace, name: clusterName },
      { initialization: { provisioned: true } },
    );
    return fixture;
  }

  render(role: K3sRole, agentConfig?: K3sAgentConfigSpec): string {
    return this.blueprint.render(role, agentConfig);
  }

  async machine(name: string, options: FixtureMachineOptions): Promise<void> {
    const { namespace, clusterName } = this;
    const labels = {
      [LABELS.clusterName]: clusterName,
      ...(options.role !== 'agent' && { [LABELS.controlPlane]: '' }),
    };
    await this.client.resource<SecretObject>(SECRETS).create({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: `${name}-bootstrap`, namespace, labels: { [LABELS.clusterName]: clusterName } },
      type: CLUSTER_SECRET_TYPE,
      stringData: {
        value: options.data ?? this.render(options.role, options.agentConfig),
        format: 'cloud-config',
      },
    });
    const machine = await this.client.resource<Machine>(RESOURCES.Machine).create({
      apiVersion: RESOURCES.Machine.apiVersion,
      kind: 'Machine',
      metadata: { name, namespace, labels },
      spec: {
        clusterName,
        bootstrap: options.withoutData
          ? { configRef: { apiGroup: BOOTSTRAP_GROUP, kind: 'K3sConfig', name } }
          : { dataSecretName: `${name}-bootstrap` },
        infrastructureRef: { apiGroup: INFRASTRUCTURE_GROUP, kind: 'SimMachine', name },
        ...(options.failureDomain && { failureDomain: options.failureDomain }),
      },
    });
    await this.client.resource<SimMachine>(RESOURCES.SimMachine).create({
      apiVersion: RESOURCES.SimMachine.apiVersion,
      kind: 'SimMachine',
      metadata: {
        name,
        namespace,
        labels,
        ownerReferences: [
          {
            apiVersion: RESOURCES.Machine.apiVersion,
            kind: 'Machine',
            name,
            uid: machine.metadata!.uid!,
            controller: true,
            blockOwnerDeletion: true,
          },
        ],
      },
      spec: options.spec ?? {},
    });
  }

  /** Deletes every SimMachine of the namespace and waits until the provider let them go (before it stops). */
  async deleteMachines(timeoutMs = 60_000): Promise<void> {
    const simMachines = this.client.resource<SimMachine>(RESOURCES.SimMachine);
    const { items } = await simMachines.list({ namespace: this.namespace });
    await Promise.all(
      items.map((m) =>
        simMachines.delete({ namespace: this.namespace, name: m.metadata!.name! }).catch(() => undefined),
      ),
    );
    await eventually(async () => (await simMachines.list({ namespace: this.namespace })).items.length === 0, {
      timeoutMs,
      message: 'SimMachines deleted',
    });
  }

  /** What the core does once the bootstrap provider created the data secret. */
  async provideBootstrapData(name: string): Promise<void> {
    await this.client
      .resource<Machine>(RESOURCES.Machine)
      .mergePatch(
        { namespace: this.namespace, name },
        { spec: { bootstrap: { dataSecretName: `${name}-bootstrap` } } },
      );
  }

  simMachine(name: string): Promise<SimMachine> {
    return this.client.resource<SimMachine>(RESOURCES.SimMachine).get({ namespace: this.namespace, name });
  }

  /** Waits until the SimMachine's condition of `type` has `reason` (or, without reason, status True). */
  condition(name: string, type: string, reason?: string, timeoutMs = 60_000) {
    return eventually(
      async () => {
        const found = (await this.simMachine(name)).status?.conditions?.find((c) => c.type === type);
        return found && (reason ? found.reason === reason : found.status === 'True') ? found : undefined;
      },
      { timeoutMs, message: `${name} ${type}${reason ? `=${reason}` : ''}` },
    );
  }

  /** The admin kubeconfig of the workload cluster, as the control plane provider writes it. */
  async adminKubeConfig(): Promise<KubeConfig> {
    const kc = new KubeConfig();
    kc.loadFromString(await this.blueprint.adminKubeconfig());
    return kc;
  }

  async workloadCore(): Promise<CoreV1Api> {
    return (await this.adminKubeConfig()).makeApiClient(CoreV1Api);
  }

  /** Names of the workload cluster's Nodes whose Ready condition is True. */
  async readyNodes(): Promise<string[]> {
    const core = await this.workloadCore();
    const nodes = await core.listNode();
    return nodes.items
      .filter((n) => n.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'))
      .map((n) => n.metadata!.name!)
      .sort();
  }
}
