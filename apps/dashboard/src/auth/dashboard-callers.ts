import type { CallerReviews } from '@capstan/observability';
import type { FleetAccess } from './fleet-access.js';

export { DASHBOARD_AUDIENCE } from '@capstan/observability';

/** Nest token of the dashboard's caller reviews. */
export const DASHBOARD_CALLERS = Symbol('capstan:dashboard-callers');

export interface DashboardCallers {
  reviews: CallerReviews;
  access: FleetAccess;
}
