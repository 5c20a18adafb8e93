import { existsSync, mkdirSync, readdirSync, rmSync, statSync } from 'node:fs';
import { basename, join } from 'node:path';
import { savedEtcdSnapshotLine, type SavedEtcdSnapshot } from '@capstan/k3s-bootstrap';
import { HostRoot, readBeneath, removeBeneath, writeBeneath } from '@capstan/node-agent';
import { MAX_ETCD_SNAPSHOT_BYTES } from './dedicated-cluster-api.js';
import { isSimError } from './errors.js';
import {
  checkLeafCertificates,
  issueLeafCertificates,
  isCertificateService,
} from './k3s-leaf-certificates.js';
import type { K3sCertificateService } from '@capstan/api';
import { ObjectStore, ObjectStoreError, type ObjectStoreLocation } from './object-store.js';

// The sim's stand-in for the `k3s` binary's etcd commands on a server machine (docs/sim.md, docs/day2.md). A plan
// instruction runs /opt/bin/k3s inside the machine's confinement; the script hands the command line to the
// provider through a request file in the machine's root and prints the answer, because the cluster's etcd and API
// server run on the management host, outside that confinement. The provider treats every request as tenant input:
// bounded, parsed flag by flag, names checked, files read without following links.

/** Where K3s's install.sh puts the binary when /usr/local/bin is read-only, as it is in a sim machine. */
export const SIM_K3S_BINARY_PATH = '/opt/bin/k3s';
export const SIM_K3S_REQUEST_PATH = '/var/lib/capstan/sim/k3s-request';
export const SIM_K3S_RESPONSE_PATH = '/var/lib/capstan/sim/k3s-response';
/** How long the stand-in waits for the provider (a restore of a large snapshot takes a while). */
export const SIM_K3S_TIMEOUT_SECONDS = 600;
/** Where K3s keeps local snapshots on a server: what `location` names (the sim keeps the files outside the root). */
export const K3S_SNAPSHOT_DIR = '/var/lib/rancher/k3s/server/db/snapshots';

const MAX_REQUEST_BYTES = 64 * 1024;
const MAX_CA_BYTES = 64 * 1024;
const SNAPSHOT_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,199}$/;

/** The machine a command runs on, and what of the sim it may use. */
export interface K3sCommandHost {
  /** The machine's root (its filesystem) on the management host. */
  root: string;
  /** Where the sim keeps this machine's records, outside its root: local snapshots live here. */
  recordsDir: string;
  nodeName: string;
  server: boolean;
  saveSnapshot(file: string): Promise<number>;
  restoreSnapshot(file: string): Promise<void>;
  /** The names the server's serving certificate carries (for `certificate rotate`). */
  servingNames: { dnsNames: string[]; ipAddresses: string[] };
  /** After `certificate rotate` of the api-server: the cluster's API server serves a renewed certificate. */
  renewServingCertificate(): Promise<void>;
  /** `secrets-encrypt <command>` on the cluster: what it prints. */
  secretsEncrypt(command: 'status' | 'prepare' | 'rotate' | 'reencrypt'): Promise<string>;
  now?: () => Date;
}

export interface K3sCommandResult {
  code: number;
  output: string;
}

/** A command line that K3s would refuse: exit code 1 and this message. */
class UsageError extends Error {}

/**
 * The stand-in binary, written at boot below the machine's root: it waits for the server's lock (one command at a
 * time), hands `AWS_SECRET_ACCESS_KEY` and the arguments to the provider NUL-separated in a private file,
 * waits for the answer and prints it with the command's exit code.
 */
