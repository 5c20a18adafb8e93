import type { StatusVersion } from '../types/common.js';

const SEMVER = /^v?(\d+)\.(\d+)\.(\d+)(?:-([0-9A-Za-z.-]+))?(?:\+[0-9A-Za-z.-]+)?$/;

/** Orders Kubernetes versions (`v1.31.4`, `v1.31.4+k3s1`) by semver; unparsable ones sort by text, last. */
export function compareVersions(a: string, b: string): number {
  const ma = SEMVER.exec(a);
  const mb = SEMVER.exec(b);
  if (!ma || !mb) return ma ? -1 : mb ? 1 : a < b ? -1 : a > b ? 1 : 0;
  for (const i of [1, 2, 3]) {
    const d = Number(ma[i]) - Number(mb[i]);
    if (d !== 0) return d;
  }
  // A pre-release sorts before its release.
  if (ma[4] !== mb[4]) return ma[4] === undefined ? 1 : mb[4] === undefined ? -1 : ma[4] < mb[4] ? -1 : 1;
  return a < b ? -1 : a > b ? 1 : 0;
}

/** `status.versions`: each version the machines run and how many run it, oldest first. */
export function versionCounts(versions: readonly (string | undefined)[]): StatusVersion[] {
  const counts = new Map<string, number>();
  for (const v of versions) if (v) counts.set(v, (counts.get(v) ?? 0) + 1);
  return [...counts.entries()]
    .sort(([a], [b]) => compareVersions(a, b))
    .map(([version, replicas]) => ({ version, replicas }));
}
