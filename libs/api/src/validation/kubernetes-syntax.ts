// Kubernetes' syntax rules for names, label keys and values and annotations (apimachinery's validation package), and
// the tolerant semantic versions Cluster API reads Kubernetes versions with (blang/semver's ParseTolerant).

const QUALIFIED_NAME_PART = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;
/** The most annotations (keys and values together) an object may carry. */
const TOTAL_ANNOTATION_BYTES = 256 * 1024;

/** Problems of a qualified name (`[prefix/]name`, as label and annotation keys and taint keys are); none if valid. */
export function qualifiedNameProblems(value: string): string[] {
  const parts = value.split('/');
  if (parts.length > 2) return ['must be a qualified name: an optional DNS subdomain prefix and "/", then a name'];
  const name = parts.length === 2 ? parts[1]! : parts[0]!;
  const problems: string[] = [];
  if (parts.length === 2) {
    const prefix = parts[0]!;
    if (prefix.length === 0) problems.push('the prefix part must be non-empty');
    else if (prefix.length > 253 || !DNS1123_SUBDOMAIN.test(prefix))
      problems.push('the prefix part must be a lowercase DNS subdomain of at most 253 characters');
  }
  if (name.length === 0) problems.push('the name part must be non-empty');
  else if (name.length > 63) problems.push('the name part must be no more than 63 characters');
  else if (!QUALIFIED_NAME_PART.test(name))
    problems.push("the name part must consist of alphanumeric characters, '-', '_' or '.', and start and end with one alphanumeric");
  return problems;
}

/** Problems of a label value; none if valid. */
export function labelValueProblems(value: string): string[] {
  if (value.length > 63) return ['must be no more than 63 characters'];
  if (!LABEL_VALUE.test(value))
    return ["must be empty or consist of alphanumeric characters, '-', '_' or '.', and start and end with one alphanumeric"];
  return [];
}

/** `path: problem` for each label of `labels` that Kubernetes would refuse (keys by name: they are not secret). */
export function labelProblems(labels: unknown, path: string): { path: string; message: string }[] {
  if (!isStringRecord(labels)) return [];
  const issues: { path: string; message: string }[] = [];
  for (const [key, value] of Object.entries(labels)) {
    for (const problem of qualifiedNameProblems(key)) issues.push({ path, message: `label key "${key}": ${problem}` });
    for (const problem of labelValueProblems(value)) issues.push({ path: `${path}[${key}]`, message: `label value ${problem}` });
  }
  return issues;
}

/** `path: problem` for annotations Kubernetes would refuse: keys that are not qualified names, too much in total. */
export function annotationProblems(annotations: unknown, path: string): { path: string; message: string }[] {
  if (!isStringRecord(annotations)) return [];
  const issues: { path: string; message: string }[] = [];
  let total = 0;
  for (const [key, value] of Object.entries(annotations)) {
    total += Buffer.byteLength(key) + Buffer.byteLength(value);
    for (const problem of qualifiedNameProblems(key.toLowerCase())) issues.push({ path, message: `annotation key "${key}": ${problem}` });
  }
  if (total > TOTAL_ANNOTATION_BYTES) issues.push({ path, message: `annotations may hold at most ${TOTAL_ANNOTATION_BYTES} bytes in total` });
  return issues;
}

function isStringRecord(value: unknown): value is Record<string, string> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && Object.values(value).every((v) => typeof v === 'string');
}

/** A semantic version: numbers, pre-release and build identifiers. */
export interface SemanticVersion {
  major: number;
  minor: number;
  patch: number;
  preRelease: string[];
  build: string[];
}

const NUMERIC = /^(0|[1-9][0-9]*)$/;
const PRE_RELEASE_ID = /^(0|[1-9][0-9]*|[0-9]*[A-Za-z-][0-9A-Za-z-]*)$/;
const BUILD_ID = /^[0-9A-Za-z-]+$/;