export function writeSimK3sBinary(root: string): void {
  const script = `#!/bin/sh
# Capstan sim: stands in for the k3s binary's etcd commands on a simulated server (docs/sim.md).
set -eu
state="\${CAPSTAN_HOST_ROOT%/}/var/lib/capstan/sim"
mkdir -p "$state"
# One command at a time per server (the request file has one slot): a certificate check waits for a snapshot. A
# kernel lock (flock), so a command killed while it waits (a periodic check stopped for a new plan) never leaves
# the server locked.
exec 9>"$state/k3s-request.flock"
if ! flock -w ${SIM_K3S_TIMEOUT_SECONDS} 9; then
  echo "k3s: another k3s command held this server for ${SIM_K3S_TIMEOUT_SECONDS}s" >&2
  exit 1
fi
id="$(date +%s%N)-$$"
umask 077
printf '%s\\0' "$id" "\${AWS_SECRET_ACCESS_KEY:-}" "$@" > "$state/k3s-request.tmp"
mv "$state/k3s-request.tmp" "$state/k3s-request"
waited=0
until [ -f "$state/k3s-response" ] && [ "$(head -n 1 "$state/k3s-response")" = "$id" ]; do
  if [ "$waited" -ge ${SIM_K3S_TIMEOUT_SECONDS * 10} ]; then
    rm -f "$state/k3s-request"
    echo "k3s: the server did not answer within ${SIM_K3S_TIMEOUT_SECONDS}s" >&2
    exit 1
  fi
  sleep 0.1
  waited=$((waited + 1))
done
code="$(sed -n 2p "$state/k3s-response")"
sed -n '3,$p' "$state/k3s-response"
rm -f "$state/k3s-response"
exit "$code"
`;
  writeBeneath(new HostRoot(root), SIM_K3S_BINARY_PATH, script, 0o755);
}

/**
 * Answers the machine's pending request, if there is one: reads it (bounded, never through a link), removes it, runs
 * the command and writes the answer where the waiting script reads it. Never throws for what the request says.
 */
export async function answerK3sRequest(host: K3sCommandHost): Promise<boolean> {
  const machine = new HostRoot(host.root);
  let raw: Buffer;
  try {
    raw = readBeneath(machine, SIM_K3S_REQUEST_PATH, MAX_REQUEST_BYTES);
  } catch {
    return false;
  }
  // Removed through the same checks as the read: a link planted on the way never leads the delete off the machine.
  removeBeneath(machine, SIM_K3S_REQUEST_PATH);
  const fields = raw.toString('utf8').split('\0');
  if (fields[fields.length - 1] === '') fields.pop();
  const [id, secretKey, ...argv] = fields;
  if (!id || !/^[0-9]+-[0-9]+$/.test(id)) return false;
  const result = await runK3sCommand(host, argv, secretKey ?? '');
  writeBeneath(machine, SIM_K3S_RESPONSE_PATH, `${id}\n${result.code}\n${result.output}\n`, 0o600);
  return true;
}

/** One `k3s` command line, as K3s would run it on the machine. */
export async function runK3sCommand(
  host: K3sCommandHost,
  argv: readonly string[],
  secretKey: string,
): Promise<K3sCommandResult> {
  try {
    const [command, sub, ...rest] = argv;
    if (!host.server)
      throw new UsageError(
        'k3s: etcd snapshots, cluster resets and certificate commands run on servers only; this machine is an agent',
      );
    if (command === 'etcd-snapshot' && sub === 'save')
      return await save(host, parseFlags(rest, SAVE_FLAGS), secretKey);
    if (command === 'etcd-snapshot' && (sub === 'delete' || sub === 'rm'))
      return await remove(host, parseFlags(rest, DELETE_FLAGS), secretKey);
    if (command === 'server')
      return await reset(
        host,
        parseFlags(
          [sub ?? '', ...rest].filter((a) => a !== ''),
          RESET_FLAGS,
        ),
        secretKey,
      );
    if (command === 'secrets-encrypt')
      return await secretsEncrypt(host, sub, parseFlags(rest, ENCRYPT_FLAGS));
    if (command === 'certificate' && sub === 'check') return check(host, parseFlags(rest, CHECK_FLAGS));
    if (command === 'certificate' && sub === 'rotate')
      return await rotate(host, parseFlags(rest, ROTATE_FLAGS));
    throw new UsageError(
      `k3s: the sim runs "k3s etcd-snapshot save|delete", "k3s server --cluster-reset", "k3s certificate check|rotate" and "k3s secrets-encrypt status|prepare|rotate|reencrypt" only, not "${[command, sub].filter(Boolean).join(' ').slice(0, 64)}"`,
    );
  } catch (error) {
    if (error instanceof UsageError || error instanceof ObjectStoreError)
      return { code: 1, output: error.message };
    if (isSimError(error)) return { code: 1, output: `k3s: ${error.message}` };
    return { code: 1, output: `k3s: ${(error as Error).message}` };
  }
}

