// The built CLI as a user runs it: `node apps/cli/bin/capstan.js ...` as a process, under the project's
// Node 24 (the one Jest runs on) and under the machine's older Node, which the launcher hands over to the
// Node 24 in .tools/. Every failure must be one line that names the URL or file and the fix.
import { execFileSync, spawn } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { freePort, repoRoot } from '@capstan/testing';

const root = repoRoot();
const bin = join(root, 'apps', 'cli', 'bin', 'capstan.js');

interface Result {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** The machine's own Node when it is older than 24 (the launcher's reason to exist), outside .tools/. */
function olderNode(): string | undefined {
  const dirs = [...(process.env['PATH'] ?? '').split(delimiter), '/usr/local/bin', '/usr/bin', '/bin'];
  for (const dir of dirs) {
    const candidate = join(dir, 'node');
    if (!dir || !existsSync(candidate) || realpathSync(candidate).includes(`${join(root, '.tools')}`)) continue;
    try {
      const major = Number(execFileSync(candidate, ['-p', 'process.versions.node.split(".")[0]'], { encoding: 'utf8' }).trim());
      if (major >= 18 && major < 24) return candidate;
    } catch {
      /* not a runnable node */
    }
  }
  return undefined;
}

const node24 = process.execPath;
const oldNode = olderNode();
const nodes: Array<[string, string]> = [[`Node ${process.versions.node}`, node24]];
if (oldNode) nodes.push([`the machine's older Node (${oldNode})`, oldNode]);
const withOldNode = oldNode ? it : it.skip;
const oldNodeTitle = (title: string) => (oldNode ? title : `${title} (skipped: no Node older than 24 on this machine)`);

let home: string;
let scratch: string;

/**
 * Runs the CLI in a clean environment: a HOME without a kubeconfig, no KUBECONFIG/NATS_URL, and no env.json
 * lookup unless a test asks for one (a developer's running `npm run env:up` must not change the results).
 */
