import { gunzipSync } from 'node:zlib';
import { BootstrapDataError } from './errors.js';

/**
 * The most the files of one machine's bootstrap data (or of one in-place plan) may decode to. The data Secret holds
 * at most 1 MiB, but gzip inflates a thousandfold: a tenant's few kilobytes must not become hundreds of MiB in a
 * provider's memory (issue 32, finding 5).
 */
export const MAX_DECODED_FILES_BYTES = 16 * 1024 * 1024;

/**
 * Decodes the files of one machine (its bootstrap data, or one in-place plan) within MAX_DECODED_FILES_BYTES for all
 * of them together: each decode is given what the earlier ones left.
 */
export class FileDecodingBudget {
  private left = MAX_DECODED_FILES_BYTES;

  decode(content: string, encoding: unknown, field: string): Buffer {
    const bytes = decodeFileContent(content, encoding, field, this.left);
    this.left -= bytes.length;
    return bytes;
  }
}

/**
 * A file's bytes from its content and cloud-init `encoding` (the K3sConfig values and cloud-init's aliases), within
 * `maxBytes`: a larger result is refused before it is held. The error names the field, never content.
 */
export function decodeFileContent(
  content: string,
  encoding: unknown,
  field: string,
  maxBytes: number,
): Buffer {
  const within = (bytes: Buffer) => {
    if (bytes.length > maxBytes) throw tooLarge(field, maxBytes);
    return bytes;
  };
  switch (encoding) {
    case undefined:
    case 'text/plain':
      return within(Buffer.from(content, 'utf8'));
    case 'b64':
    case 'base64':
      return within(Buffer.from(content, 'base64'));
    case 'gz':
    case 'gzip':
      return gunzipWithin(Buffer.from(content, 'latin1'), field, maxBytes);
    case 'gz+b64':
    case 'gz+base64':
    case 'gzip+b64':
    case 'gzip+base64':
      return gunzipWithin(Buffer.from(content, 'base64'), field, maxBytes);
    default:
      throw new BootstrapDataError(
        `bootstrap data: ${field} has an encoding cloud-init does not know`,
        'UnsupportedEncoding',
        field,
      );
  }
}

function gunzipWithin(data: Buffer, field: string, maxBytes: number): Buffer {
  try {
    return gunzipSync(data, { maxOutputLength: Math.max(1, maxBytes) });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE') throw tooLarge(field, maxBytes);
    throw new BootstrapDataError(`bootstrap data: ${field} is not valid gzip data`, 'InvalidField', field);
  }
}

function tooLarge(field: string, maxBytes: number): BootstrapDataError {
  return new BootstrapDataError(
    `bootstrap data: ${field} decodes to more than the ${Math.floor(maxBytes / 1024)} KiB left of the ${MAX_DECODED_FILES_BYTES / 1024 / 1024} MiB all files may take`,
    'TooLarge',
    field,
  );
}