interface ParsedFlags {
  values: Map<string, string>;
  /** Flags given more than once (`--service a --service b`, or `--service a,b`). */
  lists: Map<string, string[]>;
  switches: Set<string>;
  positional: string[];
}

type FlagSpec = { values: readonly string[]; switches: readonly string[]; repeated?: readonly string[] };

const S3_VALUES = ['s3-endpoint', 's3-bucket', 's3-folder', 's3-region', 's3-access-key', 's3-endpoint-ca'];
const S3_SWITCHES = ['s3', 's3-insecure', 's3-skip-ssl-verify'];
const SAVE_FLAGS: FlagSpec = { values: ['name', ...S3_VALUES], switches: S3_SWITCHES };
const DELETE_FLAGS: FlagSpec = { values: S3_VALUES, switches: S3_SWITCHES };
const ENCRYPT_FLAGS: FlagSpec = { values: [], switches: ['force', 'f', 'skip', 's'] };
const CHECK_FLAGS: FlagSpec = { values: ['output'], switches: [] };
const ROTATE_FLAGS: FlagSpec = { values: [], switches: [], repeated: ['service'] };
const RESET_FLAGS: FlagSpec = {
  values: ['cluster-reset-restore-path', ...S3_VALUES],
  switches: ['cluster-reset', ...S3_SWITCHES],
};

/** `--flag value`, `--flag=value` and switches; `--etcd-s3-*` is `--s3-*`, as `k3s server` spells them. Unknown: refused. */
function parseFlags(args: readonly string[], spec: FlagSpec): ParsedFlags {
  const parsed: ParsedFlags = { values: new Map(), lists: new Map(), switches: new Set(), positional: [] };
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (!arg.startsWith('-')) {
      parsed.positional.push(arg);
      continue;
    }
    const [rawName, inline] = arg.replace(/^--?/, '').split(/=(.*)/s, 2) as [string, string | undefined];
    const name = rawName.replace(/^etcd-s3/, 's3');
    if (spec.switches.includes(name)) {
      if (inline !== undefined && inline !== 'true' && inline !== 'false')
        throw new UsageError(`k3s: --${rawName} takes no value`);
      if (inline !== 'false') parsed.switches.add(name);
    } else if (spec.repeated?.includes(name) || spec.values.includes(name)) {
      const value = inline ?? args[++i];
      if (value === undefined) throw new UsageError(`k3s: --${rawName} needs a value`);
      if (spec.repeated?.includes(name))
        parsed.lists.set(name, [...(parsed.lists.get(name) ?? []), ...value.split(',').filter(Boolean)]);
      else parsed.values.set(name, value);
    } else {
      throw new UsageError(`k3s: unknown flag --${rawName.slice(0, 64)}`);
    }
  }
  return parsed;
}

