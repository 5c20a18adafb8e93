// Pure parts the benchmarks share: reading /proc/<pid>/stat, /proc/<pid>/status and /proc/<pid>/smaps_rollup, and
// Prometheus text (from @capstan/testing).

/** utime + stime (clock ticks) from the text of /proc/<pid>/stat (fields 14 and 15; the name may hold spaces). */
export function procStatCpuTicks(stat: string): number {
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // After the name: field 3 (state) is index 0, so utime (14) is index 11 and stime (15) index 12.
  return Number(fields[11]) + Number(fields[12]);
}

function statusKiB(status: string, field: string): number | undefined {
  const match = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status);
  return match ? Number(match[1]) : undefined;
}

/** Peak resident set (VmHWM, KiB) from the text of /proc/<pid>/status. */
export function vmHwmKiB(status: string): number | undefined {
  return statusKiB(status, 'VmHWM');
}

/** Current resident set (VmRSS, KiB) from the text of /proc/<pid>/status. */
export function vmRssKiB(status: string): number | undefined {
  return statusKiB(status, 'VmRSS');
}

/**
 * Proportional set size (Pss, KiB) from the text of /proc/<pid>/smaps_rollup: the resident pages, each shared page
 * divided by the number of processes that map it. Summed over processes it counts a page they share (the node binary's
 * code in every Capstan service) once, where a sum of RSS counts it in each.
 */
export function pssKiB(smapsRollup: string): number | undefined {
  return statusKiB(smapsRollup, 'Pss');
}

/**
 * MemAvailable (KiB) from the text of /proc/meminfo: the kernel's estimate of the memory that new work can have without
 * swapping (free pages plus the page cache and reclaimable slab it can give back).
 */
export function memAvailableKiB(meminfo: string): number | undefined {
  return statusKiB(meminfo, 'MemAvailable');
}

// The Prometheus text parts live in @capstan/testing, which the core's bench shares.
export { apiserverRequestsByResource, sumMetric, sumMetricBy } from '@capstan/testing';

/** `after - before` per key (a key missing before counts from 0); keys whose difference is 0 are left out. */
export function countsSince(before: Record<string, number>, after: Record<string, number>): Record<string, number> {
  const diff: Record<string, number> = {};
  for (const [key, value] of Object.entries(after)) {
    const d = value - (before[key] ?? 0);
    if (d !== 0) diff[key] = d;
  }
  return diff;
}

/** A klog line at error severity: `E1124 13:45:00.123456   4242 file.go:12] message`. */
const KLOG_ERROR = /^E\d{4} [\d:.]+\s+\d+ [^\]]+\] (.*)$/;

/**
 * The error lines of one log (pino `"level":50` JSON or klog `E` lines), their count and the most frequent messages,
 * with numbered object names (`scale-12`, `bench-3`) made one (`scale-N`).
 */
export function logErrorSummary(text: string, most = 4): { count: number; top: [string, number][] } {
  const kinds = new Map<string, number>();
  let count = 0;
  for (const line of text.split('\n')) {
    let msg: string | undefined;
    if (line.includes('"level":50')) {
      msg = line;
      try {
        const parsed = JSON.parse(line) as { msg?: string; err?: { message?: string } };
        msg = `${parsed.msg ?? ''}${parsed.err?.message ? `: ${parsed.err.message}` : ''}`;
      } catch {
        // not JSON: keep the line
      }
    } else {
      const klog = KLOG_ERROR.exec(line)?.[1];
      // Its message and err value; the key/values after them (object names, reconcile ids) differ on every line.
      const parts = klog === undefined ? undefined : /^("[^"]*")(?: err="((?:[^"\\]|\\.)*)")?/.exec(klog);
      msg = parts ? `${parts[1]}${parts[2] !== undefined ? `: ${parts[2]}` : ''}` : klog;
    }
    if (msg === undefined) continue;
    count++;
    msg = msg.replace(/\b(scale|bench)-\d+\b/g, '$1-N').slice(0, 240);
    kinds.set(msg, (kinds.get(msg) ?? 0) + 1);
  }
  return { count, top: [...kinds].sort((a, b) => b[1] - a[1]).slice(0, most) };
}