function capstan(
  node: string,
  args: string[],
  options: { env?: Record<string, string | undefined>; cwd?: string; bin?: string } = {},
): Promise<Result> {
  const merged: Record<string, string | undefined> = { PATH: process.env['PATH'] ?? '', HOME: home, CAPSTAN_ENV_FILE: '', ...options.env };
  const env = Object.fromEntries(Object.entries(merged).filter((entry): entry is [string, string] => entry[1] !== undefined));
  return new Promise((resolveRun, reject) => {
    const child = spawn(node, [options.bin ?? bin, ...args], { cwd: options.cwd ?? scratch, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolveRun({ code, stdout, stderr }));
  });
}

/** One line on stderr, no stack frames, no raw library messages. */
function expectOneLineError(result: Result, pattern: RegExp): void {
  expect(result.code).toBe(1);
  const lines = result.stderr.trimEnd().split('\n');
  expect(lines[lines.length - 1]).toMatch(pattern);
  expect(result.stderr).not.toMatch(/^\s+at /m);
  expect(result.stderr).not.toMatch(/fetch failed|ENOENT|HTTP protocol is not allowed|TypeError/);
}

function writeKubeconfig(server: string): string {
  const file = join(scratch, `kubeconfig-${server.replace(/\W+/g, '-')}`);
  writeFileSync(
    file,
    [
      'apiVersion: v1',
      'kind: Config',
      `clusters: [{name: dead, cluster: {server: "${server}"}}]`,
      'users: [{name: u, user: {token: t}}]',
      'contexts: [{name: dead, context: {cluster: dead, user: u}}]',
      'current-context: dead',
    ].join('\n'),
  );
  return file;
}

function writeEnvFile(dir: string, content: { kubeconfig?: string; natsUrl?: string }): string {
  mkdirSync(join(dir, '.capstan'), { recursive: true });
  const file = join(dir, '.capstan', 'env.json');
  writeFileSync(file, JSON.stringify({ ...content, pids: {} }, null, 2));
  return file;
}

beforeAll(() => {
  // The tests run the built CLI; the build is incremental, so this is quick when nothing changed.
  execFileSync(process.execPath, [join(root, 'scripts', 'build.mjs')], { cwd: root, stdio: 'ignore' });
  scratch = mkdtempSync(join(tmpdir(), 'capstan-cli-runtime-'));
  home = join(scratch, 'home');
  mkdirSync(home);
});
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe('the capstan launcher', () => {
  it.each(nodes)('prints --help under %s', async (_name, node) => {
    const result = await capstan(node, ['--help']);
    expect(result).toMatchObject({ code: 0, stderr: '' });
    expect(result.stdout).toMatch(/^Usage: capstan \[options\] \[command\]/);
    expect(result.stdout).toContain('events [options]');
  });

  withOldNode(oldNodeTitle('passes on the exit code of the Node 24 it hands over to'), async () => {
    const unknown = await capstan(oldNode!, ['no-such-command']);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain("error: unknown command 'no-such-command'");
    expect((await capstan(oldNode!, ['--version'])).stdout.trim()).toBe('0.1.0');
  });

  withOldNode(oldNodeTitle('without Node 24 in .tools/, says in one line to run npm run setup'), async () => {
    // A copy of the launcher in a tree without .tools/ (nor a dist): what a fresh clone looks like.
    const clone = join(scratch, 'fresh-clone');
    mkdirSync(join(clone, 'apps', 'cli', 'bin'), { recursive: true });
    copyFileSync(bin, join(clone, 'apps', 'cli', 'bin', 'capstan.js'));
    const result = await capstan(oldNode!, ['--help'], { bin: join(clone, 'apps', 'cli', 'bin', 'capstan.js') });
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(/^capstan: needs Node\.js 24 \(this is v\d+\.\d+\.\d+\); run `npm run setup` in .*fresh-clone to install it into \.tools\/, then retry\.\n$/);
  });
});

describe.each(nodes)('capstan errors under %s', (_name, node) => {
  it('without any kubeconfig, says where it looked and to pass one or run npm run env:up', async () => {
    const result = await capstan(node, ['describe', 'cluster', 'demo']);
    expectOneLineError(result, /^Error: no kubeconfig for the management cluster: .*\/home\/\.kube\/config does not exist.*`npm run env:up`$/);
  });

  it('with KUBECONFIG=/nonexistent, names the file and the variable', async () => {
    const result = await capstan(node, ['get', 'kubeconfig', 'demo'], { env: { KUBECONFIG: '/nonexistent' } });
    expectOneLineError(result, /^Error: kubeconfig \/nonexistent does not exist \(from \$KUBECONFIG\); point KUBECONFIG at a kubeconfig file that exists, or unset it$/);
  });

  it('with a dead API server, names its URL, the kubeconfig and the fix', async () => {
    const server = `https://127.0.0.1:${await freePort()}`;
    const kubeconfig = writeKubeconfig(server);
    const result = await capstan(node, ['describe', 'cluster', 'demo', '--kubeconfig', kubeconfig]);
    expectOneLineError(
      result,
      new RegExp(
        `^Error: cannot reach the Kubernetes API server at ${server} \\(connection refused; kubeconfig ${kubeconfig} from --kubeconfig\\)\\. ` +
          'Is the management cluster running\\? `npm run env:up` starts a local one, or pass --kubeconfig / set KUBECONFIG',
      ),
    );
  });

  it('with NATS down, names its URL and the fix', async () => {
    const url = `nats://127.0.0.1:${await freePort()}`;
    const result = await capstan(node, ['events', '--nats-url', url]);
    expectOneLineError(result, new RegExp(`^Error: cannot connect to NATS at ${url} \\(connection refused; URL from --nats-url\\)\\. Is NATS running\\?.*--nats-url / set NATS_URL$`));
  });
});

describe('every command that talks to the management cluster explains a dead API server', () => {
  it.each([
    ['get', 'kubeconfig', 'demo'],
    ['delete', 'cluster', 'demo'],
    ['plan', 'show', 'demo-md-0-abcde'],
    ['init', '--wait-timeout', '5s'],
  ])('capstan %s %s', async (...args) => {
    const server = `https://127.0.0.1:${await freePort()}`;
    const result = await capstan(node24, [...args, '--kubeconfig', writeKubeconfig(server)]);
    expectOneLineError(result, new RegExp(`^Error: cannot reach the Kubernetes API server at ${server} \\(connection refused;`));
  });
});

describe('.capstan/env.json from `npm run env:up`', () => {
  const kubeconfig = () => process.env['CAPSTAN_TEST_KUBECONFIG']!;
  const natsUrl = () => process.env['CAPSTAN_TEST_NATS_URL']!;

  it('gives events its NATS URL and the management cluster its kubeconfig (found from the current directory)', async () => {
    const project = join(scratch, 'project-with-env');
    const envFile = writeEnvFile(project, { kubeconfig: kubeconfig(), natsUrl: natsUrl() });
    const cwd = join(project, 'sub', 'dir');
    mkdirSync(cwd, { recursive: true });
    // No CAPSTAN_ENV_FILE: the CLI searches, and finds the file above its working directory.
    const run = (args: string[]) => capstan(node24, args, { cwd, env: { CAPSTAN_ENV_FILE: undefined } });

    // A stream that does not exist: reaching that NATS and failing there proves the URL came from env.json.
    const events = await run(['events', '--stream-name', 'CAPSTAN_CLI_RUNTIME_TEST_NONE']);
    expectOneLineError(
      events,
      new RegExp(`^Error: NATS at ${natsUrl().replace(/[.]/g, '\\.')} \\(URL from ${envFile}\\) has no stream CAPSTAN_CLI_RUNTIME_TEST_NONE: `),
    );

    // The real API server answers: the cluster is simply not there.
    const describe = await run(['describe', 'cluster', 'no-such-cluster', '-n', 'default']);
    expectOneLineError(describe, /^Error: .*no-such-cluster.* not found/);
  });

  it('says the local environment looks stopped when its NATS is gone, before init --local installs anything', async () => {
    const project = join(scratch, 'project-with-stale-env');
    const deadNats = `nats://127.0.0.1:${await freePort()}`;
    const envFile = writeEnvFile(project, { kubeconfig: kubeconfig(), natsUrl: deadNats });
    const result = await capstan(node24, ['init', '--local', '--log-dir', join(project, 'logs')], { cwd: project, env: { CAPSTAN_ENV_FILE: envFile } });
    expectOneLineError(
      result,
      new RegExp(
        `^Error: cannot connect to NATS at ${deadNats} \\(connection refused; URL from ${envFile}\\)\\. ` +
          `The local environment in ${envFile} looks stopped: run \`npm run env:down && npm run env:up\``,
      ),
    );
    expect(result.stderr).not.toContain('Installing');
  });
});
