import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startLocalServices, stopLocalServices, type LocalService } from './local-services.js';
import { installCapstanDefinitions } from './capstan-definitions.js';
import { testKubeConfig, testNatsUrl } from './namespace.js';
import { freePort } from './ports.js';

// A port chosen free can be bound by another process before the service binds it (the chaos suite lost a restarted
// replica that way): the start is made again with other ports.

describe('local services', () => {
  let taken: Server | undefined;
  let services: LocalService[] = [];
  const logDir = mkdtempSync(join(tmpdir(), 'capstan-local-services-'));

  beforeAll(() => installCapstanDefinitions(testKubeConfig()));
  afterAll(async () => {
    await stopLocalServices(services);
    taken?.close();
    rmSync(logDir, { recursive: true, force: true });
  });

  it('start again on other ports when a chosen one was taken meanwhile', async () => {
    const takenPort = await freePort();
    taken = createServer();
    await new Promise<void>((resolve) => taken!.listen(takenPort, '127.0.0.1', resolve));
    let handedOut = 0;
    services = await startLocalServices({
      kubeconfigPath: process.env['CAPSTAN_TEST_KUBECONFIG']!,
      natsUrl: testNatsUrl(),
      logDir,
      services: ['bootstrap-provider'],
      subjectRoot: 'local-services-test',
      streamName: 'LOCAL_SERVICES_TEST',
      // The first port handed out is the one a listener already holds.
      choosePort: () => (handedOut++ === 0 ? Promise.resolve(takenPort) : freePort()),
    });
    expect(services).toHaveLength(1);
    expect(new URL(services[0]!.url).port).not.toBe(String(takenPort));
    expect(readFileSync(services[0]!.logFile, 'utf8')).toContain('EADDRINUSE');
    expect((await fetch(`${services[0]!.url}/readyz`)).status).toBe(200);
  });
});
