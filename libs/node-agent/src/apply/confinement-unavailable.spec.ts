import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { repoRoot } from '@capstan/testing';
import { CONFINEMENT_UNAVAILABLE } from './run-command.js';

// A host that cannot confine (here: no setpriv or unshare on the PATH, as on a host without util-linux; the same
// answer where namespaces are refused) must refuse a sim machine's instructions, never run them on the host itself.
// The probe is cached per process, so a fresh Node runs the agent's compiled code with that PATH.

describe('a host that cannot confine', () => {
  let dir: string;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'unconfinable-'));
    mkdirSync(join(dir, 'bin'));
    mkdirSync(join(dir, 'machine/var/lib/capstan/agent/work'), { recursive: true });
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  /** Runs `/bin/sh -c script` as a machine instruction, confined or not, in a Node whose PATH finds nothing. */
  const runWithoutConfinementTools = (confined: boolean, script: string) => {
    const dist = (file: string) => JSON.stringify(join(repoRoot(), 'libs/node-agent/dist/apply', file));
    const program = `
      const { confinementAvailable } = await import(${dist('confinement.js')});
      const { HostRoot } = await import(${dist('host-root.js')});
      const { runCommand } = await import(${dist('run-command.js')});
      const result = await runCommand(
        new HostRoot(${JSON.stringify(join(dir, 'machine'))}, { confined: ${confined} }),
        // A bare command: an absolute one is a program of the machine, under its root.
        { name: 'tenant', command: 'sh', args: ['-c', ${JSON.stringify(script)}], workingDirectory: '/', timeoutSeconds: 30 },
        '/var/lib/capstan/agent/work',
        { PATH: '/usr/bin:/bin' },
      );
      process.stdout.write(JSON.stringify({ available: confinementAvailable(), exitCode: result.exitCode, spawnError: result.spawnError ?? null }));
    `;
    const out = execFileSync(process.execPath, ['--input-type=module', '-e', program], {
      cwd: repoRoot(),
      encoding: 'utf8',
      timeout: 60_000,
      env: { PATH: join(dir, 'bin') },
    });
    return JSON.parse(out) as { available: boolean; exitCode: number | null; spawnError: string | null };
  };

  it('says so, and refuses a confined machine its instruction without running any of it', () => {
    const witness = join(dir, 'ran-on-the-host');
    expect(runWithoutConfinementTools(true, `/usr/bin/touch ${witness}`)).toEqual({
      available: false,
      exitCode: null,
      spawnError: CONFINEMENT_UNAVAILABLE,
    });
    expect(existsSync(witness)).toBe(false);
  });

  it('still runs the instructions of an unconfined agent (a real host, its own root)', () => {
    expect(runWithoutConfinementTools(false, `/usr/bin/touch ${join(dir, 'machine', 'ran')}`)).toMatchObject({ exitCode: 0 });
    expect(existsSync(join(dir, 'machine', 'ran'))).toBe(true);
  });
});
