import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { installCapstanDefinitions } from './capstan-definitions.js';
import {
  LOCAL_SERVICES,
  startLocalServices,
  stopLocalServices,
  type LocalService,
} from './local-services.js';
import { createTestNamespace, testNatsUrl, type TestNamespace } from './namespace.js';
import { repoRoot } from './repo.js';

// The five services need nothing of each other to start, so every end-to-end file's startCapstan starts them together
// (one after another cost about 1.3 s each): each is started before any is ready, and all come back ready, in the
// order of LOCAL_SERVICES.

describe('starting the five local services', () => {
  let namespace: TestNamespace;
  let services: LocalService[] = [];
  const logDir = mkdtempSync(join(tmpdir(), 'capstan-local-services-start-'));
  const simStateDir = mkdtempSync(join(tmpdir(), 'capstan-local-services-start-sim-'));

  beforeAll(async () => {
    execFileSync(process.execPath, ['scripts/build.mjs'], { cwd: repoRoot(), stdio: 'ignore' });
    namespace = await createTestNamespace('start');
    await installCapstanDefinitions(namespace.kc);
  }, 300_000);
  afterAll(async () => {
    await stopLocalServices(services);
    await namespace?.delete();
    rmSync(logDir, { recursive: true, force: true });
    rmSync(simStateDir, { recursive: true, force: true });
  });

  it('starts them together: every one is started before the first is ready', async () => {
    const progress: string[] = [];
    const id = randomBytes(3).toString('hex');
    services = await startLocalServices({
      kubeconfigPath: process.env['CAPSTAN_TEST_KUBECONFIG']!,
      natsUrl: testNatsUrl(),
      logDir,
      simStateDir,
      namespace: namespace.name,
      subjectRoot: `start${id}`,
      streamName: `START_${id.toUpperCase()}`,
      onProgress: (name, state) => progress.push(`${state} ${name}`),
    });
    const firstReady = progress.findIndex((p) => p.startsWith('ready'));
    expect(progress.slice(0, firstReady).sort()).toEqual(
      LOCAL_SERVICES.map((name) => `starting ${name}`).sort(),
    );
    expect(progress.filter((p) => p.startsWith('ready')).sort()).toEqual(
      LOCAL_SERVICES.map((name) => `ready ${name}`).sort(),
    );
    expect(services.map((s) => s.name)).toEqual([...LOCAL_SERVICES]);
    // Each on its own ports, each answering for itself.
    const ports = services.flatMap((s) => [new URL(s.url).port, new URL(s.adminUrl).port]);
    expect(new Set(ports).size).toBe(ports.length);
    for (const service of services) expect((await fetch(`${service.url}/readyz`)).status).toBe(200);
  }, 120_000);
});