/**
 * Reads a version as blang/semver's ParseTolerant does (what Cluster API uses for Kubernetes versions): spaces and a
 * leading `v` dropped, leading zeros of the numbers dropped, a missing minor or patch taken as 0. Undefined if invalid.
 */
export function parseTolerantVersion(text: string): SemanticVersion | undefined {
  const parts = text.trim().replace(/^v/, '').split('.');
  // Major, minor and the rest (patch, pre-release and build, which may hold dots).
  const head = parts.length > 3 ? [parts[0]!, parts[1]!, parts.slice(2).join('.')] : parts;
  const trimmed = head.map((part) => {
    if (part.length <= 1) return part;
    const stripped = part.replace(/^0+/, '');
    return stripped === '' || !/^[0-9]/.test(stripped) ? `0${stripped}` : stripped;
  });
  if (trimmed.length < 3) {
    if (/[+-]/.test(trimmed[trimmed.length - 1]!)) return undefined;
    while (trimmed.length < 3) trimmed.push('0');
  }
  return parseStrictVersion(trimmed.join('.'));
}

function parseStrictVersion(text: string): SemanticVersion | undefined {
  const match = /^([0-9]+)\.([0-9]+)\.([0-9]+)(?:-([^+]+))?(?:\+(.+))?$/.exec(text);
  if (!match) return undefined;
  const [, major, minor, patch, pre, build] = match;
  if (![major, minor, patch].every((n) => NUMERIC.test(n!))) return undefined;
  const preRelease = pre === undefined ? [] : pre.split('.');
  const buildIds = build === undefined ? [] : build.split('.');
  if (!preRelease.every((id) => PRE_RELEASE_ID.test(id)) || !buildIds.every((id) => BUILD_ID.test(id))) return undefined;
  return { major: Number(major), minor: Number(minor), patch: Number(patch), preRelease, build: buildIds };
}

const sign = (n: number) => (n < 0 ? -1 : n > 0 ? 1 : 0);

function comparePreRelease(a: string[], b: string[]): number {
  if (a.length === 0 || b.length === 0) return sign(b.length - a.length);
  for (let i = 0; i < a.length && i < b.length; i++) {
    const [x, y] = [a[i]!, b[i]!];
    if (x === y) continue;
    const [xNum, yNum] = [NUMERIC.test(x), NUMERIC.test(y)];
    if (xNum && yNum) return sign(Number(x) - Number(y));
    if (xNum !== yNum) return xNum ? -1 : 1;
    return x < y ? -1 : 1;
  }
  return sign(a.length - b.length);
}

/**
 * Compares as Cluster API's version.Compare with build tags: -1, 0 or 1, or 2 when only non-numeric build identifiers
 * differ (commit hashes and such have no order).
 */
export function compareVersionsWithBuildTags(a: SemanticVersion, b: SemanticVersion): -1 | 0 | 1 | 2 {
  const core = sign(a.major - b.major) || sign(a.minor - b.minor) || sign(a.patch - b.patch) || comparePreRelease(a.preRelease, b.preRelease);
  if (core !== 0) return core as -1 | 1;
  for (let i = 0; i < a.build.length && i < b.build.length; i++) {
    const [x, y] = [a.build[i]!, b.build[i]!];
    const [xNum, yNum] = [/^[0-9]+$/.test(x), /^[0-9]+$/.test(y)];
    if (xNum && yNum) {
      const order = sign(Number(x) - Number(y));
      if (order !== 0) return order as -1 | 1;
    } else if (xNum !== yNum) return xNum ? -1 : 1;
    else if (x !== y) return 2;
  }
  return sign(a.build.length - b.build.length) as -1 | 0 | 1;
}

/** The version as semver prints it (`1.31.4-rc.0+k3s1`). */
export function formatVersion(v: SemanticVersion): string {
  return `${v.major}.${v.minor}.${v.patch}${v.preRelease.length ? `-${v.preRelease.join('.')}` : ''}${v.build.length ? `+${v.build.join('.')}` : ''}`;
}
