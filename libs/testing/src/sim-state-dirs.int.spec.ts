import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startLocalEnvironment, type LocalEnvironment } from './local-environment.js';
import { recordedSimProcesses } from './local-services.js';
import { isAlive, startProcess, stopPid, type ManagedProcess } from './processes.js';

// Two environments on one machine (two demos, a demo next to a test run) must not share the sim's state: each has
// its own dir, and stopping one stops the workload API servers and node agents its own pid files name, never the
// other's, even while the other runs.

const SLEEPER = ['-e', 'setInterval(() => undefined, 1 << 30)'];
const started: ManagedProcess[] = [];

/** A stand-in for a process the machine-provider started, recorded as libs/sim's OwnedProcess records it. */
function recordedProcess(dir: string, name: string, tag: string): ManagedProcess {
  mkdirSync(dir, { recursive: true });
  const args = [...SLEEPER, tag];
  const proc = startProcess({ name, command: process.execPath, args, logFile: join(dir, `${name}.log`) });
  started.push(proc);
  const record = {
    pid: proc.pid,
    fingerprint: 'test',
    command: process.execPath,
    args,
    startedAt: new Date().toISOString(),
  };
  writeFileSync(join(dir, `${name}.pid.json`), JSON.stringify(record));
  return proc;
}

describe('sim state dirs of local environments', () => {
  let a: LocalEnvironment | undefined;
  let b: LocalEnvironment | undefined;
  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop(), ...started.map((p) => stopPid(p.pid))]);
  });

  it('are apart, and stopping one environment stops only what its own sim state dir records', async () => {
    [a, b] = await Promise.all([startLocalEnvironment(), startLocalEnvironment()]);
    expect(a.simStateDir).toBe(join(a.workDir, 'sim'));
    expect(b.simStateDir).toBe(join(b.workDir, 'sim'));
    expect(a.simStateDir).not.toBe(b.simStateDir);

    const aApiServer = recordedProcess(
      join(a.simStateDir, 'clusters', 'default', 'demo'),
      'kube-apiserver',
      'a-apiserver',
    );
    const aAgent = recordedProcess(
      join(a.simStateDir, 'machines', 'default', 'demo-md-0-x'),
      'node-agent',
      'a-agent',
    );
    const bApiServer = recordedProcess(
      join(b.simStateDir, 'clusters', 'default', 'demo'),
      'kube-apiserver',
      'b-apiserver',
    );
    const bAgent = recordedProcess(
      join(b.simStateDir, 'machines', 'default', 'demo-md-0-x'),
      'node-agent',
      'b-agent',
    );
    // A stale pid file in A naming B's process under another command line (a recycled pid) is not A's to stop.
    const stale = join(a.simStateDir, 'clusters', 'default', 'gone');
    mkdirSync(stale, { recursive: true });
    writeFileSync(
      join(stale, 'kube-apiserver.pid.json'),
      JSON.stringify({ pid: bApiServer.pid, command: process.execPath, args: ['old'] }),
    );

    expect(
      recordedSimProcesses(a.simStateDir)
        .map((p) => p.pid)
        .sort(),
    ).toEqual([aApiServer.pid, aAgent.pid].sort());
    const bServers = b.processes.map((p) => p.pid);

    await a.stop();

    expect(isAlive(aApiServer.pid)).toBe(false);
    expect(isAlive(aAgent.pid)).toBe(false);
    for (const pid of [bApiServer.pid, bAgent.pid, ...bServers]) expect(isAlive(pid)).toBe(true);

    await b.stop();
    for (const pid of [bApiServer.pid, bAgent.pid, ...bServers]) expect(isAlive(pid)).toBe(false);
  });
});
