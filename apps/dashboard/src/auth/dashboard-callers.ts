import type { CallerReviews } from '@capstan/observability';
import type { FleetAccess } from './fleet-access.js';

/**
 * The audience a dashboard token must be issued for: a token the API server takes (a pod's mounted ServiceAccount
 * token) is refused, so one that leaks from a workload cannot sign in here.
 */
export const DASHBOARD_AUDIENCE = 'capstan-dashboard';

/** Nest token of the dashboard's caller reviews. */
export const DASHBOARD_CALLERS = Symbol('capstan:dashboard-callers');

export interface DashboardCallers {
  reviews: CallerReviews;
  access: FleetAccess;
}
