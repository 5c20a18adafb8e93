import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isAlive } from '@capstan/testing';
import { OwnedProcess, recordedProcessAlive, stopRecordedProcess } from './owned-process.js';

// With a plain `sleep` standing in for kube-apiserver: a process recorded by a provider that died is adopted
// when it runs what is wanted, replaced when it does not, and a pid file never stops a stranger.

describe('OwnedProcess', () => {
  let dir: string;
  const sleep = '/bin/sleep';
  const started: OwnedProcess[] = [];
  const owned = (args: string[], inputs: string[] = []) => {
    const process = new OwnedProcess({ name: 'sleeper', dir, command: sleep, args, inputs });
    started.push(process);
    return process;
  };

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'capstan-owned-'));
  });
  afterEach(async () => {
    for (const process of started.splice(0)) await process.stop(100);
    rmSync(dir, { recursive: true, force: true });
  });

  it('adopts the process an earlier owner left when it runs the same command line and inputs', async () => {
    const first = owned(['300'], ['cert-a']);
    expect(await first.start()).toBe('started');
    const pid = first.pid!;
    const second = owned(['300'], ['cert-a']);
    expect(await second.start()).toBe('adopted');
    expect(second.pid).toBe(pid);
    expect(recordedProcessAlive(dir, 'sleeper')?.pid).toBe(pid);
  });

  it('replaces a recorded process that runs something else than wanted', async () => {
    const first = owned(['300'], ['cert-a']);
    await first.start();
    const old = first.pid!;
    const second = owned(['300'], ['cert-b']);
    expect(await second.start()).toBe('started');
    expect(second.pid).not.toBe(old);
    expect(isAlive(old)).toBe(false);
  });

  it('stops what a pid file records, and nothing once the pid runs another command', async () => {
    const first = owned(['300']);
    await first.start();
    const pid = first.pid!;
    await stopRecordedProcess(dir, 'sleeper');
    expect(isAlive(pid)).toBe(false);

    const other = owned(['301']);
    await other.start();
    // A pid file naming a live process that runs another command line is ignored.
    const stranger = new OwnedProcess({ name: 'sleeper', dir, command: '/bin/true', args: [] });
    expect(stranger.alive()).toBe(false);
    expect(recordedProcessAlive(dir, 'sleeper')?.pid).toBe(other.pid);
  });
});
