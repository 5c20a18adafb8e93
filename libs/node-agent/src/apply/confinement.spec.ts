import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { confinedInvocation, confinementAvailable } from './confinement.js';
import { HostRoot } from './host-root.js';
import { runCommand, type CommandResult } from './run-command.js';

// Issue 32: a sim machine is a directory of the management host. Its instructions are the tenant's programs; each runs
// in its own mount and PID namespace rooted at the machine's directory, so even a path check that let something
// through cannot reach the host. Every attempt below is one a cluster owner can write into a plan.

const MARKER = '.capstan-confinement-test-machine';

describe('a confined machine instruction', () => {
  let dir: string;
  let root: HostRoot;
  let hostSecret: string;
  // Every attempt first checks that `/` is the machine (a marker only the machine root holds): were confinement ever
  // broken, the attempts below (mounts, writes, kills) must not run against the test host itself.
  const run = async (script: string, timeoutSeconds = 20): Promise<CommandResult> => {
    const result = await runCommand(
      root,
      { name: 'attempt', command: 'sh', args: ['-c', `[ -e /${MARKER} ] || { echo NOT CONFINED; exit 97; }; ${script}`], timeoutSeconds },
      '/var/lib/capstan/agent/work',
      {},
    );
    expect(result.combined.toString('utf8')).not.toContain('NOT CONFINED');
    return result;
  };
  const out = (result: CommandResult) => result.combined.toString('utf8');

  beforeAll(() => {
    // The test host must confine: without it the sim refuses instructions, and these attempts would prove nothing.
    expect(confinementAvailable()).toBe(true);
  });
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'confinement-'));
    mkdirSync(join(dir, 'machine/var/lib/capstan/agent/work'), { recursive: true });
    hostSecret = join(dir, 'host-secret');
    writeFileSync(hostSecret, 'management token');
    writeFileSync(join(dir, 'machine', MARKER), '');
    root = new HostRoot(join(dir, 'machine'), { confined: true });
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('runs in the machine: its root is the machine directory, CAPSTAN_HOST_ROOT is /', async () => {
    const result = await run('echo hello > /etc-hello; echo "$CAPSTAN_HOST_ROOT"; pwd');
    expect(result.exitCode).toBe(0);
    expect(out(result)).toBe('/\n/var/lib/capstan/agent/work\n');
    expect(readFileSync(join(dir, 'machine/etc-hello'), 'utf8')).toBe('hello\n');
  });

  it.each([
    ['an absolute host path', (secret: string) => `cat ${secret}`],
    ['a path climbing out with ..', (secret: string) => `cat /../../../..${secret}`],
    ['a symlink to a host path', (secret: string) => `ln -s ${secret} /link && cat /link`],
    ['a chroot escape', (secret: string) => `mkdir -p /x && chroot /x sh -c "cd ../../../../ && cat .${secret}"`],
  ])('cannot read a host file through %s', async (_what, script) => {
    const result = await run(script(hostSecret));
    expect(result.exitCode).not.toBe(0);
    expect(out(result)).not.toContain('management token');
  });

  it('cannot write a host file, remount the host programs writable or mount anything', async () => {
    const result = await run(`echo owned > ${hostSecret}; touch /usr/owned; mount -o remount,rw /usr; mkdir -p /mnt-attempt; mount -t tmpfs t /mnt-attempt; exit 0`);
    expect(out(result)).toMatch(/Read-only file system/);
    expect(out(result)).toMatch(/permission denied|Operation not permitted/i);
    expect(readFileSync(hostSecret, 'utf8')).toBe('management token');
  });

  it("cannot change the host kernel's settings through /proc: they are read-only inside", async () => {
    // Only looked at, never written: a write that got through would change (or reboot) the test host.
    const result = await run(
      `for p in sys sysrq-trigger irq bus fs; do [ -e /proc/$p ] && echo "$p $(grep " /proc/$p " /proc/mounts | cut -d' ' -f4 | cut -d, -f1)"; done; true`,
    );
    const modes = Object.fromEntries(out(result).trim().split('\n').map((line) => line.split(' ')));
    // sysrq-trigger and others exist only on some kernels; /proc/sys everywhere.
    expect(modes).toMatchObject({ sys: 'ro' });
    expect(Object.values(modes).every((mode) => mode === 'ro')).toBe(true);
  });

  it('cannot see or signal a host process', async () => {
    const host = spawn('sleep', ['60'], { stdio: 'ignore' });
    try {
      const result = await run(`kill -9 ${host.pid}; ls /proc | grep -c '^[0-9]'`);
      expect(host.exitCode).toBeNull();
      expect(host.signalCode).toBeNull();
      // Only the namespace's own processes: the shell, ls and grep.
      expect(Number(out(result).trim().split('\n').pop())).toBeLessThanOrEqual(4);
    } finally {
      host.kill('SIGKILL');
    }
  });

  it("sees none of the agent's environment", async () => {
    process.env['CAPSTAN_TEST_PROVIDER_SECRET'] = 'nats-password';
    try {
      const result = await run('env');
      expect(out(result)).not.toContain('nats-password');
      expect(out(result)).toContain('CAPSTAN_HOST_ROOT=/');
    } finally {
      delete process.env['CAPSTAN_TEST_PROVIDER_SECRET'];
    }
  });

  it('leaves nothing running when the instruction ends: its namespace dies with it', async () => {
    const started = Date.now();
    const result = await run('sleep 600 & echo started', 30);
    expect(result.killed).toBeUndefined();
    expect(result.exitCode).toBe(0);
    expect(Date.now() - started).toBeLessThan(10_000);
  });
});

describe('a confined instruction whose agent dies', () => {
  it('dies with it, leaving nothing to finish next to a resumed run', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'confinement-orphan-'));
    mkdirSync(join(dir, 'machine/var/lib/capstan/agent/work'), { recursive: true });
    const { command, args } = confinedInvocation(join(dir, 'machine'), '/', 'sh', ['-c', 'sleep 3; echo finished > /finished']);
    // A stand-in for the agent: the instruction's parent, SIGKILLed while the instruction runs (its group is its own,
    // so only the parent is killed here; what else dies, dies because its parent did).
    const agent = spawn('sh', ['-c', '"$@" & sleep 60', 'agent', command, ...args], { stdio: 'ignore', detached: true });
    try {
      await new Promise((resolve) => setTimeout(resolve, 500));
      process.kill(agent.pid!, 'SIGKILL');
      await new Promise((resolve) => setTimeout(resolve, 4_000));
      expect(existsSync(join(dir, 'machine/finished'))).toBe(false);
    } finally {
      try {
        process.kill(-agent.pid!, 'SIGKILL');
      } catch {
        /* gone */
      }
      rmSync(dir, { recursive: true, force: true });
    }
  }, 15_000);
});
