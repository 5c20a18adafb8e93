import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { executable, goBuild, onPath } from './binaries.js';
import { TestEnvironmentError } from './errors.js';
import { cacheRoot, repoRoot } from './repo.js';

/** Upstream Cluster API's commands the compatibility suite and the side-by-side benchmark run, by their main package. */
export const UPSTREAM_COMMANDS = {
  core: 'sigs.k8s.io/cluster-api/core',
  'kubeadm-bootstrap': 'sigs.k8s.io/cluster-api/bootstrap/kubeadm',
  'kubeadm-control-plane': 'sigs.k8s.io/cluster-api/controlplane/kubeadm',
  /** The docker provider, whose in-memory backend stands in for the workload clusters. */
  docker: 'sigs.k8s.io/cluster-api/test/infrastructure/docker',
  clusterctl: 'sigs.k8s.io/cluster-api/cmd/clusterctl',
} as const;
export type UpstreamCommand = keyof typeof UPSTREAM_COMMANDS;

export interface UpstreamClusterApi {
  /** The release tools/cluster-api pins, e.g. v1.14.2. */
  version: string;
  binaries: Record<UpstreamCommand, string>;
  /** The release's sources in the Go module cache: its CRDs and webhook manifests are read from there. */
  sourceDir: string;
  /** The test module's sources (the docker provider's CRDs). */
  testSourceDir: string;
}

const TOOL_MODULE = 'cluster-api';

function pinnedVersion(): string {
  const goMod = readFileSync(join(repoRoot(), 'tools', TOOL_MODULE, 'go.mod'), 'utf8');
  const match = /sigs\.k8s\.io\/cluster-api (v\S+)/.exec(goMod);
  if (!match?.[1]) throw new TestEnvironmentError(`tools/${TOOL_MODULE}/go.mod names no sigs.k8s.io/cluster-api version`);
  return match[1];
}

function moduleDir(module: string): string {
  const go = onPath('go');
  if (!go) throw new TestEnvironmentError('Go is needed to find the upstream Cluster API sources', { module });
  return execFileSync(go, ['list', '-m', '-f', '{{.Dir}}', module], {
    cwd: join(repoRoot(), 'tools', TOOL_MODULE),
    encoding: 'utf8',
  }).trim();
}

/**
 * Upstream Cluster API of the pinned release, built once from the Go module proxy through tools/cluster-api (the
 * upstream modules replace their api module with a local path, so `go install` refuses them) and cached next to
 * the test environment's binaries.
 */
export function resolveUpstreamClusterApi(log: (line: string) => void = () => undefined): UpstreamClusterApi {
  const version = pinnedVersion();
  const ldflags = [
    '-s',
    '-w',
    `-X sigs.k8s.io/cluster-api/version.gitVersion=${version}`,
    '-X sigs.k8s.io/cluster-api/version.gitTreeState=clean',
  ].join(' ');
  const binaries = Object.fromEntries(
    Object.entries(UPSTREAM_COMMANDS).map(([name, pkg]) => {
      const target = join(cacheRoot(), 'bin', 'cluster-api', version, name);
      const path = executable(target)
        ? target
        : goBuild({ toolModule: TOOL_MODULE, pkg, ldflags, target, what: `upstream Cluster API ${name} ${version}` }, log);
      return [name, path];
    }),
  ) as Record<UpstreamCommand, string>;
  return {
    version,
    binaries,
    sourceDir: moduleDir('sigs.k8s.io/cluster-api'),
    testSourceDir: moduleDir('sigs.k8s.io/cluster-api/test'),
  };
}
