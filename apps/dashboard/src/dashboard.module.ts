import { Module } from '@nestjs/common';
import { ACCESS_REVIEWS, CallerReviews, type AccessReviews } from '@capstan/observability';
import { SERVICE_CONTEXT, type ServiceContext } from '@capstan/provider-kit';
import { ClusterController } from './api/cluster.controller.js';
import { FleetController } from './api/fleet.controller.js';
import { WebController } from './api/web.controller.js';
import { DashboardAuthGuard } from './auth/dashboard-auth.guard.js';
import { DASHBOARD_AUDIENCE, DASHBOARD_CALLERS, type DashboardCallers } from './auth/dashboard-callers.js';
import { FleetAccess } from './auth/fleet-access.js';
import { FleetView } from './fleet/fleet-view.js';

/**
 * The dashboard: the page, its API, one informer per kind shared by every user. Built when the service starts, before
 * its manager starts the informers.
 */
@Module({
  controllers: [WebController, FleetController, ClusterController],
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
    DashboardAuthGuard,
  ],
})
export class DashboardModule {}
