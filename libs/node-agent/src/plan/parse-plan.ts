import { createHash } from 'node:crypto';
import { posix } from 'node:path';
import type { MachinePlan, PlanFile, PlanInstruction, PlanPeriodicInstruction, PlanProbe } from './plan.js';

/** A plan the agent refuses to apply: the message names the rule and where, never a value from the plan. */
export class InvalidPlanError extends Error {
  constructor(readonly where: string, readonly rule: string) {
    super(`${where}: ${rule}`);
    this.name = 'InvalidPlanError';
  }
}

/** sha256 hex of the raw plan bytes: what `applied-checksum` and `failed-checksum` hold. */
export function planChecksum(raw: Buffer | string): string {
  return createHash('sha256').update(raw).digest('hex');
}

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const NAME = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;
const MODE = /^0?[0-7]{3,4}$/;
const ENV = /^[A-Za-z_][A-Za-z0-9_]*=/s;
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

function only(obj: Json, where: string, allowed: readonly string[]): void {
  for (const key of Object.keys(obj)) {
    if (!allowed.includes(key)) throw new InvalidPlanError(where, `unknown field "${key.slice(0, 63)}"`);
  }
}

function string(obj: Json, key: string, where: string, required = false): string | undefined {
  const value = obj[key];
  if (value === undefined && !required) return undefined;
  if (typeof value !== 'string' || (required && value === '')) {
    throw new InvalidPlanError(`${where}.${key}`, required ? 'must be a non-empty string' : 'must be a string');
  }
  return value;
}

function count(obj: Json, key: string, where: string, min: number): number | undefined {
  const value = obj[key];
  if (value === undefined) return undefined;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min) {
    throw new InvalidPlanError(`${where}.${key}`, `must be an integer >= ${min}`);
  }
  return value;
}

function flag(obj: Json, key: string, where: string): boolean | undefined {
  const value = obj[key];
  if (value === undefined) return undefined;
  if (typeof value !== 'boolean') throw new InvalidPlanError(`${where}.${key}`, 'must be true or false');
  return value;
}

function strings(obj: Json, key: string, where: string, pattern?: RegExp, rule?: string): string[] | undefined {
  const value = obj[key];
  if (value === undefined) return undefined;
  if (!Array.isArray(value) || value.some((v) => typeof v !== 'string')) {
    throw new InvalidPlanError(`${where}.${key}`, 'must be a list of strings');
  }
  value.forEach((v: string, i) => {
    if (pattern && !pattern.test(v)) throw new InvalidPlanError(`${where}.${key}[${i}]`, rule ?? 'malformed');
  });
  return value as string[];
}

/**
 * A machine path: absolute, normalised, with no `..` segment, so that resolved under the host root it can never
 * leave it.
 */
export function machinePath(value: unknown, where: string): string {
  if (typeof value !== 'string' || value === '') throw new InvalidPlanError(where, 'must be a non-empty path');
  if (!value.startsWith('/')) throw new InvalidPlanError(where, 'must be an absolute path');
  if (value.includes('\0')) throw new InvalidPlanError(where, 'must not contain NUL');
  if (value.split('/').includes('..')) throw new InvalidPlanError(where, 'must not contain ".."');
  const normal = posix.normalize(value);
  if (normal === '/') throw new InvalidPlanError(where, 'must not be the root directory');
  return normal.replace(/\/+$/, '');
}

function uniqueNames<T extends { name: string }>(items: T[], where: string): void {
  const seen = new Set<string>();
  for (const item of items) {
    if (seen.has(item.name)) throw new InvalidPlanError(where, `duplicate name "${item.name}"`);
    seen.add(item.name);
  }
}

function parseFile(value: unknown, where: string): PlanFile {
  if (!isObject(value)) throw new InvalidPlanError(where, 'must be an object');
  only(value, where, ['path', 'content', 'permissions', 'uid', 'gid', 'directory', 'action']);
  const file: PlanFile = { path: machinePath(value['path'], `${where}.path`) };
  const content = string(value, 'content', where);
  if (content !== undefined) {
    if (!BASE64.test(content) || content.length % 4 !== 0) {
      throw new InvalidPlanError(`${where}.content`, 'must be base64');
    }
    file.content = content;
  }
  const permissions = string(value, 'permissions', where);
  if (permissions !== undefined) {
    if (!MODE.test(permissions)) throw new InvalidPlanError(`${where}.permissions`, 'must be an octal mode like "0644"');
    file.permissions = permissions;
  }
  const uid = count(value, 'uid', where, 0);
  const gid = count(value, 'gid', where, 0);
  const directory = flag(value, 'directory', where);
  if (uid !== undefined) file.uid = uid;
  if (gid !== undefined) file.gid = gid;
  if (directory !== undefined) file.directory = directory;
  const action = value['action'];
  if (action !== undefined) {
    if (action !== 'delete') throw new InvalidPlanError(`${where}.action`, 'must be "delete" when set');
    file.action = 'delete';
  }
  return file;
}

