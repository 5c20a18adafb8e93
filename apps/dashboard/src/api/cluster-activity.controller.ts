import { Controller, ForbiddenException, Get, Inject, Param, Req, Res, UseGuards } from '@nestjs/common';
import type { IncomingMessage as Request, ServerResponse as Response } from 'node:http';
import { bearerToken, type ReviewedUser } from '@capstan/observability';
import { ProviderKinds, SERVICE_CONTEXT, type ServiceContext } from '@capstan/provider-kit';
import { readClusterKubeEvents, type ClusterEventView } from '../activity/cluster-kube-events.js';
import { DashboardAuthGuard, DashboardUser } from '../auth/dashboard-auth.guard.js';
import { DASHBOARD_CALLERS, type DashboardCallers } from '../auth/dashboard-callers.js';
import { FleetAccess } from '../auth/fleet-access.js';
import { requireAccess } from '../auth/require-access.js';
import { FleetView } from '../fleet/fleet-view.js';
import { MachineView } from '../machines/machine-view.js';
import { EventHistory, type ReplayedTimeline } from '../timeline/event-history.js';
import { ClusterStream } from './cluster-stream.js';
import { asUser } from './user-clients.js';

/**
 * Events published before the Cluster's creationTimestamp (second precision, the API server's clock) still belong to
 * it when the publisher's clock runs a little ahead.
 */
const CLOCK_SKEW_MS = 5_000;

/** A Cluster's timeline as the page gets it: the steps, or none and why. */
export type TimelineAnswer = ReplayedTimeline & { unavailable?: string };

/**
 * What happens to one Cluster: its Kubernetes Events (read as the user), its hand-off timeline from the event bus and
 * the live stream of its page (both answered only to a user RBAC lets get the Cluster: the bus has no RBAC). No route
 * without DashboardAuthGuard.
 */
@Controller('dashboard/api/clusters/:namespace/:name')
@UseGuards(DashboardAuthGuard)
export class ClusterActivityController {
  constructor(
    @Inject(SERVICE_CONTEXT) private readonly context: ServiceContext,
    @Inject(DASHBOARD_CALLERS) private readonly callers: DashboardCallers,
    @Inject(FleetView) private readonly fleet: FleetView,
    @Inject(MachineView) private readonly machines: MachineView,
    @Inject(EventHistory) private readonly history: EventHistory,
    @Inject(ProviderKinds) private readonly kinds: ProviderKinds,
  ) {}

  /** The Kubernetes Events of the Cluster and its objects, newest first (at most 200). */
  @Get('events')
  async events(
    @DashboardUser() user: ReviewedUser,
    @Param('namespace') namespace: string,
    @Param('name') name: string,
  ): Promise<{ events: ClusterEventView[] }> {
    const events = await asUser(this.context.connection, user, (client) =>
      readClusterKubeEvents(client, this.kinds, namespace, name),
    );
    return { events };
  }

  /** The Cluster's hand-off steps from the event stream since it was created, oldest first (bounded). */
  @Get('timeline')
  async timeline(
    @DashboardUser() user: ReviewedUser,
    @Param('namespace') namespace: string,
    @Param('name') name: string,
  ): Promise<TimelineAnswer> {
    await requireAccess(this.callers.access, user, FleetAccess.getCluster(namespace, name));
    const unavailable = this.history.unavailable();
    if (unavailable) return { steps: [], unavailable };
    const created = this.fleet.createdAt(namespace, name);
    const since = created ? new Date(Date.parse(created) - CLOCK_SKEW_MS) : undefined;
    try {
      return await this.history.replay(namespace, name, since ? { since } : {});
    } catch (error) {
      return {
        steps: [],
        unavailable: `the event bus did not answer: ${error instanceof Error ? error.message : String(error)}`,
      };
    }
  }

  /** Server-sent events: the Cluster, its Machines and new timeline steps as they change (cluster-stream.ts). */
  @Get('stream')
  async stream(
    @DashboardUser() user: ReviewedUser,
    @Param('namespace') namespace: string,
    @Param('name') name: string,
    @Req() request: Request,
    @Res() response: Response,
  ): Promise<void> {
    const token = bearerToken(request.headers['authorization']);
    const stream = new ClusterStream(
      { fleet: this.fleet, machines: this.machines, history: this.history, callers: this.callers },
      user,
      token,
      namespace,
      name,
    );
    const refusal = await stream.refusal();
    if (refusal) throw new ForbiddenException(refusal);
    await stream.serve(request, response);
  }
}
