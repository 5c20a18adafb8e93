import { RESOURCES, type ExtensionConfig } from '@capstan/api';
import { defineController } from '@capstan/provider-kit';
import { discoverExtension } from './extension-discovery.js';
import type { ExtensionPost } from './extension-http.js';
import {
  DISCOVERY_RETRY_MS,
  EXTENSION_CONFIG_CONDITIONS,
  ExtensionConfigReconciler,
  REDISCOVERY_PERIOD_MS,
} from './extensionconfig.reconciler.js';

export const EXTENSION_CONFIG_CONTROLLER = 'extensionconfig';

export interface ExtensionConfigControllerOptions {
  now?: () => Date;
  /** How often every extension is discovered again (default 5 min). */
  rediscoveryPeriodMs?: number;
  /** How soon a failed discovery is tried again (default 15 s). */
  retryMs?: number;
  /** How discovery calls are sent; tests replace it. */
  post?: ExtensionPost;
}

/**
 * The ExtensionConfig controller: discovers each extension when its ExtensionConfig is created or its spec changes,
 * and again every period. The CA Secret an ExtensionConfig names is read at each discovery, not watched: caching
 * every Secret of the cluster to notice a rotation sooner would cost more than the period it saves.
 */
export function extensionConfigController(options: ExtensionConfigControllerOptions = {}) {
  return defineController<ExtensionConfig>({
    name: EXTENSION_CONFIG_CONTROLLER,
    for: RESOURCES.ExtensionConfig,
    conditions: { owned: EXTENSION_CONFIG_CONDITIONS },
    wire: (kit) => ({
      reconciler: new ExtensionConfigReconciler({
        client: kit.context.client,
        discover: (config, signal) => discoverExtension(config, { post: options.post, signal }),
        now: options.now ?? (() => new Date()),
        rediscoveryPeriodMs: options.rediscoveryPeriodMs ?? REDISCOVERY_PERIOD_MS,
        retryMs: options.retryMs ?? DISCOVERY_RETRY_MS,
      }),
    }),
  });
}
