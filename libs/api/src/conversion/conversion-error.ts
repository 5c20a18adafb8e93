/** A conversion that cannot be done: the message names the field and the rule, never a value that could be secret. */
export class ConversionError extends Error {
  constructor(
    message: string,
    readonly field?: string,
  ) {
    super(field ? `${field}: ${message}` : message);
    this.name = 'ConversionError';
  }
}
