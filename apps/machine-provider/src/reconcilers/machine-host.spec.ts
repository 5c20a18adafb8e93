import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { SimMachine } from '@capstan/api';
import { BootstrapDataError, K3S_CONFIG_PATH, type ParsedK3sBootstrap } from '@capstan/k3s-bootstrap';
import { SIM_INSTALL_RECORD_PATH, type SimClusterRef, type SimRuntime } from '@capstan/sim';
import { pinnedKubeApiserverVersions } from '@capstan/testing/local-host';
import { newestInstalledServer, type MachineHost } from './machine-host.js';

describe('newestInstalledServer', () => {
  let stateDir: string;
  // Only the state directory is read: where each machine's root is.
  const runtime = {
    stateDir: { machineDir: (namespace: string, name: string) => join(stateDir, namespace, name) },
  } as unknown as SimRuntime;
  const cluster: SimClusterRef = {
    namespace: 'ns',
    clusterName: 'alpha',
    mode: 'dedicated',
    endpoint: { host: '127.0.0.1', port: 31001 },
  };
  const [older, newer] = pinnedKubeApiserverVersions().map(({ version }) => `${version}+k3s1`);

  const server = (name: string): SimMachine => ({
    apiVersion: 'infrastructure.capstan.dev/v1alpha1',
    kind: 'SimMachine',
    metadata: { name, namespace: 'ns', uid: `uid-${name}` },
    spec: {},
  });
  const hostOf = (machine: SimMachine): MachineHost => ({
    machine,
    providerID: `sim://ns/${machine.metadata!.name}`,
    cluster,
    parsed: { role: 'join-server', version: older } as ParsedK3sBootstrap,
  });
  const writeMachineFile = (name: string, path: string, content: string) => {
    const file = join(stateDir, 'ns', name, path);
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, content);
  };
  const install = (name: string, version: string, at: string, apiServerArgs: string[] = []) => {
    writeMachineFile(name, SIM_INSTALL_RECORD_PATH, JSON.stringify({ version, exec: 'server', at }));
    writeMachineFile(
      name,
      K3S_CONFIG_PATH,
      `kube-apiserver-arg:\n${apiServerArgs.map((arg) => `  - ${arg}\n`).join('')}`,
    );
  };

  beforeEach(() => {
    stateDir = mkdtempSync(join(tmpdir(), 'capstan-machine-host-'));
  });
  afterEach(() => rmSync(stateDir, { recursive: true, force: true }));

  it('starts the cluster API server on the newest install of any of its servers, not the first one reconciled', () => {
    expect(newer).toBeDefined();
    install('first', older!, '2026-11-29T01:00:00.000Z', ['event-ttl=1h']);
    install('second', newer!, '2026-11-29T01:05:00.000Z', ['event-ttl=2h']);
    install('third', newer!, '2026-11-29T01:03:00.000Z');

    const chosen = newestInstalledServer(runtime, hostOf(server('first')), [
      server('second'),
      server('third'),
    ]);

    expect(chosen).toMatchObject({
      version: newer,
      installedAt: '2026-11-29T01:05:00.000Z',
      // The flags of the machine whose install it is.
      extraArgs: ['--event-ttl=2h'],
    });
  });

  it('keeps what the bootstrap installed when no server installed anything since', () => {
    writeMachineFile(
      'first',
      SIM_INSTALL_RECORD_PATH,
      JSON.stringify({ version: older, exec: 'server', at: 'boot' }),
    );
    expect(newestInstalledServer(runtime, hostOf(server('first')), [server('second')])).toBeUndefined();
  });

  it("passes over another server's refused configuration but throws this machine's", () => {
    install('first', older!, '2026-11-29T01:00:00.000Z');
    install('second', newer!, '2026-11-29T01:05:00.000Z', ['etcd-servers=https://elsewhere:2379']);

    expect(newestInstalledServer(runtime, hostOf(server('first')), [server('second')])).toMatchObject({
      version: older,
    });
    expect(() => newestInstalledServer(runtime, hostOf(server('second')), [server('first')])).toThrow(
      BootstrapDataError,
    );
  });
});
