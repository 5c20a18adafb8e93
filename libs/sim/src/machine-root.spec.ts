import { BootstrapDataError } from '@capstan/k3s-bootstrap';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  acknowledgeInstall,
  kubeApiserverArgsOf,
  readInstalledK3s,
  readMachineK3sConfig,
  writeMachineFiles,
} from './machine-root.js';

// A machine's `kube-apiserver-arg` reaches a kube-apiserver the sim runs on the management host (issue 32, finding 4).

describe('kubeApiserverArgsOf', () => {
  it('passes the flags that only tune the server, as --name=value', () => {
    expect(
      kubeApiserverArgsOf({ 'kube-apiserver-arg': ['event-ttl=2h', '--v=2', 'profiling=false'] }),
    ).toEqual(['--event-ttl=2h', '--v=2', '--profiling=false']);
    expect(kubeApiserverArgsOf({ 'kube-apiserver-arg': 'max-requests-inflight=100' })).toEqual([
      '--max-requests-inflight=100',
    ]);
    expect(kubeApiserverArgsOf({})).toEqual([]);
  });

  it.each([
    ['storage', 'etcd-servers=http://127.0.0.1:2379'],
    ['authentication', 'token-auth-file=/etc/kubernetes/tokens.csv'],
    ['authorization', 'authorization-mode=AlwaysAllow'],
    ['a host file', 'audit-log-path=/etc/passwd'],
    ['admission', 'admission-control-config-file=/tmp/x'],
    ['a listener', 'bind-address=0.0.0.0'],
  ])('refuses a %s flag, naming it and not its value', (_what, arg) => {
    const attempt = () => kubeApiserverArgsOf({ 'kube-apiserver-arg': ['event-ttl=2h', arg] });
    expect(attempt).toThrow(BootstrapDataError);
    expect(attempt).toThrow(`kube-apiserver-arg[1] sets --${arg.split('=')[0]}, which the sim does not pass`);
    try {
      attempt();
    } catch (error) {
      expect((error as Error).message).not.toContain(arg.split('=')[1]);
    }
  });

  it('refuses what is not a flag', () => {
    expect(() => kubeApiserverArgsOf({ 'kube-apiserver-arg': ['$(reboot)'] })).toThrow('is not name[=value]');
  });
});

// Issue 32, finding 6 on the sim's side: the sim writes and reads machine files on the management host (the install
// acknowledgement, the install record, the K3s config), where a symlink an instruction planted would lead elsewhere.
describe('the sim reads and writes a machine root without following its symbolic links', () => {
  let dir: string;
  let machine: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'machine-root-'));
    machine = join(dir, 'machine');
    mkdirSync(join(machine, 'var/lib/capstan'), { recursive: true });
    mkdirSync(join(machine, 'etc/rancher/k3s'), { recursive: true });
    mkdirSync(join(dir, 'host'));
    writeFileSync(join(dir, 'host/install-applied'), 'host file');
    writeFileSync(join(dir, 'host/install.json'), JSON.stringify({ version: 'v1.35.4+k3s1', exec: 'server', at: 'x' }));
    writeFileSync(join(dir, 'host/config.yaml'), 'kube-apiserver-arg: [event-ttl=2h]\n');
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('refuses to acknowledge an install through a linked directory and leaves the host file', () => {
    symlinkSync(join(dir, 'host'), join(machine, 'var/lib/capstan/sim'));
    expect(() => acknowledgeInstall(machine, '2026-11-27T00:00:00Z')).toThrow('ELOOP');
    expect(readFileSync(join(dir, 'host/install-applied'), 'utf8')).toBe('host file');
    expect(readInstalledK3s(machine)).toBeUndefined();
  });

  it('reads no K3s config through a link', () => {
    symlinkSync(join(dir, 'host/config.yaml'), join(machine, 'etc/rancher/k3s/config.yaml'));
    expect(readMachineK3sConfig(machine)).toEqual({});
  });

  it('replaces a link at a file it writes instead of writing through it', () => {
    mkdirSync(join(machine, 'etc/motd.d'));
    symlinkSync(join(dir, 'host/install-applied'), join(machine, 'etc/motd.d/welcome'));
    writeMachineFiles(machine, [{ path: '/etc/motd.d/welcome', content: Buffer.from('hi'), permissions: '0644' }]);
    expect(readFileSync(join(dir, 'host/install-applied'), 'utf8')).toBe('host file');
    expect(readFileSync(join(machine, 'etc/motd.d/welcome'), 'utf8')).toBe('hi');
  });
});
