/**
 * The audience a dashboard token must be issued for (`kubectl create token <account> --audience capstan-dashboard`): a
 * token the API server takes (a pod's mounted ServiceAccount token) is refused, so one that leaks from a workload
 * cannot sign in to the dashboard. Here, beside the admin API's, for the dashboard and the CLI that tells users how to
 * get one.
 */
export const DASHBOARD_AUDIENCE = 'capstan-dashboard';
