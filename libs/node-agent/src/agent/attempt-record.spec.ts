import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AttemptRecords, identityOf, isAlive, killOrphanedInstruction, type AttemptRecord } from './attempt-record.js';

// Issue 32, finding 8: an instruction orphaned by a killed agent kept running next to the resumed attempt.

describe('the attempt record', () => {
  const dirs: string[] = [];
  afterAll(() => dirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

  const record = (instruction: AttemptRecord['instruction']): AttemptRecord => ({
    instance: 'dead-agent',
    agent: { pid: 1, startTime: 'not-this' },
    checksum: 'c',
    revision: '1',
    attempt: 1,
    ...(instruction && { instruction }),
  });

  it('kills the instruction group a dead attempt left, and only that process', async () => {
    const orphan = spawn('sleep', ['600'], { detached: true, stdio: 'ignore' });
    const identity = identityOf(orphan.pid!)!;
    expect(killOrphanedInstruction(record({ ...identity, startTime: `${identity.startTime}0` }))).toBe(false);
    expect(isAlive(identity)).toBe(true);
    const exited = once(orphan, 'exit');
    expect(killOrphanedInstruction(record(identity))).toBe(true);
    await exited;
    expect(isAlive(identity)).toBe(false);
    expect(killOrphanedInstruction(record(identity))).toBe(false);
  });

  it('survives a restart on disk and is gone once cleared', () => {
    const dir = mkdtempSync(join(tmpdir(), 'attempt-record-'));
    dirs.push(dir);
    const records = new AttemptRecords(join(dir, 'state'));
    expect(records.read()).toBeUndefined();
    records.write(record(undefined));
    expect(new AttemptRecords(join(dir, 'state')).read()).toEqual(record(undefined));
    records.clear();
    expect(records.read()).toBeUndefined();
  });
});
