import { execFile } from 'node:child_process';
import { writeFileSync, mkdtempSync, rmSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import {
  buildNatsImage,
  buildServiceImages,
  dockerEngine,
  eventually,
  repoRoot,
  type DockerEngine,
} from '@capstan/testing';

// docker-compose.yml as a user runs it (docs/deploy.md, "Docker Compose"): the images built here, `docker-compose up`,
// a cluster from `capstan generate cluster` provisioned to Available by the services in their containers, then
// `docker-compose down -v` leaves no container, volume or network of the project.

const run = promisify(execFile);
const STEP_MS = 6 * 60_000;
const READ_KUBECONFIG =
  "process.stdout.write(require('node:fs').readFileSync('/kube/kubeconfig.yaml', 'utf8'))";

describe('docker-compose.yml on the Docker engine', () => {
  let engine: DockerEngine;
  let dir: string;
  const project = `capstan-compose-${process.pid}`;
  const log = (line: string) => process.stderr.write(`[compose] ${line}\n`);
  const figures: Record<string, string> = {};
  const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

  const env = () => ({ ...process.env, DOCKER_HOST: `unix://${engine.socketPath}` });
  /** Debian ships Compose v1 as `docker-compose`; Compose v2 is `docker compose`. */
  const compose = async (...args: string[]) => {
    const file = ['-f', join(repoRoot(), 'docker-compose.yml'), '-p', project];
    try {
      return (await run('docker-compose', [...file, ...args], { env: env(), maxBuffer: 16 << 20 })).stdout;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      return (await run('docker', ['compose', ...file, ...args], { env: env(), maxBuffer: 16 << 20 })).stdout;
    }
  };
  const docker = async (...args: string[]) =>
    (await run('docker', args, { env: env(), maxBuffer: 16 << 20 })).stdout;
  const kubectl = async (...args: string[]) =>
    (
      await run('kubectl', ['--kubeconfig', join(dir, 'kubeconfig'), '--request-timeout=30s', ...args], {
        maxBuffer: 16 << 20,
      })
    ).stdout;
  const capstan = async (...args: string[]) =>
    (
      await run(process.execPath, [join(repoRoot(), 'apps/cli/bin/capstan.js'), ...args], {
        env: { ...process.env, KUBECONFIG: join(dir, 'kubeconfig') },
        maxBuffer: 16 << 20,
      })
    ).stdout;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'capstan-compose-'));
    engine = await dockerEngine({ log });
    const started = Date.now();
    await buildServiceImages({ socketPath: engine.socketPath, log });
    await buildNatsImage(engine.socketPath, log);
    figures['images'] = seconds(Date.now() - started);
  }, 15 * 60_000);

  afterAll(async () => {
    await compose('down', '-v', '--remove-orphans').catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
    log(`figures: ${JSON.stringify(figures)}`);
  }, 120_000);

  it(
    'starts NATS, the management cluster, the five services and the dashboard, and provisions a cluster to Available',
    async () => {
      const started = Date.now();
      await compose('up', '-d');
      // The management cluster writes its kubeconfig once the CRDs are served; from the host, its container's address
      // with the name its certificate carries.
      const kubeconfig = await eventually(
        async () =>
          // The images hold node and sh, no coreutils.
          (await compose('exec', '-T', 'management', 'node', '-e', READ_KUBECONFIG).catch(() => '')) || false,
        { timeoutMs: STEP_MS, intervalMs: 2000, message: 'the management cluster kubeconfig' },
      );
      const container = (await compose('ps', '-q', 'management')).trim();
      const address = (
        await docker('inspect', '-f', '{{range .NetworkSettings.Networks}}{{.IPAddress}}{{end}}', container)
      ).trim();
      const parsed = JSON.parse(kubeconfig) as { clusters: { cluster: Record<string, string> }[] };
      parsed.clusters[0]!.cluster['server'] = `https://${address}:6443`;
      parsed.clusters[0]!.cluster['tls-server-name'] = 'management';
      writeFileSync(join(dir, 'kubeconfig'), JSON.stringify(parsed), { mode: 0o600 });
      figures['compose up until the CRDs are served'] = seconds(Date.now() - started);

      const yaml = await capstan(
        'generate',
        'cluster',
        'compose',
        '--kubernetes-version',
        'v1.34.4',
        '--control-plane-machine-count',
        '1',
        '--worker-machine-count',
        '1',
      );
      writeFileSync(join(dir, 'cluster.yaml'), yaml);
      const applied = Date.now();
      await kubectl('apply', '-f', join(dir, 'cluster.yaml'));
      await eventually(
        async () =>
          (await kubectl(
            'get',
            'clusters.cluster.x-k8s.io',
            'compose',
            '-o',
            'jsonpath={.status.conditions[?(@.type=="Available")].status}',
          )) === 'True',
        { timeoutMs: STEP_MS, intervalMs: 2000, message: 'the compose cluster Available' },
      );
      figures['cluster (1 server, 1 worker) to Available'] = seconds(Date.now() - applied);
      // Every service ran in its container, none of them restarted after it found the kubeconfig and NATS.
      const states = await docker(
        'ps',
        '--filter',
        `label=com.docker.compose.project=${project}`,
        '--format',
        '{{.Label "com.docker.compose.service"}} {{.State}}',
      );
      for (const service of [
        'nats',
        'management',
        'core',
        'cluster-provider',
        'machine-provider',
        'bootstrap-provider',
        'control-plane-provider',
        'dashboard',
      ]) {
        expect(states).toMatch(new RegExp(`^${service} running$`, 'm'));
      }
      // The dashboard answers on its container's HTTPS port (its own self-signed certificate, not checked here) and
      // wants a token for its audience.
      const dashboard = (
        await docker(
          'inspect',
          '-f',
          '{{range .NetworkSettings.Networks}}{{.IPAddress}}{{end}}',
          (await compose('ps', '-q', 'dashboard')).trim(),
        )
      ).trim();
      const whoami = await new Promise<number>((resolve, reject) => {
        const request = httpsRequest(
          {
            host: dashboard,
            port: 8443,
            path: '/dashboard/api/whoami',
            rejectUnauthorized: false,
            timeout: 10_000,
          },
          (response) => {
            response.resume();
            resolve(response.statusCode ?? 0);
          },
        );
        request.on('timeout', () => request.destroy(new Error('the dashboard did not answer in 10 s')));
        request.on('error', reject);
        request.end();
      });
      expect(whoami).toBe(401);
    },
    15 * 60_000,
  );

  it(
    'deletes the cluster, then docker-compose down -v leaves nothing of the project',
    async () => {
      await kubectl('delete', 'clusters.cluster.x-k8s.io', 'compose', '--wait=true', '--timeout=300s');
      expect((await kubectl('get', 'machines.cluster.x-k8s.io', '-A', '-o', 'name')).trim()).toBe('');
      await compose('down', '-v', '--remove-orphans');
      const label = `label=com.docker.compose.project=${project}`;
      expect((await docker('ps', '-a', '-q', '--filter', label)).trim()).toBe('');
      expect((await docker('volume', 'ls', '-q', '--filter', label)).trim()).toBe('');
      expect((await docker('network', 'ls', '-q', '--filter', label)).trim()).toBe('');
    },
    10 * 60_000,
  );
});
