import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** Where the real node's pods have their memory cgroups (cgroup v1, the kubelet's cgroupfs driver under its root). */
const KUBEPODS = ['/sys/fs/cgroup/memory/capstan-node/kubepods', '/sys/fs/cgroup/capstan-node/kubepods'];

/** Each pod's folder in the memory hierarchy, by pod UID (`pod<uid>`, under its QoS class's folder or not). */
function podCgroups(): Map<string, string> {
  const found = new Map<string, string>();
  const walk = (dir: string, depth: number) => {
    if (depth > 2 || !existsSync(dir)) return;
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (!entry.isDirectory()) continue;
      if (entry.name.startsWith('pod')) found.set(entry.name.slice(3), join(dir, entry.name));
      else walk(join(dir, entry.name), depth + 1);
    }
  };
  for (const root of KUBEPODS) walk(root, 0);
  return found;
}

/**
 * A pod's working set in bytes, as the kubelet computes it (and an OOM kill compares with the limit): usage less the
 * inactive file cache, which the kernel gives back under pressure.
 */
function workingSet(dir: string): number | undefined {
  try {
    const v2 = existsSync(join(dir, 'memory.current'));
    const usage = Number(readFileSync(join(dir, v2 ? 'memory.current' : 'memory.usage_in_bytes'), 'utf8'));
    const stat = readFileSync(join(dir, 'memory.stat'), 'utf8');
    const inactive = Number(
      new RegExp(`^${v2 ? 'inactive_file' : 'total_inactive_file'} (\\d+)$`, 'm').exec(stat)?.[1] ?? 0,
    );
    return Math.max(0, usage - inactive);
  } catch {
    return undefined;
  }
}

/** Samples every pod's working set and keeps the highest seen per pod UID, until stopped. */
export class PodMemorySampler {
  private readonly peaks = new Map<string, number>();
  private readonly timer: NodeJS.Timeout;

  constructor(intervalMs = 1000) {
    this.timer = setInterval(() => this.sample(), intervalMs);
    this.timer.unref();
    this.sample();
  }

  /** The working set of each pod now, by UID. */
  now(): Map<string, number> {
    const current = new Map<string, number>();
    for (const [uid, dir] of podCgroups()) {
      const bytes = workingSet(dir);
      if (bytes !== undefined) current.set(uid, bytes);
    }
    return current;
  }

  private sample(): void {
    for (const [uid, bytes] of this.now()) this.peaks.set(uid, Math.max(bytes, this.peaks.get(uid) ?? 0));
  }

  peak(uid: string): number | undefined {
    return this.peaks.get(uid);
  }

  stop(): void {
    clearInterval(this.timer);
  }
}
