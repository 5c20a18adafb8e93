import type { V1Namespace } from '@kubernetes/client-node';
import type { ClientConfig, ExtensionConfig, LabelSelector } from '@capstan/api';
import type { Logger } from 'pino';
import { describeFailure, type Informer } from '@capstan/kube';
import { selectorMatches } from '../reconcilers/shared/label-selector.js';
import { extensionCallUrl } from './extension-url.js';
import { postToExtension, type ExtensionPost } from './extension-http.js';
import {
  aggregateResponses,
  answerProblem,
  failureIgnored,
  ignoredFailureAnswer,
  type HookResult,
} from './hook-outcomes.js';
import { ExtensionCallError, ExtensionConfigError, RuntimeHookError } from './runtime-errors.js';
import {
  DEFAULT_HANDLER_TIMEOUT_SECONDS,
  hookPath,
  isBlockingHook,
  requestKind,
  RUNTIME_HOOKS_API_VERSION,
  RUNTIME_HOOKS_GROUP,
  type FailurePolicy,
  type HookName,
  type HookRequestBody,
  type HookResponses,
} from './runtime-hooks.js';

// The Runtime SDK client (upstream internal/runtime/client and its registry): the handlers registered for a hook
// are those the ExtensionConfigs' status lists (read from their informer, so every replica sees the same registry
// without warming one up), filtered by each ExtensionConfig's namespaceSelector against the Namespace of the object
// the hook is called for.

export type { HookResult } from './hook-outcomes.js';

/** A handler as the client calls it: its registration and the ExtensionConfig it came from. */
export interface HandlerRegistration {
  /** The registered name, `<handler>.<extensionconfig>`. */
  name: string;
  /** The handler's own name, the last segment of its URL path. */
  handlerName: string;
  extensionConfigName: string;
  hook: string;
  apiVersion: string;
  timeoutSeconds: number;
  failurePolicy: FailurePolicy;
  clientConfig: ClientConfig;
  namespaceSelector: LabelSelector;
  settings: Record<string, string>;
}

/**
 * The object a hook is called for, whose Namespace selects the extensions: the object itself (a Cluster, for every
 * lifecycle hook) or just `{ namespace }`.
 */
export interface HookTarget {
  namespace?: string;
  metadata?: { namespace?: string };
}

const namespaceOf = (target: HookTarget): string | undefined =>
  target.metadata?.namespace ?? target.namespace;

export interface RuntimeClientDeps {
  /** The ExtensionConfigs (their shared informer): the registry. */
  extensionConfigs: Pick<Informer<ExtensionConfig>, 'list' | 'hasSynced'>;
  /** The Namespaces, read for namespaceSelectors: from the cache, or fetched when the cache does not hold one. */
  namespaces: Pick<Informer<V1Namespace>, 'getOrFetch'>;
  /** How calls are sent; tests replace it. */
  post?: ExtensionPost;
  logger?: Logger;
}

/** Calls the handlers extensions registered for a hook; see callAll and callExtension. */
export class RuntimeClient {
  private readonly post: ExtensionPost;

  constructor(private readonly deps: RuntimeClientDeps) {
    this.post = deps.post ?? postToExtension;
  }

  /** Whether the registry (the ExtensionConfig cache) has been read once: calls fail before. */
  isReady(): boolean {
    return this.deps.extensionConfigs.hasSynced();
  }

  /**
   * Every handler registered for `hook` whose ExtensionConfig's namespaceSelector matches the target's Namespace,
   * in a stable order (by ExtensionConfig, then as discovered). Upstream GetAllExtensions.
   */
  async handlersFor(hook: HookName, target: HookTarget): Promise<HandlerRegistration[]> {
    const registered = this.registrations(hook).filter((r) => r.hook === hook);
    const matching: HandlerRegistration[] = [];
    for (const registration of registered) {
      if (await this.namespaceMatches(hook, registration, target)) matching.push(registration);
    }
    return matching;
  }

  /**
   * Calls every handler of `hook` for the target, one after the other, and stops at the first that fails (so a
   * reconcile waits for at most one unreachable extension). Their successes add up to the shortest non-zero
   * `retryAfterSeconds` and their messages joined. Upstream CallAllExtensions. Throws RuntimeHookError.
   */
  async callAll<H extends HookName>(
    hook: H,
    target: HookTarget,
    request: HookRequestBody<H>,
  ): Promise<HookResult> {
    const answers: HookResponses[H][] = [];
    for (const registration of await this.handlersFor(hook, target)) {
      answers.push(await this.call(hook, registration, request));
    }
    return aggregateResponses(answers as { retryAfterSeconds?: number; message?: string }[]);
  }

  /**
   * Calls one registered handler by its name (`<handler>.<extensionconfig>`) and returns its answer: how external
   * patches and variable discovery call the handler a ClusterClass names. With a target, the handler's
   * namespaceSelector must match it. Upstream CallExtension. Throws RuntimeHookError.
   */
  async callExtension<H extends HookName>(
    hook: H,
    name: string,
    request: HookRequestBody<H>,
    target?: HookTarget,
  ): Promise<HookResponses[H]> {
    const registration = this.registrations(hook).find((r) => r.name === name);
    if (!registration) throw new RuntimeHookError(hook, name, 'no handler of that name is registered');
    if (registration.hook !== hook)
      throw new RuntimeHookError(hook, name, `the handler is registered for ${registration.hook}`);
    if (target && !(await this.namespaceMatches(hook, registration, target)))
      throw new RuntimeHookError(
        hook,
        name,
        `namespaceSelector does not match namespace ${namespaceOf(target)}`,
      );
    return this.call(hook, registration, request);
  }

