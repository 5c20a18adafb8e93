import { type ServiceDefinition } from '@capstan/provider-kit';
import { DashboardModule } from './dashboard.module.js';

export const DASHBOARD = 'dashboard';

/**
 * The fleet dashboard (docs/dashboard.md): stateless, every replica serves; no controllers, no event consumer. The
 * page and its API are served on the HTTPS port only: the browser sends the user's token with every call.
 */
export function createDashboardService(): ServiceDefinition {
  return {
    name: DASHBOARD,
    modules: [DashboardModule],
    tlsOnlyPaths: ['/dashboard'],
    setup() {
      // The informers are the module's (FleetView); nothing runs under a lease.
    },
  };
}
