/**
 * Raised for certificate and key material that cannot be used. The message names what is wrong (which
 * field, which secret key) and never carries key or certificate content.
 */
export class PkiError extends Error {
  constructor(
    message: string,
    readonly reason: PkiErrorReason,
    readonly context: Record<string, string | number | boolean> = {},
  ) {
    super(message);
    this.name = 'PkiError';
  }
}

export type PkiErrorReason =
  | 'InvalidPem'
  | 'UnsupportedKey'
  | 'KeyMismatch'
  | 'NotACertificateAuthority'
  | 'MissingSecretKey'
  | 'InvalidArgument'
  | 'InvalidKubeconfig';
