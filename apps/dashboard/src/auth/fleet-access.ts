import { CLUSTER_API_GROUP, RESOURCES } from '@capstan/api';
import type { CallerReviews, ResourceAttributes, ReviewedUser } from '@capstan/observability';

/**
 * What a signed-in user may see of what the dashboard reads with its own credentials (the shared informers, the event
 * bus): what Kubernetes RBAC lets them, asked with SubjectAccessReviews (cached by CallerReviews, so a fleet page costs
 * one review per namespace per 10 s, not one per row). A user who may list Clusters everywhere is asked once.
 */
export class FleetAccess {
  constructor(private readonly callers: CallerReviews) {}

  /** 'all', or the namespaces among `namespaces` whose Clusters the user may list. */
  async visibleNamespaces(user: ReviewedUser, namespaces: readonly string[]): Promise<'all' | Set<string>> {
    if (await this.mayList(user)) return 'all';
    const answers = await Promise.all(
      namespaces.map(async (namespace) => [namespace, await this.mayList(user, namespace)] as const),
    );
    return new Set(answers.filter(([, allowed]) => allowed).map(([namespace]) => namespace));
  }

  /** Whether the user sees `namespace`'s Clusters: they may list them everywhere, or there. */
  async maySee(user: ReviewedUser, namespace: string): Promise<boolean> {
    return (await this.mayList(user)) || this.mayList(user, namespace);
  }

  /** Whether the user may list the Clusters of `namespace` (of every namespace without it). */
  mayList(user: ReviewedUser, namespace?: string): Promise<boolean> {
    return this.allowed(user, FleetAccess.listClusters(namespace));
  }

  /** Whether the user may list the Machines of `namespace` (the Machine informer serves every namespace). */
  mayListMachines(user: ReviewedUser, namespace: string): Promise<boolean> {
    return this.allowed(user, FleetAccess.listMachines(namespace));
  }

  /** Whether the user may get Cluster `namespace/name` (what the event bus, which has no RBAC, is answered by). */
  mayGetCluster(user: ReviewedUser, namespace: string, name: string): Promise<boolean> {
    return this.allowed(user, FleetAccess.getCluster(namespace, name));
  }

  allowed(user: ReviewedUser, attributes: ResourceAttributes): Promise<boolean> {
    return this.callers.allowed(user, { resourceAttributes: attributes });
  }

  static listClusters(namespace?: string): ResourceAttributes {
    return {
      group: CLUSTER_API_GROUP,
      resource: RESOURCES.Cluster.plural,
      verb: 'list',
      ...(namespace !== undefined ? { namespace } : {}),
    };
  }

  static listMachines(namespace: string): ResourceAttributes {
    return { group: CLUSTER_API_GROUP, resource: RESOURCES.Machine.plural, verb: 'list', namespace };
  }

  static getCluster(namespace: string, name: string): ResourceAttributes {
    return { group: CLUSTER_API_GROUP, resource: RESOURCES.Cluster.plural, verb: 'get', namespace, name };
  }
}
