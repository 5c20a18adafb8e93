import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  answerK3sRequest,
  SIM_K3S_BINARY_PATH,
  SIM_K3S_REQUEST_PATH,
  writeSimK3sBinary,
} from './k3s-commands.js';
import type { K3sCommandHost } from './k3s-commands.js';

// The stand-in k3s script itself, run by a real shell: one command at a time per server, and a command killed while
// it waits (the node agent stops a periodic check when a new plan arrives) leaves no lock behind.
describe('the sim k3s binary', () => {
  let dir: string;
  let host: K3sCommandHost;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'capstan-k3s-bin-'));
    const root = join(dir, 'root');
    mkdirSync(root);
    writeSimK3sBinary(root);
    host = {
      root,
      recordsDir: join(dir, 'records'),
      nodeName: 'demo-cp-0',
      server: true,
      saveSnapshot: () => Promise.reject(new Error('no etcd here')),
      restoreSnapshot: () => Promise.reject(new Error('no etcd here')),
      servingNames: { dnsNames: ['localhost'], ipAddresses: [] },
      renewServingCertificate: async () => undefined,
      secretsEncrypt: async (command) => `Current Rotation Stage: ${command}`,
    };
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const run = (...args: string[]) => {
    const child = spawn('sh', [join(host.root, SIM_K3S_BINARY_PATH), ...args], {
      env: { ...process.env, CAPSTAN_HOST_ROOT: host.root },
    });
    let stdout = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    const exited = new Promise<{ code: number | null; stdout: string }>((resolve) =>
      child.on('close', (code) => resolve({ code, stdout })),
    );
    return { child, exited };
  };
  const requestWritten = async () => {
    for (let i = 0; i < 100 && !existsSync(join(host.root, SIM_K3S_REQUEST_PATH)); i++)
      await new Promise((r) => setTimeout(r, 50));
    expect(existsSync(join(host.root, SIM_K3S_REQUEST_PATH))).toBe(true);
  };

  it('answers the next command after one was killed while it waited', async () => {
    const killed = run('secrets-encrypt', 'status');
    await requestWritten();
    killed.child.kill('SIGKILL');
    await killed.exited;
    // The killed one's request is answered (nobody reads it), and the next command still gets the server.
    await answerK3sRequest(host);
    const next = run('secrets-encrypt', 'prepare');
    await requestWritten();
    await answerK3sRequest(host);
    expect(await next.exited).toEqual({ code: 0, stdout: 'Current Rotation Stage: prepare\n' });
  }, 20_000);
});
