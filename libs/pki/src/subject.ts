import { PkiError } from './errors.js';
import type { x509 } from './x509.js';

/** Upper bounds of RFC 5280 (ub-common-name, ub-organization-name); some verifiers refuse longer values. */
const MAX_ATTRIBUTE_LENGTH = 64;

/**
 * A subject with one O attribute per organization (Kubernetes reads them as groups) followed by the CN,
 * the order Go's crypto/x509 writes. Built as structured attributes so commas or plus signs in a value
 * cannot change the name's meaning.
 */
export function distinguishedName(commonName: string, organizations: readonly string[] = []): x509.JsonName {
  for (const [field, value] of [
    ['commonName', commonName],
    ...organizations.map((o) => ['organization', o]),
  ]) {
    if (!value) throw new PkiError(`${field} must not be empty`, 'InvalidArgument');
    if (value.length > MAX_ATTRIBUTE_LENGTH) {
      throw new PkiError(`${field} is longer than ${MAX_ATTRIBUTE_LENGTH} characters`, 'InvalidArgument', {
        length: value.length,
      });
    }
  }
  return [...organizations.map((o) => ({ O: [o] })), { CN: [commonName] }];
}
