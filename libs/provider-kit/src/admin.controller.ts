import { Controller, Get, Inject, NotFoundException, Param, Post, UseGuards } from '@nestjs/common';
import { RESOURCES } from '@capstan/api';
import { isNotFound } from '@capstan/kube';
import { KubernetesAdminGuard } from '@capstan/observability';
import { type ControllerStatus } from './controller-registry.js';
import { adminOpenApi } from './openapi.js';
import { type ServiceContext } from './service-context.js';
import { SERVICE_CONTEXT } from './tokens.js';

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

  @Post('resync')
  resync(): { enqueued: number } {
    return { enqueued: this.context.controllers.resyncAll() };
  }

  @Post('clusters/:namespace/:name/pause')
  pause(@Param('namespace') namespace: string, @Param('name') name: string): Promise<{ paused: boolean }> {
    return this.setPaused(namespace, name, true);
  }

  @Post('clusters/:namespace/:name/resume')
  resume(@Param('namespace') namespace: string, @Param('name') name: string): Promise<{ paused: boolean }> {
    return this.setPaused(namespace, name, false);
  }

  private async setPaused(namespace: string, name: string, paused: boolean): Promise<{ paused: boolean }> {
    try {
      await this.context.client.resource(RESOURCES.Cluster).mergePatch({ namespace, name }, { spec: { paused } });
    } catch (error) {
      if (isNotFound(error)) throw new NotFoundException(`Cluster ${namespace}/${name} not found`);
      throw error;
    }
    return { paused };
  }
}
