import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

// How much the replicas' shard membership moved clusters while the services started together: read from the
// services' JSON logs up to the first fault (no kill has restarted a replica yet). A replica logs its view each
// time it changes. Once it acts (it logs that it joined; before the join grace, its first view), every further
// view is a hand-over of some clusters; views it saw while joining moved nothing. A replica that could not renew its
// Lease in time fences itself: it aborts every reconcile (and resumes once renewed). A reconcile cut by a hand-over
// or a fence logs that it stopped.

export const MEMBERSHIP_CHANGED = 'shard membership changed';
export const JOINED = 'joined the shard group';
export const RECONCILE_MOVED = 'reconcile stopped: the cluster moved to another replica';
export const FENCED = 'no renewal within the renew deadline: fenced, aborting every reconcile';

export interface StartupHandovers {
  /** Log lines up to this moment (epoch ms) are counted. */
  until: number;
  /** Views adopted after the first, summed over the replicas. */
  viewChanges: number;
  /** Times a replica fenced itself (it could not renew its Lease within the renew deadline). */
  fences: number;
  /** Reconciles stopped because their cluster moved or their replica fenced itself. */
  reconcilesMoved: number;
  /** The same per replica log (`<service>-<replica>`), for replicas with any. */
  byReplica: Record<string, { viewChanges: number; fences: number; reconcilesMoved: number }>;
}

/** Counts the start-up hand-overs in every `*.log` of `logDir` written before `until`. */
export function countStartupHandovers(logDir: string, until: number): StartupHandovers {
  const counts: StartupHandovers = { until, viewChanges: 0, fences: 0, reconcilesMoved: 0, byReplica: {} };
  if (!existsSync(logDir)) return counts;
  for (const file of readdirSync(logDir).filter((f) => f.endsWith('.log'))) {
    const entries: { time: number; msg: string }[] = [];
    for (const line of readFileSync(join(logDir, file), 'utf8').split('\n')) {
      if (![MEMBERSHIP_CHANGED, JOINED, RECONCILE_MOVED, FENCED].some((msg) => line.includes(msg))) continue;
      const entry = parseLogLine(line);
      if (entry && entry.time <= until) entries.push(entry);
    }
    const joinedAt = entries.findIndex((e) => e.msg === JOINED);
    const views = entries.filter((e, i) => e.msg === MEMBERSHIP_CHANGED && i > joinedAt).length;
    const moved = entries.filter((e) => e.msg === RECONCILE_MOVED).length;
    const fences = entries.filter((e) => e.msg === FENCED).length;
    // Without a join line (no join grace), the replica acted from its first view.
    const viewChanges = joinedAt >= 0 ? views : Math.max(0, views - 1);
    if (viewChanges === 0 && moved === 0 && fences === 0) continue;
    counts.byReplica[file.replace(/\.log$/, '')] = { viewChanges, fences, reconcilesMoved: moved };
    counts.viewChanges += viewChanges;
    counts.fences += fences;
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
