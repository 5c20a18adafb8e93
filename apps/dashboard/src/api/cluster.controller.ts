import { Controller, Get, Inject, NotFoundException, Param, Res, UseGuards } from '@nestjs/common';
import type { ServerResponse as Response } from 'node:http';
import type { KubernetesObject } from '@kubernetes/client-node';
import { clusterSecretName, ClusterSecretPurpose, SECRET_KEYS } from '@capstan/api';
import { buildTree, treeRows, type TreeRow } from '@capstan/describe';
import { SECRETS } from '@capstan/kube';
import type { ReviewedUser } from '@capstan/observability';
import { ProviderKinds, SERVICE_CONTEXT, type ServiceContext } from '@capstan/provider-kit';
import { DashboardAuthGuard, DashboardUser } from '../auth/dashboard-auth.guard.js';
import { readClusterObjects } from '../fleet/cluster-objects.js';
import { asUser } from './user-clients.js';

/**
 * One Cluster's page: its `capstan describe cluster` tree and its kubeconfig, both read as the user (impersonated), so
 * RBAC decides what they get; a refusal is the API server's status and message. No route without DashboardAuthGuard.
 */
@Controller('dashboard/api/clusters/:namespace/:name')
@UseGuards(DashboardAuthGuard)
export class ClusterController {
  /**
   * Reference kinds are resolved with the dashboard's own client: a CRD says where a kind is served, not what any
   * object holds, and a viewer's Role seldom grants CRDs. The objects themselves are read as the user.
   */
  private readonly kinds: ProviderKinds;

  constructor(@Inject(SERVICE_CONTEXT) private readonly context: ServiceContext) {
    this.kinds = new ProviderKinds(context.client);
  }

  /** The rows `capstan describe cluster` prints (clusterctl's), as data: no spec, no secret, no bootstrap data. */
  @Get('tree')
  async tree(
    @DashboardUser() user: ReviewedUser,
    @Param('namespace') namespace: string,
    @Param('name') name: string,
  ): Promise<{ rows: TreeRow[] }> {
    const objects = await asUser(this.context.connection, user, (client) =>
      readClusterObjects(client, this.kinds, namespace, name),
    );
    return { rows: treeRows(buildTree(objects)) };
  }

  /**
   * The workload cluster's admin kubeconfig (Secret `<name>-kubeconfig`, key `value`), for users who may get that
   * Secret. Sent as a file, never cached, never logged.
   */
  @Get('kubeconfig')
  async kubeconfig(
    @DashboardUser() user: ReviewedUser,
    @Param('namespace') namespace: string,
    @Param('name') name: string,
    @Res() response: Response,
  ): Promise<void> {
    const secretName = clusterSecretName(name, ClusterSecretPurpose.Kubeconfig);
    const secret = await asUser(this.context.connection, user, (client) =>
      client
        .resource<KubernetesObject & { data?: Record<string, string> }>(SECRETS)
        .get({ namespace, name: secretName }),
    );
    const value = secret.data?.[SECRET_KEYS.value];
    if (!value)
      throw new NotFoundException(
        `Secret ${namespace}/${secretName} holds no kubeconfig (key ${SECRET_KEYS.value})`,
      );
    // `name` is safe in the header: a Secret named `<name>-kubeconfig` exists, so it is a DNS subdomain.
    response
      .writeHead(200, {
        'content-type': 'application/yaml',
        'content-disposition': `attachment; filename="${name}.kubeconfig"`,
        'cache-control': 'no-store',
        'x-content-type-options': 'nosniff',
      })
      .end(Buffer.from(value, 'base64'));
  }
}
