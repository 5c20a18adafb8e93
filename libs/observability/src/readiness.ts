/** A named condition the service must meet before it takes traffic (caches synced, NATS connected, ...). */
export interface ReadinessCheck {
  name: string;
  check(): Promise<ReadinessResult> | ReadinessResult;
}

export interface ReadinessResult {
  ready: boolean;
  detail?: string;
}

/** Collects the readiness checks of a service; `/readyz` reports them all. Liveness never consults it. */
export class Readiness {
  private readonly checks = new Map<string, ReadinessCheck>();

  register(check: ReadinessCheck): void {
    this.checks.set(check.name, check);
  }

  async evaluate(): Promise<{ ready: boolean; checks: Record<string, ReadinessResult> }> {
    const results: Record<string, ReadinessResult> = {};
    for (const [name, check] of this.checks) {
      try {
        results[name] = await check.check();
      } catch (error) {
        results[name] = { ready: false, detail: error instanceof Error ? error.message : String(error) };
      }
    }
    return { ready: Object.values(results).every((r) => r.ready), checks: results };
  }
}
