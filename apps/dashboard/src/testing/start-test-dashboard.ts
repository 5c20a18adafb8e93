import { uniqueEventTopology } from '@capstan/events';
import { startService, type RunningService } from '@capstan/provider-kit';
import { testServiceOptions } from '@capstan/provider-kit/testing';
import { eventually } from '@capstan/testing';
import { createDashboardService } from '../service.js';

/**
 * The dashboard service against the test API server, ready, watching every namespace: the fleet is the management
 * cluster's, and each user sees their part of it. `namespace` is the test's (its leases and events go there).
 */
export async function startTestDashboard(namespace: string, subjectPrefix: string): Promise<RunningService> {
  const service = await startService(
    createDashboardService(),
    testServiceOptions(
      'dashboard',
      { namespace, topology: uniqueEventTopology(subjectPrefix) },
      { namespace: undefined },
    ),
  );
  await eventually(async () => (await fetch(`${service.url}/readyz`)).status === 200, {
    message: 'the dashboard ready',
    timeoutMs: 15_000,
  });
  return service;
}
