import { type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { OwnedProcess } from '@capstan/sim';
import { isAlive, recordedSimProcesses, stopLocalServices } from '@capstan/testing';
import { createDemoWorkDir, pruneEndedDemoRuns } from './demo-work-dir.js';

describe('demo work dirs', () => {
  let base: string;
  const owned: OwnedProcess[] = [];
  beforeEach(() => {
    base = mkdtempSync(join(tmpdir(), 'capstan-demo-test-'));
  });
  afterEach(async () => {
    await Promise.all(owned.splice(0).map((p) => p.stop(1000)));
    rmSync(base, { recursive: true, force: true });
  });

  /** A workload API server as the sim records it (its real pid file), played by a sleeping node. */
  async function apiServerIn(simStateDir: string, tag: string): Promise<OwnedProcess> {
    const dir = join(simStateDir, 'clusters', 'default', 'demo');
    mkdirSync(dir, { recursive: true });
    const proc = new OwnedProcess({
      name: 'kube-apiserver',
      dir,
      command: process.execPath,
      args: ['-e', 'setInterval(() => undefined, 1 << 30)', tag],
    });
    await proc.start();
    owned.push(proc);
    return proc;
  }

  it('gives each demo its own sim state dir and logs', () => {
    const first = createDemoWorkDir(base, 101);
    const second = createDemoWorkDir(base, 102);
    expect(first.simStateDir).not.toBe(second.simStateDir);
    expect(first.logDir).not.toBe(second.logDir);
    expect(first.simStateDir.startsWith(first.root)).toBe(true);
    expect(existsSync(second.simStateDir)).toBe(true);
  });

  it('stopping one demo’s services stops the API servers its sim state dir records, not another demo’s', async () => {
    const first = createDemoWorkDir(base);
    const second = createDemoWorkDir(base);
    const firstServer = await apiServerIn(first.simStateDir, 'first');
    const secondServer = await apiServerIn(second.simStateDir, 'second');
    expect(recordedSimProcesses(first.simStateDir).map((p) => [p.name, p.pid])).toEqual([
      ['kube-apiserver', firstServer.pid],
    ]);

    // The machine-provider was killed before it stopped its servers: its child has exited, its pid file remains.
    // Only what stopLocalServices reads of an exited child.
    const exited = { exitCode: 137, signalCode: null } as unknown as ChildProcess;
    await stopLocalServices([
      {
        name: 'machine-provider',
        replica: 0,
        pid: 0,
        url: '',
        adminUrl: '',
        adminCaPem: '',
        logFile: '',
        child: exited,
        simStateDir: first.simStateDir,
      },
    ]);

    expect(isAlive(firstServer.pid!)).toBe(false);
    expect(secondServer.alive()).toBe(true);
  });

  it('prunes the folders of ended demos that left nothing running, and only those', async () => {
    const running = createDemoWorkDir(base, process.pid);
    const ended = createDemoWorkDir(base, 2 ** 22 + 1); // above the largest pid_max: no such process
    const killed = createDemoWorkDir(base, 2 ** 22 + 2);
    await apiServerIn(killed.simStateDir, 'left-by-a-killed-demo');
    writeFileSync(join(base, 'not-a-run'), '');

    expect(pruneEndedDemoRuns(base)).toEqual([ended.root]);
    expect(existsSync(running.root)).toBe(true);
    expect(existsSync(killed.root)).toBe(true);
  });
});
