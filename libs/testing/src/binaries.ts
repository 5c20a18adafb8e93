import { execFileSync, spawnSync } from 'node:child_process';
import { accessSync, constants, existsSync, mkdirSync, readdirSync, readFileSync, renameSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { TestEnvironmentError } from './errors.js';
import { cacheRoot, repoRoot } from './repo.js';

export interface ControlPlaneBinaries {
  etcd: string;
  kubeApiserver: string;
  /** The Kubernetes release the apiserver reports, e.g. v1.34.4. */
  kubernetesVersion: string;
}

/** etcd older than this cannot serve a current kube-apiserver (Debian ships 3.4). */
const MIN_ETCD = [3, 5, 13] as const;

/** Whether `path` is a file this process may run. */
export function executable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

export function onPath(name: string): string | undefined {
  for (const dir of (process.env['PATH'] ?? '').split(delimiter)) {
    if (dir && executable(join(dir, name))) return join(dir, name);
  }
  return undefined;
}

/** A wrapper module under tools/: `etcd`, `kube-apiserver` (the main minor) or `kube-apiserver-<minor>`. */
type ToolModule = 'etcd' | 'kube-apiserver' | `kube-apiserver-${string}`;

function requiredVersion(module: ToolModule): string {
  const goMod = readFileSync(join(repoRoot(), 'tools', module, 'go.mod'), 'utf8');
  const pattern = module === 'etcd' ? /go\.etcd\.io\/etcd\/server\/v3 (v\S+)/ : /k8s\.io\/kubernetes (v\S+)/;
  const match = pattern.exec(goMod);
  if (!match?.[1]) throw new TestEnvironmentError(`tools/${module}/go.mod names no version`);
  return match[1];
}

/**
 * Every pinned kube-apiserver version (the main one first), by the tools/ module that builds it: the sim swaps a
 * machine's API server binary between them when a plan installs another Kubernetes version.
 */
export function pinnedKubeApiserverVersions(): { version: string; module: ToolModule }[] {
  const modules = readdirSync(join(repoRoot(), 'tools'))
    .filter((name) => name === 'kube-apiserver' || name.startsWith('kube-apiserver-'))
    .sort((a, b) => (a === 'kube-apiserver' ? -1 : b === 'kube-apiserver' ? 1 : a.localeCompare(b)));
  return modules.map((module) => ({ module: module as ToolModule, version: requiredVersion(module as ToolModule) }));
}

/** The kube-apiserver binary of a pinned version (by minor: `v1.35` or `v1.35.4+k3s1` pick v1.35.4); built once. */
export function resolveKubeApiserverVersion(
  wanted: string,
  log: (line: string) => void = () => undefined,
): { path: string; version: string } | undefined {
  const minor = /^v?(\d+)\.(\d+)/.exec(wanted);
  if (!minor) return undefined;
  const pinned = pinnedKubeApiserverVersions().find(({ version }) =>
    version.startsWith(`v${minor[1]}.${minor[2]}.`),
  );
  if (!pinned) return undefined;
  const cached = cachedPath('kube-apiserver', pinned.version);
  const path = executable(cached) ? cached : build('kube-apiserver', pinned.version, log, pinned.module);
  return { path, version: pinned.version };
}

export function parseEtcdVersion(output: string): [number, number, number] | undefined {
  const match = /etcd Version:\s*(\d+)\.(\d+)\.(\d+)/.exec(output);
  return match ? [Number(match[1]), Number(match[2]), Number(match[3])] : undefined;
}

export function etcdIsRecentEnough(version: readonly number[]): boolean {
  for (let i = 0; i < 3; i++) {
    if (version[i]! !== MIN_ETCD[i]) return version[i]! > MIN_ETCD[i]!;
  }
  return true;
}

function usableEtcd(path: string): boolean {
  const result = spawnSync(path, ['--version'], { encoding: 'utf8' });
  const version = parseEtcdVersion(`${result.stdout}`);
  return version !== undefined && etcdIsRecentEnough(version);
}

function fromAssets(name: string): string | undefined {
  const assets = process.env['KUBEBUILDER_ASSETS'];
  if (assets && executable(join(assets, name))) return join(assets, name);
  return undefined;
}

/** A binary built from a wrapper module under tools/. */
type ToolBinary = 'kube-apiserver' | KubeComponent | 'kubectl' | 'etcd' | 'etcdutl';

/** Kubernetes commands the kube-apiserver wrapper module pins next to kube-apiserver. */
export type KubeComponent = 'kube-controller-manager' | 'kube-scheduler' | 'kubelet' | 'kube-proxy';

function cachedPath(module: ToolBinary, version: string): string {
  return join(cacheRoot(), 'bin', module, version, module);
}


function versionLdflags(version: string): string {
  const [major, minor] = version.replace(/^v/, '').split('.');
  const flags = ['-s', '-w'];
  for (const pkg of ['k8s.io/component-base/version', 'k8s.io/client-go/pkg/version']) {
    flags.push(
      `-X ${pkg}.gitVersion=${version}`,
      `-X ${pkg}.gitMajor=${major}`,
      `-X ${pkg}.gitMinor=${minor}`,
      `-X ${pkg}.gitTreeState=clean`,
      `-X ${pkg}.buildDate=1970-01-01T00:00:00Z`,
    );
  }
  return flags.join(' ');
}

/** One Go main package of a wrapper module under tools/, built into the cache. */
export interface GoBuild {
  /** The folder under tools/ whose go.mod pins it. */
  toolModule: string;
  /** The main package (`.` for the module itself). */
  pkg: string;
  ldflags: string;
  /** Where the binary goes. */
  target: string;
  /** What it is, for messages: `kube-apiserver v1.34.4`. */
  what: string;
}

/** Builds one main package of a wrapper module under tools/; a partial build never lands under the final name. */
export function goBuild(spec: GoBuild, log: (line: string) => void): string {
  const go = onPath('go');
  if (!go) {
    throw new TestEnvironmentError(
      `${spec.what} was not found and Go is not installed to build it. ` +
        `Either set KUBEBUILDER_ASSETS to a folder holding etcd (>= 3.5.13) and kube-apiserver, ` +
        `put them on PATH, or install Go (https://go.dev/dl) so the test environment can build them once.`,
      { what: spec.what },
    );
  }
  mkdirSync(join(spec.target, '..'), { recursive: true });
  log(`building ${spec.what} from Go modules (once; cached in ${spec.target})`);
  const partial = `${spec.target}.partial-${process.pid}`;
  try {
    execFileSync(go, ['build', '-trimpath', '-ldflags', spec.ldflags, '-o', partial, spec.pkg], {
      cwd: join(repoRoot(), 'tools', spec.toolModule),
      env: { ...process.env, CGO_ENABLED: '0' },
      stdio: ['ignore', 'inherit', 'inherit'],
    });
  } catch (error) {
    throw new TestEnvironmentError(`building ${spec.what} with Go failed: ${(error as Error).message}`, {
      what: spec.what,
    });
  }
  // Two processes building one binary at once (setup and a test run) each land a whole file.
  renameSync(partial, spec.target);
  return spec.target;
}

function build(
  module: ToolBinary,
  version: string,
  log: (line: string) => void,
  // The controller manager and the scheduler have no module of their own: the kube-apiserver module pins them too.
  toolModule: ToolModule = module === 'etcd' ? 'etcd' : 'kube-apiserver',
): string {
  return goBuild(
    {
      toolModule,
      pkg: module === 'etcd' ? '.' : `k8s.io/kubernetes/cmd/${module}`,
      ldflags: module === 'etcd' ? '-s -w' : versionLdflags(version),
      target: cachedPath(module, version),
      what: `${module} ${version}`,
    },
    log,
  );
}

/**
 * Finds etcd and kube-apiserver: KUBEBUILDER_ASSETS, then PATH, then the build cache; builds them from the
 * pinned Go modules when none of those has them.
 */
export function resolveControlPlaneBinaries(log: (line: string) => void = () => undefined): ControlPlaneBinaries {
  const kubernetesVersion = requiredVersion('kube-apiserver');
  const etcdVersion = requiredVersion('etcd');
  const etcdCandidates = [fromAssets('etcd'), onPath('etcd'), cachedPath('etcd', etcdVersion)];
  const etcd =
    etcdCandidates.find((path) => path && executable(path) && usableEtcd(path)) ?? build('etcd', etcdVersion, log);
  const apiCandidates = [fromAssets('kube-apiserver'), onPath('kube-apiserver'), cachedPath('kube-apiserver', kubernetesVersion)];
  const kubeApiserver =
    apiCandidates.find((path) => path && executable(path)) ?? build('kube-apiserver', kubernetesVersion, log);
  return { etcd, kubeApiserver, kubernetesVersion };
}

/**
 * etcdutl of the pinned etcd release (the sim restores a workload cluster's etcd snapshot with it, as K3s's cluster
 * reset does): KUBEBUILDER_ASSETS, PATH, the build cache, else built from the etcd wrapper module, which pins it as a
 * tool.
 */
export function resolveEtcdutl(log: (line: string) => void = () => undefined): string {
  const version = requiredVersion('etcd');
  const candidates = [fromAssets('etcdutl'), onPath('etcdutl'), cachedPath('etcdutl', version)];
  return (
    candidates.find((path) => path && executable(path)) ??
    goBuild(
      { toolModule: 'etcd', pkg: 'go.etcd.io/etcd/etcdutl/v3', ldflags: '-s -w', target: cachedPath('etcdutl', version), what: `etcdutl ${version}` },
      log,
    )
  );
}

/**
 * The test environment's S3-compatible server (tools/s3-server: rclone's gofakes3, signatures checked), built once
 * into the cache; its version is the pinned gofakes3 module's.
 */
export function resolveS3Server(log: (line: string) => void = () => undefined): string {
  const version = /github\.com\/rclone\/gofakes3 (v\S+)/.exec(
    readFileSync(join(repoRoot(), 'tools', 's3-server', 'go.mod'), 'utf8'),
  )?.[1];
  if (!version) throw new TestEnvironmentError('tools/s3-server/go.mod names no gofakes3 version');
  const target = join(cacheRoot(), 'bin', 's3-server', version, 's3-server');
  return executable(target)
    ? target
    : goBuild(
        { toolModule: 's3-server', pkg: '.', ldflags: '-s -w', target, what: `s3-server ${version}` },
        log,
      );
}

/**
 * kube-controller-manager or kube-scheduler of the main pinned release: KUBEBUILDER_ASSETS, PATH, the build cache, else
 * built from the kube-apiserver wrapper module, which pins them. The management environment runs the controller
 * manager (garbage collector, namespace and RBAC aggregation controllers); the sim's dedicated workload clusters run
 * both. The version skew policy lets them serve an API server up to one minor newer, so one build serves every
 * pinned kube-apiserver.
 */
export function resolveKubeComponent(component: KubeComponent, log: (line: string) => void = () => undefined): string {
  const version = requiredVersion('kube-apiserver');
  const candidates = [fromAssets(component), onPath(component), cachedPath(component, version)];
  return candidates.find((path) => path && executable(path)) ?? build(component, version, log);
}

/**
 * kubectl of the main pinned release, built once from the kube-apiserver wrapper module. Never the one on PATH: what a
 * machine has there may be another release or a wrapper (Google Cloud SDK's dispatcher), and the tests that use it
 * (the dashboard's downloaded kubeconfig) should meet the same kubectl everywhere.
 */
export function resolveKubectl(log: (line: string) => void = () => undefined): string {
  const version = requiredVersion('kube-apiserver');
  const cached = cachedPath('kubectl', version);
  return executable(cached) ? cached : build('kubectl', version, log);
}

export function resolveNatsServer(): string {
  const found = onPath('nats-server') ?? (existsSync('/usr/sbin/nats-server') ? '/usr/sbin/nats-server' : undefined);
  if (!found) {
    throw new TestEnvironmentError(
      'nats-server was not found. Install it (Debian: `apt-get install nats-server`; `npm run setup` does this), ' +
        'or point CAPSTAN_TEST_NATS_URL at a NATS server with JetStream enabled.',
    );
  }
  return found;
}

/** The static Go programs the real node runs as images of their own (tools/pause, tools/coredns). */
export type NodeImageProgram = 'pause' | 'coredns';

/**
 * A node image's program, built once into the cache from its tools/ module. CoreDNS's version is the pinned module's;
 * pause is the project's own program, `v1` until it changes.
 */
export function resolveNodeImageProgram(program: NodeImageProgram, log: (line: string) => void = () => undefined): { path: string; version: string } {
  const version =
    program === 'coredns'
      ? /github\.com\/coredns\/coredns (v\S+)/.exec(readFileSync(join(repoRoot(), 'tools', 'coredns', 'go.mod'), 'utf8'))?.[1]
      : 'v1';
  if (!version) throw new TestEnvironmentError('tools/coredns/go.mod names no CoreDNS version');
  const target = join(cacheRoot(), 'bin', program, version, program);
  const path = executable(target)
    ? target
    : goBuild({ toolModule: program, pkg: '.', ldflags: '-s -w', target, what: `${program} ${version}` }, log);
  return { path, version };
}
