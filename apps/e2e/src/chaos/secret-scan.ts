// Secret scan: every secret value of the management cluster's Secrets (bootstrap data, kubeconfigs, join tokens,
// CA and service-account keys, agent tokens inside bootstrap data and plans) becomes a set of "needles", and every
// service log line and every Kubernetes Event is searched for them. Needles are runs of base64/hex/JWT characters
// (at least NEEDLE_MIN characters), so JSON escaping in a log line cannot hide them; a secret that was logged
// base64-encoded (a Secret object dumped whole, a kubeconfig's client-key-data) is found through the encodings of
// its lines at all three byte alignments. Certificates are public and are not needles.

import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';

export const NEEDLE_MIN = 24;
const RUN = /[A-Za-z0-9+/=_-]{24,}/g;

export interface Needle {
  /** Where the secret came from, e.g. `Secret ns/demo-sa key sa.key: private key line 3` (never the value). */
  source: string;
  kind: 'private-key' | 'jwt' | 'token' | 'value' | 'base64-of-secret';
  text: string;
}

export interface SecretInput {
  /** `namespace/name` */
  name: string;
  type?: string;
  data?: Record<string, string>;
}

const PRIVATE_KEY = /-----BEGIN ([A-Z0-9 ]*)PRIVATE KEY-----([\s\S]*?)-----END \1PRIVATE KEY-----/g;
const JWT = /eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.([A-Za-z0-9_-]{20,})/g;
/** `token: X`, `"token":"X"`, `token=X` in YAML, JSON or shell text. */
const TOKEN_FIELD =
  /(?<![A-Za-z0-9-])["']?(?:token|password|secret|bearer-token|agent-token|join-token)["']?\s*[:=]\s*["']?([A-Za-z0-9+/=_-]{20,})/gi;
/** What a needle may consist of (what NeedleIndex finds); a path is not a secret. */
const NEEDLE_TEXT = /^[A-Za-z0-9+/=_-]+$/;
const BASE64_BLOB = /[A-Za-z0-9+/]{120,}={0,2}/g;
/** Keys of a plan Secret the agent writes: states, counters and checksums, not secret. */
const PLAN_REPORT_KEY =
  /^(plan-state|plan-revision|plan-attempt|applied-checksum|failed-checksum|failure-count|max-failures|probe-.*|applied-output|failed-output|failed-reason|.*-at)$/;
/** Values that are the same everywhere and say nothing (formats, states). */
const TRIVIAL = /^(cloud-config|ignition|pending|in-progress|succeeded|failed|true|false|[0-9]+)$/;

/**
 * The substrings that cannot occur in a base64 encoding of a text holding `text` at any offset, one per byte
 * alignment: the characters encoding only bytes of `text`.
 */
export function base64Variants(text: string, min = NEEDLE_MIN): string[] {
  const bytes = Buffer.from(text, 'utf8');
  const variants: string[] = [];
  for (let k = 0; k < 3; k++) {
    const padded = Buffer.concat([Buffer.alloc(k), bytes]);
    const full = Math.floor(padded.length / 3) * 3;
    const encoded = padded
      .subarray(0, full)
      .toString('base64')
      .slice(k === 0 ? 0 : 4);
    if (encoded.length >= min) variants.push(encoded);
  }
  return variants;
}

function decodeBase64Text(value: string): string | undefined {
  const bytes = Buffer.from(value, 'base64');
  const text = bytes.toString('utf8');
  // Binary, or not base64 at all: nothing textual to look into.
  if (
    text.includes('\uFFFD') ||
    ![...text].every((c) => c === '\t' || c === '\n' || c === '\r' || (c >= ' ' && c <= '~'))
  )
    return undefined;
  return text;
}

/** Needles of one secret text (a Secret's decoded value, or text nested in one). */
export function needlesOfText(text: string, source: string, depth = 0): Needle[] {
  const needles: Needle[] = [];
  const add = (kind: Needle['kind'], value: string, where: string) => {
    if (value.length >= NEEDLE_MIN && NEEDLE_TEXT.test(value) && !value.startsWith('/'))
      needles.push({ source: `${source}: ${where}`, kind, text: value });
  };
  for (const match of text.matchAll(PRIVATE_KEY)) {
    const lines = match[2]!
      .split(/\r?\n|\\n/)
      .map((l) => l.trim())
      .filter((l) => /^[A-Za-z0-9+/=]+$/.test(l) && l.length >= NEEDLE_MIN);
    // Headers and the first line are partly the same for every key of a type: lines from the middle are not.
    for (const [i, line] of lines.slice(1, 4).entries()) {
      add('private-key', line, `private key line ${i + 2}`);
      for (const variant of base64Variants(`${line}\n`))
        add('base64-of-secret', variant, `private key line ${i + 2}, base64`);
    }
  }
  for (const match of text.matchAll(JWT)) {
    add('jwt', match[1]!, 'JWT signature');
    for (const variant of base64Variants(match[1]!))
      add('base64-of-secret', variant, 'JWT signature, base64');
  }
  for (const match of text.matchAll(TOKEN_FIELD)) {
    const value = match[1]!;
    if (value.startsWith('eyJ')) continue; // a JWT: its signature is a needle already
    add('token', value, 'token field');
    for (const variant of base64Variants(value)) add('base64-of-secret', variant, 'token field, base64');
  }
  if (depth < 2) {
    // Files inside cloud-config (`encoding: b64`), kubeconfig `client-key-data`, nested base64 documents.
    for (const match of text.matchAll(BASE64_BLOB)) {
      const inner = decodeBase64Text(match[0]);
      if (inner) needles.push(...needlesOfText(inner, `${source} (base64 inside)`, depth + 1));
    }
  }
  return needles;
}

