/**
 * A failure of the sim runtime. `reason` is a CamelCase word fit for a condition reason; `context` names the
 * objects involved (cluster, machine, port), never a token, key or bootstrap data.
 */
export class SimError extends Error {
  override readonly name = 'SimError';

  constructor(
    message: string,
    readonly reason: SimErrorReason,
    readonly context: Record<string, string | number | undefined> = {},
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

export type SimErrorReason =
  | 'APIServerStartFailed'
  | 'APIServerNotReady'
  | 'EtcdStartFailed'
  | 'EtcdRequestFailed'
  | 'EtcdRestoreFailed'
  | 'EtcdJoinFailed'
  | 'EncryptionStageInvalid'
  | 'JoinRejected'
  | 'NoFreePort'
  | 'InvalidOption'
  | 'InvalidServerTls'
  | 'InvalidToken';

export function isSimError(error: unknown, reason?: SimErrorReason): error is SimError {
  return error instanceof SimError && (reason === undefined || error.reason === reason);
}
