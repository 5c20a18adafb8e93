import { Controller, Get, Inject, NotFoundException, Param, UseGuards } from '@nestjs/common';
import {
  CLUSTER_API_GROUP,
  clusterSecretName,
  ClusterSecretPurpose,
  RESOURCES,
  type Cluster,
} from '@capstan/api';
import type { Informer } from '@capstan/kube';
import type { ResourceAttributes, ReviewedUser } from '@capstan/observability';
import { ProviderKinds, SERVICE_CONTEXT, type ServiceContext } from '@capstan/provider-kit';
import { DashboardAuthGuard, DashboardUser } from '../auth/dashboard-auth.guard.js';
import { DASHBOARD_CALLERS, type DashboardCallers } from '../auth/dashboard-callers.js';
import { FleetView } from '../fleet/fleet-view.js';

/** Whether the user may take an action, and if not, the right they lack (shown on the disabled button). */
export interface ActionPermission {
  allowed: boolean;
  reason?: string;
}

export type ClusterAction =
  'pause' | 'scaleWorkers' | 'scaleControlPlane' | 'upgrade' | 'delete' | 'kubeconfig';

/** The write each action makes, as the API server will judge it. */
function actionAttributes(
  namespace: string,
  name: string,
  controlPlane: { group: string; resource: string; name: string } | undefined,
  topology: boolean,
): Record<ClusterAction, ResourceAttributes | string> {
  const cluster = (verb: string): ResourceAttributes => ({
    group: CLUSTER_API_GROUP,
    resource: RESOURCES.Cluster.plural,
    verb,
    namespace,
    name,
  });
  return {
    pause: cluster('patch'),
    // A topology Cluster's replicas and version are fields of the Cluster (the topology controller owns the rest).
    scaleWorkers: topology
      ? cluster('patch')
      : { group: CLUSTER_API_GROUP, resource: RESOURCES.MachineDeployment.plural, verb: 'patch', namespace },
    scaleControlPlane: topology
      ? cluster('patch')
      : controlPlane
        ? {
            group: controlPlane.group,
            resource: controlPlane.resource,
            verb: 'patch',
            namespace,
            name: controlPlane.name,
          }
        : 'the Cluster names no control plane (spec.controlPlaneRef)',
    upgrade: topology
      ? cluster('patch')
      : 'a Cluster without a topology is upgraded part by part: capstan upgrade cluster',
    delete: cluster('delete'),
    kubeconfig: {
      group: '',
      resource: 'secrets',
      verb: 'get',
      namespace,
      name: clusterSecretName(name, ClusterSecretPurpose.Kubeconfig),
    },
  };
}

function describeRight({ verb, group, resource, namespace, name }: ResourceAttributes): string {
  const what = group ? `${resource}.${group}` : resource;
  return `you may not ${verb} ${what}${name ? ` ${name}` : ''} in namespace ${namespace}`;
}

/**
 * What the signed-in user may do to one Cluster, asked of the API server with SubjectAccessReviews (cached with the
 * rest of the dashboard's reviews), so the page can disable a button and say why before the click. The action itself
 * is still the user's own write: the API server decides again.
 */
@Controller('dashboard/api/clusters/:namespace/:name')
@UseGuards(DashboardAuthGuard)
export class PermissionsController {
  /** The fleet's own Cluster informer (the manager keeps one per kind): where the control plane reference is read. */
  private readonly clusters: Informer<Cluster>;

  constructor(
    @Inject(SERVICE_CONTEXT) context: ServiceContext,
    @Inject(DASHBOARD_CALLERS) private readonly callers: DashboardCallers,
    @Inject(FleetView) private readonly fleet: FleetView,
    @Inject(ProviderKinds) private readonly kinds: ProviderKinds,
  ) {
    this.clusters = context.manager.informer<Cluster>(RESOURCES.Cluster);
  }

  @Get('permissions')
  async permissions(
    @DashboardUser() user: ReviewedUser,
    @Param('namespace') namespace: string,
    @Param('name') name: string,
  ): Promise<{ actions: Record<ClusterAction, ActionPermission> }> {
    // Only a Cluster the user may see exists for them: the same answer for a hidden one as for a missing one.
    const summary = (await this.callers.access.maySee(user, namespace))
      ? this.fleet.get(namespace, name)
      : undefined;
    if (!summary) throw new NotFoundException(`Cluster ${namespace}/${name} not found`);
    const ref = this.clusters.getByName(namespace, name)?.spec?.controlPlaneRef;
    const controlPlane = ref?.name
      ? {
          group: ref.apiGroup,
          resource: (await this.kinds.resourceOf(ref.apiGroup, ref.kind)).plural,
          name: ref.name,
        }
      : undefined;
    const attributes = actionAttributes(namespace, name, controlPlane, summary.clusterClass !== undefined);
    const entries = await Promise.all(
      Object.entries(attributes).map(async ([action, asked]): Promise<[string, ActionPermission]> => {
        if (typeof asked === 'string') return [action, { allowed: false, reason: asked }];
        const allowed = await this.callers.reviews.allowed(user, { resourceAttributes: asked });
        return [action, allowed ? { allowed } : { allowed, reason: describeRight(asked) }];
      }),
    );
    return { actions: Object.fromEntries(entries) as Record<ClusterAction, ActionPermission> };
  }
}
