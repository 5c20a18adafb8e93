/** An error that names the offending field and never carries the field's value. */
abstract class FieldError<Reason extends string> extends Error {
  constructor(
    message: string,
    readonly reason: Reason,
    readonly field: string,
  ) {
    super(message);
  }
}

/**
 * Raised when a K3s config cannot be rendered. `field` names the offending input (e.g.
 * `spec.agentConfig.nodeLabels[2]`); the message never repeats a value, so the token cannot leak through it.
 */
export class BootstrapRenderError extends FieldError<BootstrapRenderErrorReason> {
  override readonly name = 'BootstrapRenderError';
}

export type BootstrapRenderErrorReason =
  'InvalidField' | 'MissingCertificates' | 'ReservedPath' | 'DuplicatePath';

/**
 * Raised when bootstrap data cannot be understood. `field` says what could not be read (a file path, a
 * K3s config key, the install command); the message never carries content from the document.
 */
export class BootstrapDataError extends FieldError<BootstrapDataErrorReason> {
  override readonly name = 'BootstrapDataError';
}

export type BootstrapDataErrorReason =
  | 'NotCloudConfig'
  | 'InvalidYaml'
  | 'InvalidStructure'
  | 'MissingK3sConfig'
  | 'MissingField'
  | 'InvalidField'
  | 'MissingInstallCommand'
  | 'InconsistentRole'
  | 'UnsupportedEncoding'
  | 'TooLarge'
  | 'MissingCertificate';
