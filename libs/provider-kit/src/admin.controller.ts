import { Controller, Get, Inject, NotFoundException, Param, Post, UseGuards } from '@nestjs/common';
import { RESOURCES } from '@capstan/api';
import { isNotFound } from '@capstan/kube';
import {
  CurrentAdminCaller,
  KubernetesAdminGuard,
  type AdminCaller,
  type Readiness,
} from '@capstan/observability';
import { type ShardSnapshot } from '@capstan/kube';
import { type ControllerStatus } from './controller-registry.js';
import { clusterShardKey } from './sharding/cluster-shard-key.js';
import { adminOpenApi } from './openapi.js';
import { type ServiceContext } from './service-context.js';
import { SERVICE_CONTEXT } from './tokens.js';

export interface ShardAssignment {
  /** `<namespace>/<cluster>` */
  cluster: string;
  /** The replica that owns it under this replica's view. */
  owner: string;
  /** Whether this replica acts on it now (it owns it and the hand-over is complete). */
  actingHere: boolean;
}

@Controller()
export class OpenApiController {
  constructor(@Inject(SERVICE_CONTEXT) private readonly context: ServiceContext) {}

  @Get('openapi.json')
  document(): Record<string, unknown> {
    return adminOpenApi(this.context.name);
  }
}

/** Operating a running service: what its controllers do, a manual resync, pausing a cluster. */
@Controller('admin')
@UseGuards(KubernetesAdminGuard)
export class AdminController {
  constructor(@Inject(SERVICE_CONTEXT) private readonly context: ServiceContext) {}

  @Get('controllers')
  controllers(): { service: string; leader: boolean; synced: boolean; controllers: ControllerStatus[] } {
    return {
      service: this.context.name,
      leader: this.context.manager.isLeader(),
      synced: this.context.manager.hasSynced(),
      controllers: this.context.controllers.status(),
    };
  }

  /** Each readiness check with its detail: what /readyz, which anyone may ask, does not say. */
  @Get('readiness')
  readiness(): ReturnType<Readiness['evaluate']> {
    return this.context.readiness.evaluate();
  }

  /** Sharded replicas: the membership this replica sees and which replica each cluster it knows of lands on. */
  @Get('shards')
  shards(): { service: string; sharded: false } | ({ service: string; sharded: true; assignments: ShardAssignment[] } & ShardSnapshot) {
    const shards = this.context.manager.shards;
    if (!shards) return { service: this.context.name, sharded: false };
    const clusters = new Set<string>();
    for (const { object, resource } of this.context.controllers.primaryObjects()) clusters.add(clusterShardKey(object, resource));
    const assignments = [...clusters].sort().map((cluster) => ({
      cluster,
      owner: shards.ownerOf(cluster) ?? '',
      actingHere: shards.admits(cluster),
    }));
    return { service: this.context.name, sharded: true, ...shards.snapshot(), assignments };
  }

  @Post('resync')
  resync(): { enqueued: number } {
    return { enqueued: this.context.controllers.resyncAll() };
  }

  @Post('clusters/:namespace/:name/pause')
  pause(
    @Param('namespace') namespace: string,
    @Param('name') name: string,
    @CurrentAdminCaller() caller: AdminCaller,
  ): Promise<{ paused: boolean }> {
    return this.setPaused(caller, namespace, name, true);
  }

  @Post('clusters/:namespace/:name/resume')
  resume(
    @Param('namespace') namespace: string,
    @Param('name') name: string,
    @CurrentAdminCaller() caller: AdminCaller,
  ): Promise<{ paused: boolean }> {
    return this.setPaused(caller, namespace, name, false);
  }

  /**
   * The patch goes with the service's rights, which reach every Cluster: the caller must be allowed to patch this one
   * itself (RBAC on the route says nothing about namespaces), asked before the Cluster is read, so a 404 tells only
   * those allowed whether it exists.
   */
  private async setPaused(
    caller: AdminCaller,
    namespace: string,
    name: string,
    paused: boolean,
  ): Promise<{ paused: boolean }> {
    const { group, plural } = RESOURCES.Cluster;
    await caller.authorize({ group, resource: plural, verb: 'patch', namespace, name });
    try {
      await this.context.client.resource(RESOURCES.Cluster).mergePatch({ namespace, name }, { spec: { paused } });
    } catch (error) {
      if (isNotFound(error)) throw new NotFoundException(`Cluster ${namespace}/${name} not found`);
      throw error;
    }
    return { paused };
  }
}
