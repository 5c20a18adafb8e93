import { Module } from '@nestjs/common';
import { ACCESS_REVIEWS, CallerReviews, type AccessReviews } from '@capstan/observability';
import { ProviderKinds, SERVICE_CONTEXT, type ServiceContext } from '@capstan/provider-kit';
import { ClusterActivityController } from './api/cluster-activity.controller.js';
import { ClusterController } from './api/cluster.controller.js';
import { CreateClusterController } from './api/create-cluster.controller.js';
import { FleetController } from './api/fleet.controller.js';
import { PermissionsController } from './api/permissions.controller.js';
import { MachinesController } from './api/machines.controller.js';
import { WebController } from './api/web.controller.js';
import { DashboardAuthGuard } from './auth/dashboard-auth.guard.js';
import { DASHBOARD_AUDIENCE, DASHBOARD_CALLERS, type DashboardCallers } from './auth/dashboard-callers.js';
import { FleetAccess } from './auth/fleet-access.js';
import { FleetView } from './fleet/fleet-view.js';
import { MachineView } from './machines/machine-view.js';
import { EventHistory } from './timeline/event-history.js';

/**
 * The dashboard: the page, its API, one informer per kind shared by every user. Built when the service starts, before
 * its manager starts the informers.
 */
@Module({
  controllers: [
    WebController,
    FleetController,
    ClusterController,
    MachinesController,
    ClusterActivityController,
    CreateClusterController,
    PermissionsController,
  ],
  providers: [
    {
      provide: DASHBOARD_CALLERS,
      inject: [ACCESS_REVIEWS],
      useFactory: (reviews: AccessReviews): DashboardCallers => {
        const callers = new CallerReviews(reviews, DASHBOARD_AUDIENCE);
        return { reviews: callers, access: new FleetAccess(callers) };
      },
    },
    {
      provide: FleetView,
      inject: [SERVICE_CONTEXT],
      useFactory: (context: ServiceContext) => {
        const fleet = new FleetView(context.manager);
        context.readiness.register({
          name: 'fleet',
          check: () => ({
            ready: fleet.hasSynced(),
            detail: fleet.hasSynced() ? undefined : 'the fleet is being listed',
          }),
        });
        return fleet;
      },
    },
    {
      provide: MachineView,
      inject: [SERVICE_CONTEXT],
      useFactory: (context: ServiceContext) => {
        const machines = new MachineView(context.manager);
        context.readiness.register({
          name: 'machines',
          check: () => ({
            ready: machines.hasSynced(),
            detail: machines.hasSynced() ? undefined : 'the Machines are being listed',
          }),
        });
        return machines;
      },
    },
    {
      provide: EventHistory,
      inject: [SERVICE_CONTEXT],
      useFactory: (context: ServiceContext) => new EventHistory(context.bus, context.topology),
    },
    {
      // Reference kinds are resolved with the dashboard's own client: a CRD says where a kind is served, not what
      // any object holds, and a viewer's Role seldom grants CRDs. The objects themselves are read as the user.
      provide: ProviderKinds,
      inject: [SERVICE_CONTEXT],
      useFactory: (context: ServiceContext) => new ProviderKinds(context.client),
    },
    DashboardAuthGuard,
  ],
})
export class DashboardModule {}
