import type { ExtensionConfig, ExtensionHandler } from '@capstan/api';
import { extensionCallUrl } from './extension-url.js';
import { postToExtension, type ExtensionPost } from './extension-http.js';
import { ExtensionCallError, ExtensionConfigError, ExtensionDiscoveryError } from './runtime-errors.js';
import {
  DEFAULT_HANDLER_TIMEOUT_SECONDS,
  DISCOVERY_PATH,
  isKnownHook,
  MAX_HANDLER_TIMEOUT_SECONDS,
  requestKind,
  RUNTIME_HOOKS_API_VERSION,
  type DiscoveredHandler,
  type FailurePolicy,
} from './runtime-hooks.js';

// Discovery (upstream internal/runtime/client Discover and defaultAndValidateDiscoveryResponse): the extension says
// which handlers it serves; they are defaulted, checked, and registered on the ExtensionConfig's status as
// `<handler>.<extensionconfig>`.

/** How long a discovery call may take (upstream defaultDiscoveryTimeout). */
export const DISCOVERY_TIMEOUT_MS = 10_000;
/** The most handlers one extension may register (the CRD's bound on status.handlers). */
const MAX_HANDLERS = 512;
/** How many problems an error lists before it says how many more there are. */
const LISTED_PROBLEMS = 5;

const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

/** A handler as discovery registers it: defaulted, its hook known. */
export interface ValidHandler {
  name: string;
  apiVersion: string;
  hook: string;
  timeoutSeconds: number;
  failurePolicy: FailurePolicy;
}

/**
 * The handlers of a discovery answer, defaulted (timeoutSeconds 10, failurePolicy Fail) and checked: a Success
 * status, unique DNS-1123 label names, timeouts of 0 to 30 seconds, a known failure policy, and hooks of this
 * catalogue's group and version. Throws ExtensionDiscoveryError listing what is wrong; a handler is named only when
 * its name is a valid label (anything else the server sent is not quoted).
 */
export function validateDiscoveryResponse(body: Record<string, unknown>): ValidHandler[] {
  if (body['status'] === 'Failure')
    throw new ExtensionDiscoveryError('the extension answered discovery with Failure');
  if (body['status'] !== 'Success')
    throw new ExtensionDiscoveryError('the discovery answer has no Success status');
  const listed = body['handlers'] ?? [];
  if (!Array.isArray(listed))
    throw new ExtensionDiscoveryError('the discovery answer has no list of handlers');
  if (listed.length > MAX_HANDLERS)
    throw new ExtensionDiscoveryError(`the extension reported more than ${MAX_HANDLERS} handlers`);
  const problems: string[] = [];
  const handlers: ValidHandler[] = [];
  const names = new Set<string>();
  listed.forEach((entry: unknown, index) => {
    const handler = (typeof entry === 'object' && entry !== null ? entry : {}) as Partial<
      Record<keyof DiscoveredHandler, unknown>
    >;
    const name = typeof handler.name === 'string' ? handler.name : '';
    const valid = name.length <= 63 && DNS1123_LABEL.test(name);
    const label = valid ? `handler ${name}` : `handler #${index + 1}`;
    const before = problems.length;
    if (!valid) problems.push(`${label}: name must be a DNS-1123 label`);
    else if (names.has(name)) problems.push(`${label}: name is not unique`);
    names.add(name);
    const timeoutSeconds = handler.timeoutSeconds ?? DEFAULT_HANDLER_TIMEOUT_SECONDS;
    if (
      typeof timeoutSeconds !== 'number' ||
      !Number.isInteger(timeoutSeconds) ||
      timeoutSeconds < 0 ||
      timeoutSeconds > MAX_HANDLER_TIMEOUT_SECONDS
    )
      problems.push(`${label}: timeoutSeconds must be between 0 and ${MAX_HANDLER_TIMEOUT_SECONDS}`);
    const failurePolicy = handler.failurePolicy ?? 'Fail';
    if (failurePolicy !== 'Fail' && failurePolicy !== 'Ignore')
      problems.push(`${label}: failurePolicy must be Ignore or Fail`);
    const requestHook = (handler.requestHook ?? {}) as { apiVersion?: unknown; hook?: unknown };
    const hook = typeof requestHook.hook === 'string' ? requestHook.hook : '';
    if (requestHook.apiVersion !== RUNTIME_HOOKS_API_VERSION || !isKnownHook(hook))
      problems.push(`${label}: requestHook is not a hook of ${RUNTIME_HOOKS_API_VERSION}`);
    if (problems.length === before) {
      handlers.push({
        name,
        apiVersion: RUNTIME_HOOKS_API_VERSION,
        hook,
        timeoutSeconds: timeoutSeconds as number,
        failurePolicy: failurePolicy as FailurePolicy,
      });
    }
  });
  if (problems.length > 0) {
    const shown = problems.slice(0, LISTED_PROBLEMS);
    if (problems.length > LISTED_PROBLEMS) shown.push(`and ${problems.length - LISTED_PROBLEMS} more`);
    throw new ExtensionDiscoveryError(`invalid discovery answer: ${shown.join('; ')}`);
  }
  return handlers;
}

/**
 * The handlers as `status.handlers` records them: `<handler>.<extensionconfig>`, and a timeout of 0 left out (the
 * default applies; the CRD, like upstream's, refuses 0).
 */
export function registeredHandlers(
  configName: string,
  handlers: readonly ValidHandler[],
): ExtensionHandler[] {
  return handlers.map((h) => ({
    name: `${h.name}.${configName}`,
    requestHook: { apiVersion: h.apiVersion, hook: h.hook },
    ...(h.timeoutSeconds > 0 ? { timeoutSeconds: h.timeoutSeconds } : {}),
    failurePolicy: h.failurePolicy,
  }));
}

/**
 * Asks the extension of `config` which handlers it serves. Throws ExtensionDiscoveryError naming the extension and
 * what failed (the call, its TLS, or the answer); the message quotes nothing the server sent.
 */
export async function discoverExtension(
  config: ExtensionConfig,
  options: { post?: ExtensionPost; signal?: AbortSignal } = {},
): Promise<ExtensionHandler[]> {
  const post = options.post ?? postToExtension;
  let body: Record<string, unknown>;
  let host = '';
  try {
    const url = extensionCallUrl(config.spec.clientConfig, DISCOVERY_PATH, DISCOVERY_TIMEOUT_MS / 1000);
    host = url.host;
    body = await post({
      url,
      caBundle: config.spec.clientConfig.caBundle,
      timeoutMs: DISCOVERY_TIMEOUT_MS,
      body: { apiVersion: RUNTIME_HOOKS_API_VERSION, kind: requestKind('Discovery') },
      signal: options.signal,
    });
  } catch (error) {
    if (error instanceof ExtensionConfigError)
      throw new ExtensionDiscoveryError(error.message, { cause: error });
    if (error instanceof ExtensionCallError)
      throw new ExtensionDiscoveryError(`discovery at ${host} failed: ${error.message}`, { cause: error });
    throw error;
  }
  return registeredHandlers(config.metadata.name!, validateDiscoveryResponse(body));
}
