// The API server's `labelSelector` and `fieldSelector` query strings (apimachinery labels.Parse, fields.ParseSelector),
// parsed and matched for the in-memory API server.

export type LabelRequirement =
  | { key: string; op: 'exists' | 'absent' }
  | { key: string; op: 'in' | 'notin'; values: string[] };

export class SelectorSyntaxError extends Error {
  constructor(selector: string, detail: string) {
    super(`unable to parse requirement: ${detail} in selector "${selector}"`);
    this.name = 'SelectorSyntaxError';
  }
}

/** Splits at the commas that separate requirements, not those inside `in (a,b)`. */
function requirementsOf(selector: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < selector.length; i++) {
    const c = selector[i];
    if (c === '(') depth++;
    else if (c === ')') depth--;
    else if (c === ',' && depth === 0) {
      parts.push(selector.slice(start, i));
      start = i + 1;
    }
  }
  parts.push(selector.slice(start));
  return parts.map((p) => p.trim()).filter((p) => p !== '');
}

const SET = /^([^\s!=()]+)\s+(in|notin)\s+\(([^)]*)\)$/;
const EQUALITY = /^([^\s!=()]+)\s*(==|=|!=)\s*([^\s!=(),]*)$/;
const KEY = /^[^\s!=(),]+$/;

export function parseLabelSelector(selector: string | undefined): LabelRequirement[] {
  const requirements: LabelRequirement[] = [];
  for (const text of requirementsOf(selector ?? '')) {
    let m: RegExpExecArray | null;
    if (text.startsWith('!')) {
      const key = text.slice(1).trim();
      if (!KEY.test(key)) throw new SelectorSyntaxError(selector!, `invalid key "${key}"`);
      requirements.push({ key, op: 'absent' });
    } else if ((m = SET.exec(text))) {
      const values = m[3]!.split(',').map((v) => v.trim()).filter((v) => v !== '');
      requirements.push({ key: m[1]!, op: m[2] as 'in' | 'notin', values });
    } else if ((m = EQUALITY.exec(text))) {
      requirements.push({ key: m[1]!, op: m[2] === '!=' ? 'notin' : 'in', values: [m[3]!] });
    } else if (KEY.test(text)) {
      requirements.push({ key: text, op: 'exists' });
    } else {
      throw new SelectorSyntaxError(selector!, `"${text}"`);
    }
  }
  return requirements;
}

export function labelsMatch(
  requirements: readonly LabelRequirement[],
  labels: Readonly<Record<string, string>> | undefined,
): boolean {
  const have = labels ?? {};
  return requirements.every((r) => {
    const present = Object.hasOwn(have, r.key);
    switch (r.op) {
      case 'exists':
        return present;
      case 'absent':
        return !present;
      case 'in':
        return present && r.values.includes(have[r.key]!);
      case 'notin':
        return !present || !r.values.includes(have[r.key]!);
    }
  });
}

export interface FieldRequirement {
  path: string[];
  value: string;
  equal: boolean;
}

/**
 * `metadata.name=x,spec.nodeName!=y`. The real server allows only the fields each kind registers (metadata.name and
 * metadata.namespace everywhere); this one reads any dotted path, so a test can use fewer, never more.
 */
export function parseFieldSelector(selector: string | undefined): FieldRequirement[] {
  return requirementsOf(selector ?? '').map((text) => {
    const m = EQUALITY.exec(text);
    if (!m) throw new SelectorSyntaxError(selector!, `"${text}"`);
    return { path: m[1]!.split('.'), value: m[3]!, equal: m[2] !== '!=' };
  });
}

export function fieldsMatch(requirements: readonly FieldRequirement[], obj: unknown): boolean {
  return requirements.every((r) => {
    let value: unknown = obj;
    for (const part of r.path) value = (value as Record<string, unknown> | undefined)?.[part];
    const text = value === undefined || value === null ? '' : String(value);
    return (text === r.value) === r.equal;
  });
}