/** The S3 store the flags name, or undefined without `--s3`; a missing or malformed setting is named. */
function storeOf(host: K3sCommandHost, flags: ParsedFlags, secretKey: string): ObjectStore | undefined {
  if (!flags.switches.has('s3')) return undefined;
  const need = (name: string) => {
    const value = flags.values.get(name);
    if (!value) throw new UsageError(`k3s: --s3 needs --${name}`);
    return value;
  };
  const endpoint = need('s3-endpoint');
  if (!/^[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?(:[0-9]{1,5})?$/.test(endpoint)) {
    throw new UsageError('k3s: --s3-endpoint must be host[:port], without a scheme or path');
  }
  const bucket = need('s3-bucket');
  if (!/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(bucket))
    throw new UsageError('k3s: --s3-bucket is not an S3 bucket name');
  const folder = flags.values.get('s3-folder');
  if (folder !== undefined && !/^[A-Za-z0-9!_.*'()/-]{0,512}$/.test(folder))
    throw new UsageError('k3s: --s3-folder holds characters S3 keys here may not');
  const accessKey = need('s3-access-key');
  if (!secretKey) throw new UsageError('k3s: --s3 needs the secret key in AWS_SECRET_ACCESS_KEY');
  const caPath = flags.values.get('s3-endpoint-ca');
  let caPem: string | undefined;
  if (caPath) {
    try {
      caPem = readBeneath(new HostRoot(host.root), caPath, MAX_CA_BYTES).toString('utf8');
    } catch {
      throw new UsageError(`k3s: --s3-endpoint-ca ${caPath.slice(0, 256)} cannot be read on this machine`);
    }
  }
  const location: ObjectStoreLocation = {
    endpoint,
    bucket,
    ...(folder && { folder }),
    ...(flags.values.get('s3-region') && { region: flags.values.get('s3-region')! }),
    insecure: flags.switches.has('s3-insecure'),
    skipTlsVerify: flags.switches.has('s3-skip-ssl-verify'),
    ...(caPem && { caPem }),
  };
  return new ObjectStore(location, { accessKey, secretKey });
}

const snapshotsDir = (host: K3sCommandHost) => join(host.recordsDir, 'snapshots');

function checkedName(name: string, what: string): string {
  if (!SNAPSHOT_NAME.test(name))
    throw new UsageError(
      `k3s: ${what} "${name.slice(0, 64)}" is not a snapshot name (letters, digits, . _ -)`,
    );
  return name;
}

/** `k3s etcd-snapshot save`: `<name>-<node>-<unix time>`, kept locally, and uploaded with `--s3`. */
async function save(host: K3sCommandHost, flags: ParsedFlags, secretKey: string): Promise<K3sCommandResult> {
  const store = storeOf(host, flags, secretKey);
  const now = (host.now ?? (() => new Date()))();
  const fileName = checkedName(
    `${flags.values.get('name') ?? 'on-demand'}-${host.nodeName}-${Math.floor(now.getTime() / 1000)}`,
    '--name',
  );
  const dir = snapshotsDir(host);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const file = join(dir, fileName);
  const sizeBytes = await host.saveSnapshot(file);
  let location = `file://${K3S_SNAPSHOT_DIR}/${fileName}`;
  if (store) {
    try {
      const key = await store.putFile(fileName, file);
      location = `s3://${store.location.bucket}/${key}`;
    } finally {
      // K3s keeps the local copy too; the sim keeps only what it must (the management host's disk).
      rmSync(file, { force: true });
    }
  }
  const saved: SavedEtcdSnapshot = { fileName, location, sizeBytes, createdAt: now.toISOString() };
  return {
    code: 0,
    output: `Snapshot ${fileName} saved (${sizeBytes} bytes) to ${location}\n${savedEtcdSnapshotLine(saved)}`,
  };
}

/** `k3s etcd-snapshot delete <name>...`: from S3 with `--s3`, else from the machine. A file already gone is fine. */
async function remove(
  host: K3sCommandHost,
  flags: ParsedFlags,
  secretKey: string,
): Promise<K3sCommandResult> {
  const store = storeOf(host, flags, secretKey);
  if (flags.positional.length === 0)
    throw new UsageError('k3s: etcd-snapshot delete needs the snapshot names');
  const lines: string[] = [];
  for (const name of flags.positional.map((n) => checkedName(basename(n), 'snapshot'))) {
    if (store) {
      await store.delete(name).catch((error: unknown) => {
        if (!(error instanceof ObjectStoreError && error.reason === 'S3NoSuchKey')) throw error;
      });
    } else {
      rmSync(join(snapshotsDir(host), name), { force: true });
    }
    lines.push(`Snapshot ${name} deleted`);
  }
  return { code: 0, output: lines.join('\n') };
}

/**
 * `k3s server --cluster-reset --cluster-reset-restore-path=<file>`: the snapshot (downloaded with `--etcd-s3`, else
 * the machine's own) replaces the cluster's etcd data, and the server starts again on it. K3s then exits asking for
 * a restart without `--cluster-reset`; the sim's server is already back.
 */
async function reset(host: K3sCommandHost, flags: ParsedFlags, secretKey: string): Promise<K3sCommandResult> {
  if (!flags.switches.has('cluster-reset'))
    throw new UsageError('k3s: the sim runs "k3s server" only with --cluster-reset');
  const path = flags.values.get('cluster-reset-restore-path');
  if (!path)
    throw new UsageError(
      'k3s: --cluster-reset without --cluster-reset-restore-path would only reset membership; the sim restores snapshots only',
    );
  const name = checkedName(basename(path), '--cluster-reset-restore-path');
  const store = storeOf(host, flags, secretKey);
  let file = join(snapshotsDir(host), name);
  let downloaded = false;
  if (store) {
    mkdirSync(host.recordsDir, { recursive: true, mode: 0o700 });
    file = join(host.recordsDir, `restore-${name}`);
    await store.getFile(name, file, MAX_ETCD_SNAPSHOT_BYTES);
    downloaded = true;
  } else if (!existsSync(file)) {
    const kept = existsSync(snapshotsDir(host)) ? readdirSync(snapshotsDir(host)).length : 0;
    throw new UsageError(
      `k3s: snapshot ${name} is not on this server (${kept} local snapshot(s) here); restore it on the server that saved it, or from S3`,
    );
  }
  try {
    const size = statSync(file).size;
    await host.restoreSnapshot(file);
    return {
      code: 0,
      output: `Managed etcd cluster membership has been reset, restored from ${name} (${size} bytes)`,
    };
  } finally {
    if (downloaded) rmSync(file, { force: true });
  }
}

/** `k3s certificate check [--output text|json]`: the server's leaf certificates and their expiry. */
function check(host: K3sCommandHost, flags: ParsedFlags): K3sCommandResult {
  const output = flags.values.get('output') ?? 'text';
  if (output !== 'text' && output !== 'json' && output !== 'table')
    throw new UsageError('k3s: --output must be text, table or json');
  const reports = checkLeafCertificates(host.root, (host.now ?? (() => new Date()))());
  if (output === 'json') return { code: 0, output: JSON.stringify(reports) };
  return {
    code: 0,
    output: reports
      .map((r) => `${r.filename}: ${r.status}, expires ${r.expiryTime} (${r.residualTime})`)
      .join('\n'),
  };
}

/**
 * `k3s certificate rotate [--service s]...`: new leaf certificates for the services (all when none is named), as K3s
 * issues them on the next start. The sim's one API server per cluster reloads its serving certificate from file, so
 * the server keeps answering; a real K3s server is stopped around the command (the plan does that).
 */
async function rotate(host: K3sCommandHost, flags: ParsedFlags): Promise<K3sCommandResult> {
  const named = flags.lists.get('service') ?? [];
  const unknown = named.filter((s) => !isCertificateService(s));
  if (unknown.length > 0)
    throw new UsageError(`k3s: unknown certificate service "${unknown[0]!.slice(0, 64)}"`);
  const services = named.length > 0 ? (named as K3sCertificateService[]) : undefined;
  const renewed = await issueLeafCertificates(host.root, {
    servingNames: host.servingNames,
    ...(services && { services }),
    ...(host.now && { now: host.now() }),
  });
  if (renewed.includes('api-server')) await host.renewServingCertificate();
  return {
    code: 0,
    output:
      renewed.length > 0
        ? `Certificates rotated for ${renewed.join(', ')}; restart k3s to load them (the sim's server already has)`
        : 'No certificates of the named services are kept on this server',
  };
}

const ENCRYPT_COMMANDS = ['status', 'prepare', 'rotate', 'reencrypt'] as const;

/**
 * `k3s secrets-encrypt status|prepare|rotate|reencrypt`: one stage of a key rotation on the cluster (its API server
 * restarts after each, as K3s does), or where it stands. A stage out of order is refused by the stage it needs.
 */
async function secretsEncrypt(
  host: K3sCommandHost,
  sub: string | undefined,
  flags: ParsedFlags,
): Promise<K3sCommandResult> {
  const command = ENCRYPT_COMMANDS.find((c) => c === sub);
  if (!command)
    throw new UsageError(
      `k3s: secrets-encrypt takes ${ENCRYPT_COMMANDS.join(', ')}, not "${(sub ?? '').slice(0, 64)}"`,
    );
  if (flags.positional.length > 0) throw new UsageError(`k3s: secrets-encrypt ${command} takes no arguments`);
  return { code: 0, output: await host.secretsEncrypt(command) };
}
