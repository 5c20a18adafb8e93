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

/** Which service each pod (by UID) belongs to, refreshed while pods come and go, so a deleted pod's peak still counts. */
export class PodServices {
  readonly byUid = new Map<string, string>();
  private timer: NodeJS.Timeout | undefined;

  /** `kubectl` runs kubectl against the management cluster and resolves with its stdout. */
  constructor(private readonly kubectl: (...args: string[]) => Promise<string>) {}

  async refresh(): Promise<void> {
    const template =
      '{range .items[*]}{.metadata.uid} {.metadata.labels.app\\.kubernetes\\.io/name}{.metadata.labels.k8s-app}{"\\n"}{end}';
    for (const line of (await this.kubectl('get', 'pods', '-A', '-o', `jsonpath=${template}`)).split('\n')) {
      const [uid, service] = line.trim().split(' ');
      if (uid && service) this.byUid.set(uid, service);
    }
  }

  start(intervalMs = 5000): void {
    this.timer = setInterval(() => void this.refresh().catch(() => undefined), intervalMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }
}

/** The highest working set of any pod of each service: at this moment (`now`), else the peak so far. */
export function memoryByService(
  sampler: PodMemorySampler,
  pods: PodServices,
  now: boolean,
): Map<string, number> {
  const bytes = new Map<string, number>();
  const sample = now ? sampler.now() : undefined;
  for (const [uid, service] of pods.byUid) {
    const value = sample ? sample.get(uid) : sampler.peak(uid);
    if (value !== undefined) bytes.set(service, Math.max(value, bytes.get(service) ?? 0));
  }
  return bytes;
}