/** Needles of every secret value of `secrets`, plus `extra` values (tokens the harness knows, injected fakes). */
export function secretNeedles(
  secrets: SecretInput[],
  extra: { source: string; value: string }[] = [],
): Needle[] {
  const needles: Needle[] = [];
  for (const secret of secrets) {
    const plan = secret.type === 'capstan.dev/machine-plan';
    for (const [key, encoded] of Object.entries(secret.data ?? {})) {
      if (plan && PLAN_REPORT_KEY.test(key)) continue;
      const source = `Secret ${secret.name} key ${key}`;
      const text = decodeBase64Text(encoded);
      if (text === undefined) continue;
      needles.push(...needlesOfText(text, source));
      const single = text.trim();
      // A bare single-line value (a join token, a password): the whole value is secret.
      if (
        !plan &&
        !single.includes('\n') &&
        single.length >= NEEDLE_MIN &&
        NEEDLE_TEXT.test(single) &&
        !single.startsWith('/') &&
        !TRIVIAL.test(single)
      ) {
        needles.push({ source: `${source}: whole value`, kind: 'value', text: single });
        for (const variant of base64Variants(single))
          needles.push({ source: `${source}: whole value, base64`, kind: 'base64-of-secret', text: variant });
      }
    }
  }
  for (const { source, value } of extra) {
    needles.push(...needlesOfText(value, source));
    if (!value.includes('\n') && value.length >= NEEDLE_MIN && NEEDLE_TEXT.test(value))
      needles.push({ source: `${source}: whole value`, kind: 'value', text: value });
  }
  return dedupe(needles);
}

function dedupe(needles: Needle[]): Needle[] {
  const seen = new Set<string>();
  return needles.filter((n) => (seen.has(n.text) ? false : (seen.add(n.text), true)));
}

/** Finds needles in text quickly: needles are indexed by their first NEEDLE_MIN characters. */
export class NeedleIndex {
  private readonly byPrefix = new Map<string, Needle[]>();
  readonly size: number;

  constructor(needles: Needle[]) {
    for (const needle of needles) {
      if (needle.text.length < NEEDLE_MIN || !NEEDLE_TEXT.test(needle.text)) {
        throw new RangeError(
          `a needle must be at least ${NEEDLE_MIN} of [A-Za-z0-9+/=_-] (from ${needle.source})`,
        );
      }
      const prefix = needle.text.slice(0, NEEDLE_MIN);
      this.byPrefix.set(prefix, [...(this.byPrefix.get(prefix) ?? []), needle]);
    }
    this.size = needles.length;
  }

  /** The needles `text` contains. */
  find(text: string): Needle[] {
    const found: Needle[] = [];
    for (const run of text.matchAll(RUN)) {
      const s = run[0];
      for (let i = 0; i + NEEDLE_MIN <= s.length; i++) {
        const candidates = this.byPrefix.get(s.slice(i, i + NEEDLE_MIN));
        if (!candidates) continue;
        for (const needle of candidates)
          if (s.startsWith(needle.text, i) && !found.includes(needle)) found.push(needle);
      }
    }
    return found;
  }
}

export interface LeakHit {
  /** Log file and line number, or the Event's name. */
  where: string;
  /** What leaked (the secret's origin and kind), never the value. */
  secret: string;
  kind: Needle['kind'];
}

export interface ScanResult {
  scanned: number;
  hits: LeakHit[];
}

/** Scans a file line by line. */
export async function scanFile(path: string, index: NeedleIndex, label = path): Promise<ScanResult> {
  const lines = createInterface({ input: createReadStream(path, { encoding: 'utf8' }), crlfDelay: Infinity });
  let scanned = 0;
  const hits: LeakHit[] = [];
  for await (const line of lines) {
    scanned++;
    for (const needle of index.find(line))
      hits.push({ where: `${label}:${scanned}`, secret: needle.source, kind: needle.kind });
  }
  return { scanned, hits };
}

export function scanTexts(items: { where: string; text: string }[], index: NeedleIndex): ScanResult {
  const hits: LeakHit[] = [];
  for (const item of items) {
    for (const needle of index.find(item.text))
      hits.push({ where: item.where, secret: needle.source, kind: needle.kind });
  }
  return { scanned: items.length, hits };
}
