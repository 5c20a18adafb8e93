import { SecretLikePayloadError } from '../errors.js';

/** Field names (compared lower-case without `-`, `_`, `.`) that hold secrets wherever they appear. */
const SECRET_KEYS = [
  'key',
  'value',
  'secret',
  'token',
  'password',
  'passwd',
  'kubeconfig',
  'bootstrapdata',
  'privatekey',
  'tlskey',
  'clientkey',
  'clientkeydata',
  'stringdata',
  'userdata',
  'credentials',
  'creds',
  'apikey',
  'secretkey',
  'accesskey',
  'sshkey',
];

/** Suffixes that make any field name secret-like, e.g. `bootstrapToken`, `adminPassword`, `etcdPrivateKey`. */
const SECRET_KEY_SUFFIXES = [
  'token',
  'password',
  'passwd',
  'privatekey',
  'secretkey',
  'apikey',
  'kubeconfig',
  'bootstrapdata',
  'credentials',
  'keydata',
];

// One expression per check: the guard runs on every event published and consumed.
const SECRET_KEY = new RegExp(`^(?:${SECRET_KEYS.join('|')})$|(?:${SECRET_KEY_SUFFIXES.join('|')})$`);
const SECRET_VALUE =
  /-----BEGIN [A-Z0-9 ]+-----|eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.|client-key-data|client-certificate-data/;
/** No secret-looking value is shorter than this (`-----BEGIN X-----`, `client-key-data`). */
const SHORTEST_SECRET_VALUE = 15;

function describeValue(value: string): string {
  if (value.includes('-----BEGIN ')) return 'PEM block';
  if (value.includes('client-')) return 'kubeconfig content';
  return 'JWT';
}

const MAX_DEPTH = 32;

function isSecretKey(key: string): boolean {
  return SECRET_KEY.test(key.toLowerCase().replace(/[-_.]/g, ''));
}

/**
 * Throws SecretLikePayloadError when `value` has a field named like a secret or a string that looks
 * like one (PEM block, JWT, kubeconfig key data). Events name objects, they never carry their secrets.
 */
export function assertNoSecrets(value: unknown, path = 'data'): void {
  inspect(value, path, 0);
}

function inspect(value: unknown, path: string, depth: number): void {
  if (typeof value === 'string') {
    if (value.length >= SHORTEST_SECRET_VALUE && SECRET_VALUE.test(value)) {
      throw new SecretLikePayloadError(path, describeValue(value));
    }
    return;
  }
  if (typeof value !== 'object' || value === null) return;
  if (depth >= MAX_DEPTH) throw new SecretLikePayloadError(path, `nested deeper than ${MAX_DEPTH} levels`);
  if (Array.isArray(value)) {
    value.forEach((item, i) => inspect(item, `${path}[${i}]`, depth + 1));
    return;
  }
  for (const [key, item] of Object.entries(value)) {
    const itemPath = `${path}.${key}`;
    if (isSecretKey(key)) throw new SecretLikePayloadError(itemPath, 'secret-like field name');
    inspect(item, itemPath, depth + 1);
  }
}
