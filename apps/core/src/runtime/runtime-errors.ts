import { maskSecrets } from '@capstan/kube';

// The Runtime SDK's failures. Their messages name what failed (which extension, which step, which TLS or HTTP
// error) and never quote a request or response body: a body can carry a Cluster's content or an extension's secrets,
// and these messages end up in conditions and logs.

/** Longest text of an extension's own `message` that an error keeps. */
const MAX_EXTENSION_MESSAGE = 256;

/** An ExtensionConfig that cannot be called as written (its URL, Service or caBundle). Never ignored. */
export class ExtensionConfigError extends Error {
  override readonly name = 'ExtensionConfigError';
}

/**
 * Why a call to an extension failed on the way: the server could not be reached, refused the TLS handshake, took
 * too long, or answered something other than a bounded JSON object with HTTP 200. Upstream's
 * errCallingExtensionHandler: the failures `failurePolicy: Ignore` turns into success, but for `Aborted` (the caller's
 * own deadline, not the extension's failure).
 */
export type ExtensionCallFailure =
  'Unreachable' | 'TLS' | 'TimedOut' | 'Aborted' | 'HTTPStatus' | 'TooLarge' | 'InvalidResponse';

export class ExtensionCallError extends Error {
  override readonly name = 'ExtensionCallError';

  constructor(
    readonly failure: ExtensionCallFailure,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }

  /** Whether `failurePolicy: Ignore` may turn this failure into success. */
  get ignorable(): boolean {
    return this.failure !== 'Aborted';
  }
}

/** A discovery whose answer was refused: a Failure status, or handlers that break the rules. */
export class ExtensionDiscoveryError extends Error {
  override readonly name = 'ExtensionDiscoveryError';
}

/**
 * A hook call that did not succeed: the hook, the registered handler (when one was called) and a short reason. The
 * extension's own `message` of a Failure answer is kept apart (masked and shortened) for callers that choose to
 * show it; `message` never includes it.
 */
export class RuntimeHookError extends Error {
  override readonly name = 'RuntimeHookError';
  readonly extensionMessage: string | undefined;

  constructor(
    readonly hook: string,
    readonly handler: string | undefined,
    readonly reason: string,
    options: { extensionMessage?: string; cause?: unknown } = {},
  ) {
    super(`hook ${hook}${handler ? `, handler ${handler}` : ''}: ${reason}`, { cause: options.cause });
    this.extensionMessage = options.extensionMessage
      ? maskSecrets(options.extensionMessage).slice(0, MAX_EXTENSION_MESSAGE)
      : undefined;
  }
}
