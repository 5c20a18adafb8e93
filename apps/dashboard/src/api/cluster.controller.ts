import {
  BadRequestException,
  Body,
  ConflictException,
  Controller,
  Get,
  HttpCode,
  Inject,
  NotFoundException,
  Param,
  Post,
  Res,
  UseGuards,
} from '@nestjs/common';
import type { ServerResponse as Response } from 'node:http';
import type { KubernetesObject } from '@kubernetes/client-node';
import { clusterSecretName, ClusterSecretPurpose, RESOURCES, SECRET_KEYS, type Cluster } from '@capstan/api';
import { buildTree, treeRows, type TreeRow } from '@capstan/describe';
import { SECRETS } from '@capstan/kube';
import type { ReviewedUser } from '@capstan/observability';
import { ProviderKinds, SERVICE_CONTEXT, type ServiceContext } from '@capstan/provider-kit';
import { DashboardAuthGuard, DashboardUser } from '../auth/dashboard-auth.guard.js';
import { readClusterObjects } from '../fleet/cluster-objects.js';
import { scaleControlPlane } from './scale-writes.js';
import { asUser } from './user-clients.js';

/** A bound that catches a typo; the control plane's own rules decide the rest. */
const MAX_CONTROL_PLANE_REPLICAS = 99;
/** `v` and a semantic version, build metadata allowed (K3s versions carry `+k3s1`). */
const KUBERNETES_VERSION =
  /^v(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$/;

/**
 * One Cluster's page: its `capstan describe cluster` tree and its kubeconfig, both read as the user (impersonated), so
 * RBAC decides what they get; a refusal is the API server's status and message. No route without DashboardAuthGuard.
 */
@Controller('dashboard/api/clusters/:namespace/:name')
@UseGuards(DashboardAuthGuard)
export class ClusterController {
  constructor(
    @Inject(SERVICE_CONTEXT) private readonly context: ServiceContext,
    /** Resolves reference kinds with the dashboard's own client (dashboard.module.ts says why). */
    @Inject(ProviderKinds) private readonly kinds: ProviderKinds,
  ) {}

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

  /**
   * Scales the control plane (`spec.replicas` of the object `spec.controlPlaneRef` names), as the user: the control
   * plane's own rules (K3s wants an odd count) are the API server's to refuse.
   */
  @Post('scale-control-plane')
  @HttpCode(200)
  async scaleControlPlane(
    @DashboardUser() user: ReviewedUser,
    @Param('namespace') namespace: string,
    @Param('name') name: string,
    @Body() body: unknown,
  ): Promise<{ kind: string; name: string; replicas: number }> {
    const replicas = (body as { replicas?: unknown } | undefined)?.replicas;
    if (
      typeof replicas !== 'number' ||
      !Number.isInteger(replicas) ||
      replicas < 1 ||
      replicas > MAX_CONTROL_PLANE_REPLICAS
    )
      throw new BadRequestException(`replicas must be an integer from 1 to ${MAX_CONTROL_PLANE_REPLICAS}`);
    return asUser(this.context.connection, user, (client) =>
      scaleControlPlane(client, this.kinds, namespace, name, replicas),
    );
  }

  /**
   * Upgrades a topology Cluster: `spec.topology.version`, as the user; the topology controller moves the control plane
   * first, then the workers (docs/topology.md), and the core's webhook refuses what upstream's refuses. A Cluster
   * without a topology is upgraded part by part (`capstan upgrade cluster`): not here yet, and said so.
   */
  @Post('upgrade')
  @HttpCode(200)
  async upgrade(
    @DashboardUser() user: ReviewedUser,
    @Param('namespace') namespace: string,
    @Param('name') name: string,
    @Body() body: unknown,
  ): Promise<{ namespace: string; name: string; version: string }> {
    const version = (body as { version?: unknown } | undefined)?.version;
    if (typeof version !== 'string' || !KUBERNETES_VERSION.test(version))
      throw new BadRequestException('version must be a Kubernetes version such as v1.35.4 or v1.35.4+k3s1');
    return asUser(this.context.connection, user, async (client) => {
      const clusters = client.resource<Cluster>(RESOURCES.Cluster);
      const cluster = await clusters.get({ namespace, name });
      if (!cluster.spec?.topology)
        throw new ConflictException(
          `Cluster ${namespace}/${name} has no topology: upgrade its control plane and MachineDeployments with capstan upgrade cluster`,
        );
      // The resourceVersion makes it a compare-and-swap: an upgrade decided on an older Cluster is refused 409.
      await clusters.mergePatch(
        { namespace, name },
        { metadata: { resourceVersion: cluster.metadata.resourceVersion }, spec: { topology: { version } } },
      );
      return { namespace, name, version };
    });
  }

  /**
   * Deletes the Cluster, as the user, once they typed its name (`{"confirm": "<name>"}`): a click alone, or a request
   * replayed against another Cluster, deletes nothing.
   */
  @Post('delete')
  @HttpCode(202)
  async delete(
    @DashboardUser() user: ReviewedUser,
    @Param('namespace') namespace: string,
    @Param('name') name: string,
    @Body() body: unknown,
  ): Promise<{ namespace: string; name: string; deleting: true }> {
    if ((body as { confirm?: unknown } | undefined)?.confirm !== name)
      throw new BadRequestException(`type the Cluster's name (${name}) to confirm its deletion`);
    await asUser(this.context.connection, user, (client) =>
      client.resource<Cluster>(RESOURCES.Cluster).delete({ namespace, name }),
    );
    return { namespace, name, deleting: true };
  }
}