function parseCommand(value: unknown, where: string, periodic: boolean): PlanInstruction | PlanPeriodicInstruction {
  if (!isObject(value)) throw new InvalidPlanError(where, 'must be an object');
  const common = ['name', 'command', 'args', 'env', 'workingDirectory', 'timeoutSeconds'];
  only(value, where, periodic ? [...common, 'periodSeconds', 'saveStderrOutput'] : [...common, 'saveOutput']);
  const name = string(value, 'name', where, true)!;
  if (!NAME.test(name)) throw new InvalidPlanError(`${where}.name`, 'must be a DNS label (a-z, 0-9, -)');
  const parsed: PlanInstruction & PlanPeriodicInstruction = {
    name,
    command: string(value, 'command', where, true)!,
  };
  const args = strings(value, 'args', where);
  const env = strings(value, 'env', where, ENV, 'must be NAME=value');
  if (args) parsed.args = args;
  if (env) parsed.env = env;
  if (value['workingDirectory'] !== undefined) {
    parsed.workingDirectory = machinePath(value['workingDirectory'], `${where}.workingDirectory`);
  }
  const timeout = count(value, 'timeoutSeconds', where, 1);
  if (timeout !== undefined) parsed.timeoutSeconds = timeout;
  if (periodic) {
    const period = count(value, 'periodSeconds', where, 1);
    const stderr = flag(value, 'saveStderrOutput', where);
    if (period !== undefined) parsed.periodSeconds = period;
    if (stderr !== undefined) parsed.saveStderrOutput = stderr;
  } else {
    const save = flag(value, 'saveOutput', where);
    if (save !== undefined) parsed.saveOutput = save;
  }
  return parsed;
}

function parseProbe(value: unknown, where: string): PlanProbe {
  if (!isObject(value)) throw new InvalidPlanError(where, 'must be an object');
  only(value, where, ['initialDelaySeconds', 'timeoutSeconds', 'successThreshold', 'failureThreshold', 'httpGet']);
  const http = value['httpGet'];
  if (!isObject(http)) throw new InvalidPlanError(`${where}.httpGet`, 'is required');
  only(http, `${where}.httpGet`, ['url', 'insecure', 'caCert', 'clientCert', 'clientKey']);
  const url = string(http, 'url', `${where}.httpGet`, true)!;
  let parsedUrl: URL;
  try {
    parsedUrl = new URL(url);
  } catch {
    throw new InvalidPlanError(`${where}.httpGet.url`, 'must be a URL');
  }
  if (parsedUrl.protocol !== 'http:' && parsedUrl.protocol !== 'https:') {
    throw new InvalidPlanError(`${where}.httpGet.url`, 'must be http or https');
  }
  const probe: PlanProbe = { httpGet: { url } };
  const insecure = flag(http, 'insecure', `${where}.httpGet`);
  if (insecure !== undefined) probe.httpGet.insecure = insecure;
  for (const key of ['caCert', 'clientCert', 'clientKey'] as const) {
    if (http[key] !== undefined) probe.httpGet[key] = machinePath(http[key], `${where}.httpGet.${key}`);
  }
  if ((probe.httpGet.clientCert === undefined) !== (probe.httpGet.clientKey === undefined)) {
    throw new InvalidPlanError(`${where}.httpGet`, 'clientCert and clientKey go together');
  }
  for (const [key, min] of [
    ['initialDelaySeconds', 0],
    ['timeoutSeconds', 1],
    ['successThreshold', 1],
    ['failureThreshold', 1],
  ] as const) {
    const n = count(value, key, where, min);
    if (n !== undefined) probe[key] = n;
  }
  return probe;
}

function list<T>(plan: Json, key: string, parse: (v: unknown, where: string) => T): T[] | undefined {
  const value = plan[key];
  if (value === undefined) return undefined;
  if (!Array.isArray(value)) throw new InvalidPlanError(key, 'must be a list');
  return value.map((item, i) => parse(item, `${key}[${i}]`));
}

/** Parses and validates the raw `plan` bytes; throws InvalidPlanError naming the first rule broken. */
export function parsePlan(raw: Buffer | string): MachinePlan {
  let value: unknown;
  try {
    value = JSON.parse(raw.toString());
  } catch {
    throw new InvalidPlanError('plan', 'is not valid JSON');
  }
  if (!isObject(value)) throw new InvalidPlanError('plan', 'must be a JSON object');
  only(value, 'plan', ['files', 'instructions', 'periodicInstructions', 'probes']);
  const plan: MachinePlan = {};
  const files = list(value, 'files', parseFile);
  const instructions = list(value, 'instructions', (v, w) => parseCommand(v, w, false) as PlanInstruction);
  const periodic = list(value, 'periodicInstructions', (v, w) => parseCommand(v, w, true) as PlanPeriodicInstruction);
  if (files) plan.files = files;
  if (instructions) {
    uniqueNames(instructions, 'instructions');
    plan.instructions = instructions;
  }
  if (periodic) {
    uniqueNames(periodic, 'periodicInstructions');
    plan.periodicInstructions = periodic;
  }
  const probes = value['probes'];
  if (probes !== undefined) {
    if (!isObject(probes)) throw new InvalidPlanError('probes', 'must be an object of named probes');
    plan.probes = {};
    for (const [name, probe] of Object.entries(probes)) {
      if (!NAME.test(name)) throw new InvalidPlanError(`probes.${name}`, 'name must be a DNS label');
      plan.probes[name] = parseProbe(probe, `probes.${name}`);
    }
  }
  return plan;
}
