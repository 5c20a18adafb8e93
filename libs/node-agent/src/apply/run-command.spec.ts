import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HostRoot } from './host-root.js';
import { commandFailure, runCommand } from './run-command.js';

// Issue 32, finding 7: an instruction that leaves a background child holding its output (`sleep 600 &`) kept the
// plan in progress forever: the leader had exited, so the timeout signalled nobody, and the pipes stayed open.

/** Running, not gone and not a zombie waiting for a reaper (this container's init may not reap). */
const alive = (pid: number) => {
  try {
    return readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.[0] !== 'Z';
  } catch {
    return false;
  }
};

describe('runCommand', () => {
  let dir: string;
  let root: HostRoot;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'run-command-'));
    mkdirSync(join(dir, 'work'));
    root = new HostRoot(dir);
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('holds its timeout when the leader exits and a background child keeps the output open', async () => {
    const started = Date.now();
    const result = await runCommand(
      root,
      { name: 'bg', command: 'sh', args: ['-c', 'sleep 600 & echo $! > "$CAPSTAN_HOST_ROOT/child.pid"'], timeoutSeconds: 1 },
      '/work',
      {},
    );
    expect(result.killed).toBe('timeout');
    expect(commandFailure('instruction bg', result)).toBe('instruction bg timed out');
    expect(Date.now() - started).toBeLessThan(8_000);
    const child = Number(readFileSync(join(dir, 'child.pid'), 'utf8'));
    expect(alive(child)).toBe(false);
  });

  it('finishes when a child that left the group holds the output past SIGKILL', async () => {
    const result = await runCommand(
      root,
      // setsid puts the sleeper into a group of its own: signalling the instruction's group misses it.
      { name: 'escaped', command: 'sh', args: ['-c', 'setsid sleep 30 & wait'], timeoutSeconds: 1 },
      '/work',
      {},
    );
    expect(result.killed).toBe('timeout');
  }, 15_000);

  it('reports a command that exits on its own as it ended', async () => {
    const result = await runCommand(root, { name: 'ok', command: 'sh', args: ['-c', 'echo hi; exit 3'], timeoutSeconds: 5 }, '/work', {});
    expect(result.killed).toBeUndefined();
    expect(result.exitCode).toBe(3);
    expect(result.stdout.toString()).toBe('hi\n');
  });
});