  /** Every registered handler of the hooks group (not of ExtensionConfigs being deleted). */
  private registrations(hook: HookName): HandlerRegistration[] {
    if (!this.isReady())
      throw new RuntimeHookError(hook, undefined, 'the extension registry is not synced yet');
    const configs = this.deps.extensionConfigs
      .list()
      .filter((c) => !c.metadata.deletionTimestamp)
      .sort((a, b) =>
        a.metadata.name! < b.metadata.name! ? -1 : a.metadata.name! > b.metadata.name! ? 1 : 0,
      );
    const registrations: HandlerRegistration[] = [];
    for (const config of configs) {
      const configName = config.metadata.name!;
      for (const handler of config.status?.handlers ?? []) {
        const [group] = handler.requestHook.apiVersion.split('/');
        if (group !== RUNTIME_HOOKS_GROUP) continue;
        const suffix = `.${configName}`;
        registrations.push({
          name: handler.name,
          handlerName: handler.name.endsWith(suffix) ? handler.name.slice(0, -suffix.length) : handler.name,
          extensionConfigName: configName,
          hook: handler.requestHook.hook,
          apiVersion: handler.requestHook.apiVersion,
          timeoutSeconds: handler.timeoutSeconds || DEFAULT_HANDLER_TIMEOUT_SECONDS,
          failurePolicy: handler.failurePolicy ?? 'Fail',
          clientConfig: config.spec.clientConfig,
          namespaceSelector: config.spec.namespaceSelector ?? {},
          settings: config.spec.settings ?? {},
        });
      }
    }
    return registrations;
  }

  private async namespaceMatches(
    hook: HookName,
    registration: HandlerRegistration,
    target: HookTarget,
  ): Promise<boolean> {
    const selector = registration.namespaceSelector;
    // An empty selector matches every object without reading its Namespace (as upstream).
    if (
      Object.keys(selector.matchLabels ?? {}).length === 0 &&
      (selector.matchExpressions ?? []).length === 0
    )
      return true;
    const name = namespaceOf(target);
    if (!name)
      throw new RuntimeHookError(
        hook,
        registration.name,
        'namespaceSelector needs the namespace of the object',
      );
    let namespace: V1Namespace | undefined;
    try {
      namespace = await this.deps.namespaces.getOrFetch(undefined, name);
    } catch (error) {
      throw new RuntimeHookError(
        hook,
        registration.name,
        `reading namespace ${name} failed: ${describeFailure(error)}`,
        { cause: error },
      );
    }
    if (!namespace) throw new RuntimeHookError(hook, registration.name, `namespace ${name} not found`);
    return selectorMatches(selector, namespace.metadata?.labels);
  }

  /** One call: the request with the ExtensionConfig's settings under the caller's, the failure policy applied. */
  private async call<H extends HookName>(
    hook: H,
    registration: HandlerRegistration,
    request: HookRequestBody<H>,
  ): Promise<HookResponses[H]> {
    if (registration.apiVersion !== RUNTIME_HOOKS_API_VERSION)
      throw new RuntimeHookError(
        hook,
        registration.name,
        `hook version ${registration.apiVersion} is not supported`,
      );
    const blocking = isBlockingHook(hook);
    const settings = { ...registration.settings, ...(request.settings ?? {}) };
    const body = {
      ...request,
      apiVersion: RUNTIME_HOOKS_API_VERSION,
      kind: requestKind(hook),
      ...(Object.keys(settings).length > 0 ? { settings } : {}),
    };
    let answer: Record<string, unknown>;
    try {
      const url = extensionCallUrl(
        registration.clientConfig,
        hookPath(hook, registration.handlerName),
        registration.timeoutSeconds,
      );
      answer = await this.post({
        url,
        caBundle: registration.clientConfig.caBundle,
        timeoutMs: registration.timeoutSeconds * 1000,
        body,
      });
      const problem = answerProblem(answer, blocking);
      if (problem?.kind === 'InvalidRetry')
        throw new ExtensionCallError(
          'InvalidResponse',
          'answered a retryAfterSeconds that is not a count of seconds',
        );
      if (problem?.kind === 'Failure')
        throw new RuntimeHookError(hook, registration.name, 'the handler answered Failure', {
          extensionMessage: problem.message,
        });
      if (problem?.kind === 'UnknownStatus')
        throw new RuntimeHookError(
          hook,
          registration.name,
          'the handler answered neither Success nor Failure',
        );
    } catch (error) {
      if (error instanceof RuntimeHookError) throw error;
      if (failureIgnored(registration.failurePolicy, error)) {
        this.deps.logger?.warn(
          { hook, handler: registration.name, err: { message: (error as Error).message } },
          'extension call failed; ignored by its failurePolicy',
        );
        return ignoredFailureAnswer(blocking) as HookResponses[H];
      }
      if (error instanceof ExtensionCallError || error instanceof ExtensionConfigError)
        throw new RuntimeHookError(hook, registration.name, error.message, { cause: error });
      throw error;
    }
    return answer as unknown as HookResponses[H];
  }
}
