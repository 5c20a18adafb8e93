import { Controller, Get, HttpCode, Inject, Module, Res, type DynamicModule } from '@nestjs/common';
import { type Registry } from 'prom-client';
import { Readiness } from './readiness.js';

export const METRICS_REGISTRY = Symbol('METRICS_REGISTRY');

interface ResponseLike {
  status(code: number): ResponseLike;
  type(contentType: string): ResponseLike;
  send(body: unknown): void;
}

/** `/healthz` (liveness: the process answers; never depends on leadership or dependencies) and `/readyz`. */
@Controller()
export class HealthController {
  constructor(@Inject(Readiness) private readonly readiness: Readiness) {}

  @Get('healthz')
  @HttpCode(200)
  healthz(): { status: 'ok' } {
    return { status: 'ok' };
  }

  /**
   * Ready or not, and nothing more: the endpoint is unauthenticated (probes), and a check's detail can carry an
   * exception's text. Which check fails is in the service's log and its admin API.
   */
  @Get('readyz')
  async readyz(@Res() response: ResponseLike): Promise<void> {
    const result = await this.readiness.evaluate();
    response.status(result.ready ? 200 : 503).send({ status: result.ready ? 'ok' : 'not ready' });
  }
}

@Controller()
export class MetricsController {
  constructor(@Inject(METRICS_REGISTRY) private readonly registry: Registry) {}

  @Get('metrics')
  async metrics(@Res() response: ResponseLike): Promise<void> {
    response.status(200).type(this.registry.contentType).send(await this.registry.metrics());
  }
}

export interface ServiceEndpointsOptions {
  registry: Registry;
  readiness: Readiness;
}

/** The endpoints every Capstan service serves (ARCHITECTURE §10); admin routes are added per service. */
@Module({})
export class ServiceEndpointsModule {
  static forRoot(options: ServiceEndpointsOptions): DynamicModule {
    return {
      module: ServiceEndpointsModule,
      controllers: [HealthController, MetricsController],
      providers: [
        { provide: Readiness, useValue: options.readiness },
        { provide: METRICS_REGISTRY, useValue: options.registry },
      ],
      exports: [Readiness, METRICS_REGISTRY],
    };
  }
}
