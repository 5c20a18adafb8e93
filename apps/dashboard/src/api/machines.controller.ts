import { Controller, Get, Inject, Param, UseGuards } from '@nestjs/common';
import type { ReviewedUser } from '@capstan/observability';
import { ProviderKinds, SERVICE_CONTEXT, type ServiceContext } from '@capstan/provider-kit';
import { DashboardAuthGuard, DashboardUser } from '../auth/dashboard-auth.guard.js';
import { DASHBOARD_CALLERS, type DashboardCallers } from '../auth/dashboard-callers.js';
import { FleetAccess } from '../auth/fleet-access.js';
import { requireAccess } from '../auth/require-access.js';
import { readMachineDetail, type MachineDetail } from '../machines/machine-detail.js';
import type { MachineRow } from '../machines/machine-row.js';
import { MachineView } from '../machines/machine-view.js';
import { asUser } from './user-clients.js';

/**
 * A Cluster's Machines and one Machine's page. The list comes from the shared Machine informer, answered only to a
 * user RBAC lets list Machines in the namespace (a cached review); a Machine's page is read as the user
 * (impersonated), so the API server decides each part. No route without DashboardAuthGuard.
 */
@Controller('dashboard/api')
@UseGuards(DashboardAuthGuard)
export class MachinesController {
  constructor(
    @Inject(SERVICE_CONTEXT) private readonly context: ServiceContext,
    @Inject(DASHBOARD_CALLERS) private readonly callers: DashboardCallers,
    @Inject(MachineView) private readonly machines: MachineView,
    @Inject(ProviderKinds) private readonly kinds: ProviderKinds,
  ) {}

  /** Every Machine of the Cluster (`spec.clusterName`), control plane first. */
  @Get('clusters/:namespace/:name/machines')
  async clusterMachines(
    @DashboardUser() user: ReviewedUser,
    @Param('namespace') namespace: string,
    @Param('name') name: string,
  ): Promise<{ machines: MachineRow[] }> {
    await requireAccess(this.callers.access, user, FleetAccess.listMachines(namespace));
    return { machines: this.machines.machinesOf(namespace, name) };
  }

  /**
   * The Machine with its conditions, its infrastructure machine, its Node (from the workload cluster, through the
   * kubeconfig Secret the user may get) and its plan's state (from the plan Secret the user may get, never the plan).
   */
  @Get('machines/:namespace/:name')
  machine(
    @DashboardUser() user: ReviewedUser,
    @Param('namespace') namespace: string,
    @Param('name') name: string,
  ): Promise<MachineDetail> {
    return asUser(this.context.connection, user, (client) =>
      readMachineDetail(client, this.kinds, namespace, name),
    );
  }
}
