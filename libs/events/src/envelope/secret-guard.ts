import { SecretLikePayloadError } from '../errors.js';

/** Field names (compared lower-case without `-`, `_`, `.`) that hold secrets wherever they appear. */
const SECRET_KEYS = new Set([
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
]);

/** Suffixes that make any field name secret-like, e.g. `bootstrapToken`, `adminPassword`, `etcdPrivateKey`. */
const SECRET_KEY_SUFFIXES = ['token', 'password', 'passwd', 'privatekey', 'secretkey', 'apikey', 'kubeconfig', 'bootstrapdata', 'credentials', 'keydata'];

const SECRET_VALUES: { pattern: RegExp; what: string }[] = [
  { pattern: /-----BEGIN [A-Z0-9 ]+-----/, what: 'PEM block' },
  { pattern: /eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\./, what: 'JWT' },
  { pattern: /client-key-data|client-certificate-data/, what: 'kubeconfig content' },
];

const MAX_DEPTH = 32;

function normalize(key: string): string {
  return key.toLowerCase().replace(/[-_.]/g, '');
}

function isSecretKey(key: string): boolean {
  const normalized = normalize(key);
  return SECRET_KEYS.has(normalized) || SECRET_KEY_SUFFIXES.some((suffix) => normalized.endsWith(suffix));
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
    for (const { pattern, what } of SECRET_VALUES) {
      if (pattern.test(value)) throw new SecretLikePayloadError(path, what);
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
