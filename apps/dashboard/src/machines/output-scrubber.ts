import { redactNote } from '@capstan/kube';

/** What replaces a value the dashboard must not pass on. */
export const REDACTED = '[redacted]';

/**
 * Values shorter than this are not searched for: they would blank ordinary words of the output (an argument `install`,
 * an environment value `true`). A credential is longer.
 */
const MIN_VALUE_LENGTH = 8;

/**
 * Secrets recognised by their shape, wherever they come from: JWTs (ServiceAccount tokens), K3s join tokens, the value
 * after a `token`, `password`, `secret` or `*key` name (`password=x`, `api_key: x`) and after such a flag (`--token x`).
 */
const SECRET_SHAPES: readonly [RegExp, string][] = [
  [/eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*/g, REDACTED],
  [/K10[0-9a-f]{16,}::[^\s"']+/g, REDACTED],
  [
    /\b((?:[a-z0-9]+[_-])*(?:token|password|passwd|secret|api[_-]?key|private[_-]?key|access[_-]?key))(["']?\s*[:=]\s*["']?)[^\s"',}]+/gi,
    `$1$2${REDACTED}`,
  ],
  [/(--(?:[a-z0-9]+-)*(?:token|password|passwd|secret|key))(\s+|=)[^\s"']+/gi, `$1$2${REDACTED}`],
];

/**
 * Removes from text a machine reported (a failed instruction's output, a failure message) every value its plan put
 * there that may be secret, and anything shaped like a secret: output echoes what the commands were given, and the
 * plan's file contents, arguments and environment may hold tokens and keys (docs/node-agent.md).
 */
export class OutputScrubber {
  private readonly values: string[];

  /** `planJson`: the `plan` key of the plan Secret (any JSON, valid plan or not). */
  constructor(planJson: string | undefined) {
    this.values = [...sensitiveValues(planJson)].sort((a, b) => b.length - a.length);
  }

  scrub(text: string): string {
    let scrubbed = text;
    // Longest first: a value that contains another is removed whole.
    for (const value of this.values) scrubbed = scrubbed.split(value).join(REDACTED);
    return scrubSecretShapes(scrubbed);
  }
}

/** `text` without anything shaped like a secret (PEM blocks, bearer tokens and SECRET_SHAPES). */
export function scrubSecretShapes(text: string): string {
  let scrubbed = redactNote(text);
  for (const [shape, replacement] of SECRET_SHAPES) scrubbed = scrubbed.replace(shape, replacement);
  return scrubbed;
}

/**
 * Every file content of the plan (as written, decoded, and line by line), every argument and every environment
 * entry (whole, and its value) of its instructions and periodic instructions. Read leniently: a plan the agent
 * refused as invalid may still have been echoed.
 */
function sensitiveValues(planJson: string | undefined): Set<string> {
  const values = new Set<string>();
  if (!planJson) return values;
  let plan: unknown;
  try {
    plan = JSON.parse(planJson);
  } catch {
    return values;
  }
  const add = (value: unknown) => {
    if (typeof value !== 'string') return;
    const trimmed = value.trim();
    if (trimmed.length >= MIN_VALUE_LENGTH) values.add(trimmed);
  };
  const record = (value: unknown): Record<string, unknown> =>
    value !== null && typeof value === 'object' && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : {};
  const list = (value: unknown): unknown[] => (Array.isArray(value) ? value : []);
  const root = record(plan);
  for (const file of list(root['files'])) {
    const content = record(file)['content'];
    if (typeof content !== 'string') continue;
    add(content);
    const decoded = Buffer.from(content, 'base64').toString('utf8');
    add(decoded);
    for (const line of decoded.split('\n')) add(line);
  }
  for (const instruction of [...list(root['instructions']), ...list(root['periodicInstructions'])]) {
    for (const arg of list(record(instruction)['args'])) add(arg);
    for (const entry of list(record(instruction)['env'])) {
      add(entry);
      if (typeof entry === 'string' && entry.includes('=')) add(entry.slice(entry.indexOf('=') + 1));
    }
  }
  return values;
}
