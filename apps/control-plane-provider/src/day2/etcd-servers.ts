import type { KubernetesObject, V1Secret } from '@kubernetes/client-node';
import { RESOURCES, type Cluster, type K3sControlPlane, type Machine } from '@capstan/api';
import { isBeingDeleted, type Informer, type ResourceType } from '@capstan/kube';
import { planSecretName } from '@capstan/node-agent';
import { ownedMachines } from '../k3scontrolplane/k3scontrolplane.machines.js';
import { timestampMs } from '../planning/machine-facts.js';

/** What the etcd controllers read from the caches. */
export interface EtcdCaches {
  clusters: Pick<Informer<Cluster>, 'getByName' | 'list'>;
  controlPlanes: Pick<Informer<K3sControlPlane>, 'getByName'>;
  machines: Pick<Informer<Machine>, 'byIndex' | 'getByName'>;
  /** Secrets with the cluster-name label: the machines' plan Secrets among them. */
  secrets: Pick<Informer<V1Secret>, 'getByName'>;
}

/** The K3sControlPlane a Cluster names, from the cache. */
export function controlPlaneOf(caches: EtcdCaches, cluster: Cluster): K3sControlPlane | undefined {
  const ref = cluster.spec?.controlPlaneRef;
  if (ref?.apiGroup !== RESOURCES.K3sControlPlane.group || ref.kind !== RESOURCES.K3sControlPlane.kind)
    return undefined;
  return caches.controlPlanes.getByName(cluster.metadata.namespace!, ref.name);
}

/** The Cluster whose controlPlaneRef names `kcp`, from the cache. */
export function clusterOfControlPlane(caches: EtcdCaches, kcp: K3sControlPlane): Cluster | undefined {
  return caches.clusters.list(kcp.metadata.namespace).find((c) => {
    const ref = c.spec?.controlPlaneRef;
    return (
      ref?.apiGroup === RESOURCES.K3sControlPlane.group &&
      ref.kind === RESOURCES.K3sControlPlane.kind &&
      ref.name === kcp.metadata.name
    );
  });
}

/**
 * The control plane's server machines that can run an etcd command: not deleting, with a Node, oldest first (the
 * init server first, as Rancher's planner elects it).
 */
export function etcdServers(caches: EtcdCaches, kcp: K3sControlPlane): Machine[] {
  return ownedMachines(caches.machines, kcp)
    .filter((m) => !isBeingDeleted(m) && m.status?.nodeRef?.name)
    .sort(
      (a, b) =>
        timestampMs(a.metadata.creationTimestamp) - timestampMs(b.metadata.creationTimestamp) ||
        a.metadata.name!.localeCompare(b.metadata.name!),
    );
}

/** The plan Secret of a machine, from the cache. */
export function planSecretOf(caches: EtcdCaches, machine: Machine): V1Secret | undefined {
  return caches.secrets.getByName(machine.metadata.namespace!, planSecretName(machine.metadata.name!));
}

/** The caches from a controller's kit (the shared informers of the service). */
export function etcdCaches(
  kit: { informer<O extends KubernetesObject>(type: ResourceType): Informer<O> },
  secrets: Informer<V1Secret>,
): EtcdCaches {
  return {
    clusters: kit.informer<Cluster>(RESOURCES.Cluster),
    controlPlanes: kit.informer<K3sControlPlane>(RESOURCES.K3sControlPlane),
    machines: kit.informer<Machine>(RESOURCES.Machine),
    secrets,
  };
}
