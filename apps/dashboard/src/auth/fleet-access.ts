import { CLUSTER_API_GROUP, RESOURCES } from '@capstan/api';
import type { CallerReviews, ReviewedUser } from '@capstan/observability';

/**
 * Which Clusters a signed-in user sees: those Kubernetes RBAC lets them list, asked with SubjectAccessReviews
 * (cached by CallerReviews, so a fleet page costs one review per namespace per 10 s, not one per row). A user who may
 * list Clusters everywhere is asked once.
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
    return this.callers.allowed(user, {
      resourceAttributes: {
        group: CLUSTER_API_GROUP,
        resource: RESOURCES.Cluster.plural,
        verb: 'list',
        ...(namespace !== undefined ? { namespace } : {}),
      },
    });
  }
}
