import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { join, resolve } from 'node:path';
import { isAlive, recordedSimProcesses } from '@capstan/testing';

/**
 * One demo's own folder under `.capstan/demo/`: its services' logs, the workload kubeconfig and the sim state
 * (workload API servers' certificates and pid files, machine roots). Two demos on one machine, or a demo next to
 * the tests, never share sim state, so neither takes the other's API servers for leftovers.
 */
export interface DemoWorkDir {
  root: string;
  logDir: string;
  /** The machine-provider's CAPSTAN_SIM_STATE_DIR. */
  simStateDir: string;
}

const OWNER_FILE = 'demo.pid';

export function createDemoWorkDir(base = resolve('.capstan', 'demo'), owner = process.pid): DemoWorkDir {
  mkdirSync(base, { recursive: true });
  const root = mkdtempSync(join(base, 'run-'));
  writeFileSync(join(root, OWNER_FILE), String(owner));
  const dir: DemoWorkDir = { root, logDir: join(root, 'logs'), simStateDir: join(root, 'sim') };
  mkdirSync(dir.logDir);
  mkdirSync(dir.simStateDir, { mode: 0o700 });
  return dir;
}

/**
 * Removes the folders of earlier demos that have ended and left nothing running: a demo keeps its logs for a look
 * after it ends, until the next one starts. A folder whose demo still runs, or whose pid files name live
 * processes (a demo killed before its teardown), is left alone.
 */
export function pruneEndedDemoRuns(base = resolve('.capstan', 'demo')): string[] {
  if (!existsSync(base)) return [];
  const removed: string[] = [];
  for (const entry of readdirSync(base, { withFileTypes: true })) {
    if (!entry.isDirectory() || !entry.name.startsWith('run-')) continue;
    const root = join(base, entry.name);
    const owner = Number(readFileSafe(join(root, OWNER_FILE)));
    if (Number.isInteger(owner) && owner > 0 && isAlive(owner)) continue;
    if (recordedSimProcesses(join(root, 'sim')).length > 0) continue;
    rmSync(root, { recursive: true, force: true });
    removed.push(root);
  }
  return removed;
}

function readFileSafe(file: string): string {
  try {
    return readFileSync(file, 'utf8').trim();
  } catch {
    return '';
  }
}
