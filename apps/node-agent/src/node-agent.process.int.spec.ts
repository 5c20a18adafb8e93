import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { V1Secret } from '@kubernetes/client-node';
import { KubeClient, SECRETS } from '@capstan/kube';
import { agentMachineRoot, createPlanMachine, decodeSecretData, PLAN_KEYS, text } from '@capstan/node-agent';
import {
  createTestNamespace,
  eventually,
  repoRoot,
  startProcess,
  stopPid,
  type ManagedProcess,
  type TestNamespace,
} from '@capstan/testing';

const MAIN = join(repoRoot(), 'apps/node-agent/dist/main.js');
const b64 = (s: string) => Buffer.from(s).toString('base64');

describe('the node agent process', () => {
  let ns: TestNamespace;
  let admin: KubeClient;
  const processes: ManagedProcess[] = [];
  const roots: string[] = [];

  beforeAll(async () => {
    execFileSync(process.execPath, ['scripts/build.mjs'], { cwd: repoRoot(), stdio: 'ignore' });
    ns = await createTestNamespace('agent-proc');
    admin = new KubeClient(ns.kc);
  });
  afterAll(async () => {
    await Promise.all(processes.map((p) => stopPid(p.pid, 1_000)));
    for (const root of roots) rmSync(root, { recursive: true, force: true });
    await ns?.delete();
    await admin?.close();
  });

  function machineRoot(secretName: string, token: string, mode = 0o600): string {
    const root = agentMachineRoot(ns.kc, { namespace: ns.name, secretName, token }, mode);
    roots.push(root);
    return root;
  }

  function agentProcess(root: string): ManagedProcess {
    const agent = startProcess({
      name: 'node-agent',
      command: process.execPath,
      args: [MAIN, '--host-root', root, '--health-port', '0', '--probe-period', '200'],
      logFile: join(root, 'agent.log'),
    });
    processes.push(agent);
    return agent;
  }

  const planData = async (name: string) =>
    decodeSecretData((await admin.resource<V1Secret>(SECRETS).get({ namespace: ns.name, name })).data);

  it('prints its flags with --help and refuses a config file anyone else can read', async () => {
    const help = spawnSync(process.execPath, [MAIN, '--help'], { encoding: 'utf8' });
    expect(help.status).toBe(0);
    expect(help.stdout).toContain('--host-root');
    const { secretName, token } = await createPlanMachine(admin, ns.name, 'loose');
    const root = machineRoot(secretName, token, 0o644);
    const run = spawnSync(process.execPath, [MAIN, '--host-root', root, '--health-port', '0'], { encoding: 'utf8' });
    expect(run.status).toBe(1);
    expect(run.stderr).toContain('config.yaml: must have mode 0600 (has 0644)');
    expect(run.stderr).not.toContain(token);
  });

  it('runs a plan again after being killed mid-instruction, and only that plan', async () => {
    const { secretName, token } = await createPlanMachine(admin, ns.name, 'crash');
    const root = machineRoot(secretName, token);
    const first = agentProcess(root);
    const script = [
      'echo "$CAPSTAN_AGENT_ATTEMPT_NUMBER" >> "$CAPSTAN_HOST_ROOT/attempts"',
      'if [ "$CAPSTAN_AGENT_ATTEMPT_NUMBER" = 1 ]; then sleep 60; fi',
    ].join('\n');
    await admin.resource<V1Secret>(SECRETS).mergePatch(
      { namespace: ns.name, name: secretName },
      {
        data: {
          plan: b64(JSON.stringify({ instructions: [{ name: 'install', command: 'sh', args: ['-c', script] }] })),
          'plan-state': b64('pending'),
        },
      },
    );
    await eventually(() => readFileSync(join(root, 'attempts'), 'utf8') === '1\n', { timeoutMs: 20_000 });
    expect(text(await planData(secretName), PLAN_KEYS.state)).toBe('in-progress');
    first.child.kill('SIGKILL');
    await first.exited;

    agentProcess(root);
    const done = await eventually(
      async () => {
        const d = await planData(secretName);
        return text(d, PLAN_KEYS.state) === 'succeeded' ? d : undefined;
      },
      { timeoutMs: 20_000 },
    );
    expect(readFileSync(join(root, 'attempts'), 'utf8')).toBe('1\n2\n');
    expect(text(done, PLAN_KEYS.attempt)).toBe('2');
    expect(text(done, PLAN_KEYS.revision)).toBe('1');
    // A succeeded plan is not run again by a restart.
    const again = agentProcess(root);
    await new Promise((r) => setTimeout(r, 1_500));
    expect(readFileSync(join(root, 'attempts'), 'utf8')).toBe('1\n2\n');
    const log = readFileSync(again.logFile, 'utf8');
    expect(log).toContain('node agent started');
    expect(log).not.toContain(token);
  });
});
