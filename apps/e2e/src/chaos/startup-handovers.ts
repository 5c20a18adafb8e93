import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

// How much the replicas' shard membership moved clusters while the services started together: read from the
// services' JSON logs up to the first fault (no kill has restarted a replica yet). A replica logs its view each
// time it changes; its first view is its join, every further one a hand-over of some clusters. A reconcile cut by
// a hand-over logs that it stopped.

export const MEMBERSHIP_CHANGED = 'shard membership changed';
export const RECONCILE_MOVED = 'reconcile stopped: the cluster moved to another replica';

export interface StartupHandovers {
  /** Log lines up to this moment (epoch ms) are counted. */
  until: number;
  /** Views adopted after the first, summed over the replicas. */
  viewChanges: number;
  /** Reconciles stopped because their cluster moved. */
  reconcilesMoved: number;
  /** The same two per replica log (`<service>-<replica>`), for replicas with any. */
  byReplica: Record<string, { viewChanges: number; reconcilesMoved: number }>;
}

/** Counts the start-up hand-overs in every `*.log` of `logDir` written before `until`. */
export function countStartupHandovers(logDir: string, until: number): StartupHandovers {
  const counts: StartupHandovers = { until, viewChanges: 0, reconcilesMoved: 0, byReplica: {} };
  if (!existsSync(logDir)) return counts;
  for (const file of readdirSync(logDir).filter((f) => f.endsWith('.log'))) {
    let views = 0;
    let moved = 0;
    for (const line of readFileSync(join(logDir, file), 'utf8').split('\n')) {
      if (!line.includes(MEMBERSHIP_CHANGED) && !line.includes(RECONCILE_MOVED)) continue;
      const entry = parseLogLine(line);
      if (!entry || entry.time > until) continue;
      if (entry.msg === MEMBERSHIP_CHANGED) views++;
      else if (entry.msg === RECONCILE_MOVED) moved++;
    }
    const viewChanges = Math.max(0, views - 1);
    if (viewChanges === 0 && moved === 0) continue;
    counts.byReplica[file.replace(/\.log$/, '')] = { viewChanges, reconcilesMoved: moved };
    counts.viewChanges += viewChanges;
    counts.reconcilesMoved += moved;
  }
  return counts;
}

function parseLogLine(line: string): { time: number; msg: string } | undefined {
  try {
    const parsed = JSON.parse(line) as { time?: unknown; msg?: unknown };
    const time = typeof parsed.time === 'number' ? parsed.time : Date.parse(String(parsed.time));
    return typeof parsed.msg === 'string' && !Number.isNaN(time) ? { time, msg: parsed.msg } : undefined;
  } catch {
    return undefined;
  }
}
