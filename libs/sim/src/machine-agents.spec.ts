import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { DEFAULT_AGENT_CONFIG_PATH } from '@capstan/node-agent';
import { eventually } from '@capstan/testing';
import { MachineAgents } from './machine-agents.js';
import { commandLineOf } from './owned-process.js';

// A machine's root is written by its tenant (its bootstrap data's files, its plans). The sim's record of the
// machine's agent process lives outside it: a forged record in the root must not make the provider signal a process
// the tenant names (issue 32, finding 2).

describe('MachineAgents (agent processes)', () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'machine-agents-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const alive = (pid: number) => {
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  };

  it('keeps its pid file outside the machine root, so a forged one there signals nothing', async () => {
    const root = join(dir, 'machines/ns/m1');
    const records = join(dir, 'machine-records/ns/m1');
    mkdirSync(join(root, DEFAULT_AGENT_CONFIG_PATH, '..'), { recursive: true });
    writeFileSync(join(root, DEFAULT_AGENT_CONFIG_PATH), 'server: https://x\n', { mode: 0o600 });
    // A stand-in for the agent's main: it only waits to be stopped.
    const main = join(dir, 'agent-main.mjs');
    writeFileSync(main, 'setInterval(() => {}, 1000);\n');
    // The process the tenant wants killed, and the record naming it that the tenant wrote into the machine.
    const victim = spawn('sleep', ['60'], { stdio: 'ignore' });
    try {
      await new Promise((resolve) => setTimeout(resolve, 100));
      const [command, ...args] = commandLineOf(victim.pid!);
      writeFileSync(
        join(root, 'node-agent.pid.json'),
        JSON.stringify({
          pid: victim.pid,
          fingerprint: 'forged',
          command,
          args,
          startedAt: new Date().toISOString(),
        }),
      );

      const agents = new MachineAgents('process', pino({ level: 'silent' }), main);
      await agents.ensure('ns/m1', root, records);
      await agents.remove('ns/m1');

      expect(alive(victim.pid!)).toBe(true);
    } finally {
      victim.kill('SIGKILL');
    }
  });

  // Issue 32, finding 8: a dead sim agent was never started again, and nothing said so.
  it('starts an agent process that died again, and counts it', async () => {
    const root = join(dir, 'machines/ns/m2');
    const records = join(dir, 'machine-records/ns/m2');
    mkdirSync(join(root, DEFAULT_AGENT_CONFIG_PATH, '..'), { recursive: true });
    writeFileSync(join(root, DEFAULT_AGENT_CONFIG_PATH), 'server: https://x\n', { mode: 0o600 });
    const main = join(dir, 'agent-main-2.mjs');
    writeFileSync(main, 'setInterval(() => {}, 1000);\n');
    const agents = new MachineAgents('process', pino({ level: 'silent' }), main);
    try {
      await agents.ensure('ns/m2', root, records);
      const first = readPid(records);
      process.kill(first, 'SIGKILL');
      await eventually(async () => agents.restartsOf('ns/m2') === 1 && readPid(records) !== first, { timeoutMs: 10_000 });
      expect(alive(readPid(records))).toBe(true);
    } finally {
      await agents.shutdown();
    }
  });
});

function readPid(records: string): number {
  return (JSON.parse(readFileSync(join(records, 'node-agent.pid.json'), 'utf8')) as { pid: number }).pid;
}
