import { HttpException } from '@nestjs/common';
import { KubeApiError, KubeClient, type ClusterConnection } from '@capstan/kube';
import type { ReviewedUser } from '@capstan/observability';

/** The field manager of what users change through the dashboard (the audit log names the user as well). */
export const DASHBOARD_FIELD_MANAGER = 'capstan-dashboard';

/**
 * Runs `act` with a client that acts as `user` (Kubernetes impersonation of their name, uid and groups): the API
 * server decides with RBAC whether the user may, and its answer is the dashboard's. A refusal keeps the API server's
 * status and message (a 403 names the verb and resource the user lacks); the client's connections are the process's
 * shared pool. User extras are not passed: RBAC does not read them, and impersonating them would need a grant per
 * extra key.
 */
export async function asUser<T>(
  connection: ClusterConnection,
  user: ReviewedUser,
  act: (client: KubeClient) => Promise<T>,
): Promise<T> {
  const { username, uid, groups } = user;
  const acting = { username, ...(uid ? { uid } : {}), ...(groups ? { groups } : {}) };
  const client = new KubeClient(connection.impersonating(acting), { fieldManager: DASHBOARD_FIELD_MANAGER });
  try {
    return await act(client);
  } catch (error) {
    if (error instanceof KubeApiError)
      throw new HttpException(
        { statusCode: error.code, reason: error.reason, message: error.status.message ?? error.message },
        error.code,
      );
    throw error;
  } finally {
    await client.close();
  }
}
