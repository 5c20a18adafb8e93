import {
  Body,
  Controller,
  Get,
  HttpCode,
  Inject,
  Param,
  Post,
  Query,
  Req,
  Res,
  UseGuards,
  BadRequestException,
} from '@nestjs/common';
import type { IncomingMessage as Request, ServerResponse as Response } from 'node:http';
import { RESOURCES, type Cluster } from '@capstan/api';
import { bearerToken, type ReviewedUser } from '@capstan/observability';
import { SERVICE_CONTEXT, type ServiceContext } from '@capstan/provider-kit';
import { DashboardAuthGuard, DashboardUser } from '../auth/dashboard-auth.guard.js';
import { DASHBOARD_CALLERS, type DashboardCallers } from '../auth/dashboard-callers.js';
import type { ClusterSummary } from '../fleet/cluster-summary.js';
import { FleetView } from '../fleet/fleet-view.js';
import { FleetStream } from './fleet-stream.js';
import { scaleMachineDeployment, type ScaleWritten } from './scale-writes.js';
import { asUser } from './user-clients.js';

/** The largest replica count the dashboard asks for (MachineDeployment replicas are int32; this guards typos). */
const MAX_REPLICAS = 1000;

/**
 * The dashboard's JSON API (under /dashboard/api, HTTPS only): reads from the shared caches filtered by the user's
 * RBAC, writes as the user. No route is served without DashboardAuthGuard.
 */
@Controller('dashboard/api')
@UseGuards(DashboardAuthGuard)
export class FleetController {
  constructor(
    @Inject(SERVICE_CONTEXT) private readonly context: ServiceContext,
    @Inject(DASHBOARD_CALLERS) private readonly callers: DashboardCallers,
    @Inject(FleetView) private readonly fleet: FleetView,
  ) {}

  @Get('whoami')
  whoami(@DashboardUser() user: ReviewedUser): { username: string; groups: string[] } {
    return { username: user.username, groups: user.groups ?? [] };
  }

  /** The Clusters the user may list, filtered by `namespace` and a text found in namespace/name. */
  @Get('clusters')
  async clusters(
    @DashboardUser() user: ReviewedUser,
    @Query('namespace') namespace?: string,
    @Query('q') text?: string,
  ): Promise<{ items: ClusterSummary[] }> {
    const visible = await this.callers.access.visibleNamespaces(user, this.fleet.namespaces());
    const items = this.fleet
      .list()
      .filter((c) => visible === 'all' || visible.has(c.namespace))
      .filter((c) => !namespace || c.namespace === namespace)
      .filter((c) => !text || `${c.namespace}/${c.name}`.includes(text));
    return { items };
  }

  /** Server-sent events: the user's fleet, then every change to it as it happens (fleet-stream.ts). */
  @Get('clusters/stream')
  async stream(
    @DashboardUser() user: ReviewedUser,
    @Req() request: Request,
    @Res() response: Response,
  ): Promise<void> {
    const token = bearerToken(request.headers['authorization']);
    await new FleetStream(this.fleet, this.callers, user, token).serve(request, response);
  }

  @Post('clusters/:namespace/:name/pause')
  @HttpCode(200)
  pause(
    @DashboardUser() user: ReviewedUser,
    @Param('namespace') namespace: string,
    @Param('name') name: string,
  ) {
    return this.setPaused(user, namespace, name, true);
  }

  @Post('clusters/:namespace/:name/resume')
  @HttpCode(200)
  resume(
    @DashboardUser() user: ReviewedUser,
    @Param('namespace') namespace: string,
    @Param('name') name: string,
  ) {
    return this.setPaused(user, namespace, name, false);
  }

  @Post('machinedeployments/:namespace/:name/scale')
  @HttpCode(200)
  async scale(
    @DashboardUser() user: ReviewedUser,
    @Param('namespace') namespace: string,
    @Param('name') name: string,
    @Body() body: unknown,
  ): Promise<{ namespace: string; name: string; replicas: number; scaled: ScaleWritten }> {
    const replicas = (body as { replicas?: unknown } | undefined)?.replicas;
    if (
      typeof replicas !== 'number' ||
      !Number.isInteger(replicas) ||
      replicas < 0 ||
      replicas > MAX_REPLICAS
    )
      throw new BadRequestException(`replicas must be an integer from 0 to ${MAX_REPLICAS}`);
    const scaled = await asUser(this.context.connection, user, (client) =>
      scaleMachineDeployment(client, namespace, name, replicas),
    );
    return { namespace, name, replicas: scaled.replicas, scaled };
  }

  private async setPaused(user: ReviewedUser, namespace: string, name: string, paused: boolean) {
    const updated = await asUser(this.context.connection, user, (client) =>
      client.resource<Cluster>(RESOURCES.Cluster).mergePatch({ namespace, name }, { spec: { paused } }),
    );
    return { namespace, name, paused: updated.spec?.paused === true };
  }
}
