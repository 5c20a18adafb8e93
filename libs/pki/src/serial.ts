import { randomBytes } from 'node:crypto';

/**
 * A random 128-bit positive serial number as hex (RFC 5280 allows up to 20 octets). The first octet is
 * kept non-zero and below 0x80 so the DER INTEGER is minimal and positive.
 */
export function randomSerialNumber(): string {
  const bytes = randomBytes(16);
  bytes[0] = (bytes[0]! & 0x7f) | 0x01;
  return bytes.toString('hex');
}
