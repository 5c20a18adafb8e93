import {
  ConditionStatus,
  withConditions,
  type ConditionInput,
  type ExtensionConfig,
  type ExtensionHandler,
} from '@capstan/api';
import type { KubeClient, ReconcileResult } from '@capstan/kube';
import type { ReconcilerParts, ReconcileScope } from '@capstan/provider-kit';
import { CaInjectionError, injectedCaBundle } from './ca-injection.js';
import { ExtensionDiscoveryError } from './runtime-errors.js';

// Upstream's ExtensionConfig controller (core/reconcilers/extensionconfig): inject the CA bundle a Secret holds, ask
// the extension which handlers it serves, and record them in status.handlers with the `Discovered` condition. The
// Runtime SDK client reads the registry from these statuses. A failed discovery keeps the handlers found before, as
// upstream's registry keeps them, so a call to an extension that went away fails rather than being skipped.

export const DISCOVERED = 'Discovered';
export const EXTENSION_CONFIG_CONDITIONS = [DISCOVERED] as const;

export const DiscoveredReason = {
  Discovered: 'Discovered',
  NotDiscovered: 'NotDiscovered',
} as const;

/** How often an extension is asked again what it serves (it may have been upgraded, or its CA Secret rotated). */
export const REDISCOVERY_PERIOD_MS = 5 * 60_000;
/** How soon a failed discovery or CA injection is tried again. */
export const DISCOVERY_RETRY_MS = 15_000;

export interface ExtensionConfigDeps {
  client: KubeClient;
  /** Asks the extension which handlers it serves (extension-discovery's discoverExtension). */
  discover: (config: ExtensionConfig, signal: AbortSignal) => Promise<ExtensionHandler[]>;
  now: () => Date;
  rediscoveryPeriodMs: number;
  retryMs: number;
}

export class ExtensionConfigReconciler implements ReconcilerParts<ExtensionConfig> {
  constructor(private readonly deps: ExtensionConfigDeps) {}

  now = (): Date => this.deps.now();

  async reconcileNormal(scope: ReconcileScope<ExtensionConfig>): Promise<ReconcileResult> {
    let failure: string | undefined;
    try {
      const injected = await injectedCaBundle(this.deps.client, scope.obj);
      if (injected !== undefined && injected !== scope.obj.spec.clientConfig.caBundle) {
        scope.obj.spec.clientConfig.caBundle = injected;
        // Written before discovery, as upstream does: the condition below then records the generation it was
        // computed from, and a discovery that fails still leaves the new CA in place.
        await scope.patchNow();
        scope.rc.log.info('caBundle injected from its Secret');
      }
      const handlers = await this.deps.discover(scope.obj, scope.rc.signal);
      scope.obj.status = { ...scope.obj.status, handlers };
      scope.rc.log.debug({ handlers: handlers.length }, 'extension discovered');
    } catch (error) {
      if (!(error instanceof ExtensionDiscoveryError || error instanceof CaInjectionError)) throw error;
      failure = error.message;
      scope.rc.log.info({ err: { message: failure } }, 'extension not discovered');
    }
    const condition: ConditionInput = failure
      ? {
          type: DISCOVERED,
          status: ConditionStatus.False,
          reason: DiscoveredReason.NotDiscovered,
          message: failure,
        }
      : { type: DISCOVERED, status: ConditionStatus.True, reason: DiscoveredReason.Discovered };
    scope.obj.status = {
      ...scope.obj.status,
      conditions: withConditions(
        scope.obj.status?.conditions,
        [condition],
        scope.obj.metadata.generation,
        this.deps.now(),
      ),
    };
    return { requeueAfter: failure ? this.deps.retryMs : this.deps.rediscoveryPeriodMs };
  }
}
