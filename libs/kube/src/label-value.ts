// Label values are at most 63 characters of [A-Za-z0-9_.-], alphanumeric at both ends. Names that do not fit are
// written as upstream's util/labels/format.MustFormatValue does, so both cores agree on the value.

const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;
const MAX_LABEL_VALUE_LENGTH = 63;

/** `value` when it is a valid label value, else `hash_<base64url(fnv32a(value))>_z`. */
export function formatLabelValue(value: string): string {
  if (value.length <= MAX_LABEL_VALUE_LENGTH && LABEL_VALUE.test(value)) return value;
  return `hash_${Buffer.from(fnv32a(value)).toString('base64url')}_z`;
}

/** FNV-1a, 32 bits, big-endian bytes (Go's hash/fnv New32a().Sum(nil)). */
function fnv32a(value: string): Uint8Array {
  let hash = 0x811c9dc5;
  for (const byte of Buffer.from(value, 'utf8')) {
    hash ^= byte;
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  const bytes = new Uint8Array(4);
  new DataView(bytes.buffer).setUint32(0, hash);
  return bytes;
}
