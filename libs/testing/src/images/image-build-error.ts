import { TestEnvironmentError } from '../errors.js';

/** An image or its inputs could not be built; the message says which step failed and the context holds its inputs. */
export class ImageBuildError extends TestEnvironmentError {
  constructor(message: string, context: Record<string, unknown> = {}) {
    super(message, context);
    this.name = 'ImageBuildError';
  }
}
