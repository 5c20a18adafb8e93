import { Inject, Injectable } from '@nestjs/common';
import { HealthIndicatorService, type HealthIndicatorResult } from '@nestjs/terminus';
import { type EventBusConnection } from '../connection/event-bus-connection.js';
import { type EventTopology } from '../streams/event-topology.js';
import { streamInfo } from '../streams/provision-streams.js';
import { EVENT_BUS_CONNECTION, EVENT_TOPOLOGY } from './tokens.js';

export interface EventBusHealth {
  ready: boolean;
  detail: string;
  state: string;
  stream: string;
  messages?: number;
}

/** Connected to NATS and the event stream answers: what `/readyz` requires of an event-driven service. */
export async function checkEventBus(
  connection: EventBusConnection,
  topology: EventTopology,
  timeoutMs = 2000,
): Promise<EventBusHealth> {
  const base = { state: connection.state, stream: topology.stream };
  if (!connection.isConnected)
    return { ...base, ready: false, detail: `NATS connection is ${connection.state}` };
  try {
    const jsm = await connection.jsm();
    const info = await Promise.race([
      streamInfo(jsm, topology.stream),
      new Promise<never>((_, reject) =>
        setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs).unref(),
      ),
    ]);
    if (!info) return { ...base, ready: false, detail: `stream ${topology.stream} does not exist` };
    return { ...base, ready: true, detail: 'connected', messages: info.state.messages };
  } catch (error) {
    return {
      ...base,
      ready: false,
      detail: `stream ${topology.stream} unavailable: ${error instanceof Error ? error.message : String(error)}`,
    };
  }
}

/** A readiness check in the shape @capstan/observability's Readiness registers (`{ name, check() }`). */
export function eventBusReadinessCheck(
  connection: EventBusConnection,
  topology: EventTopology,
  name = 'nats',
) {
  return {
    name,
    async check(): Promise<{ ready: boolean; detail: string }> {
      const { ready, detail } = await checkEventBus(connection, topology);
      return { ready, detail };
    },
  };
}

/** Terminus indicator: `health.check([() => eventBusHealth.isHealthy('nats')])`. */
@Injectable()
export class EventBusHealthIndicator {
  constructor(
    @Inject(HealthIndicatorService) private readonly indicators: HealthIndicatorService,
    @Inject(EVENT_BUS_CONNECTION) private readonly connection: EventBusConnection,
    @Inject(EVENT_TOPOLOGY) private readonly topology: EventTopology,
  ) {}

  async isHealthy<const Key extends string>(key: Key): Promise<HealthIndicatorResult<Key>> {
    const indicator = this.indicators.check(key);
    const { ready, ...details } = await checkEventBus(this.connection, this.topology);
    return ready ? indicator.up(details) : indicator.down(details);
  }
}
