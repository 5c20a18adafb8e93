import { chmodSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { HostPathError, HostRoot } from '../apply/host-root.js';
import { AgentConfigError, agentKubeConfig, loadAgentConfig } from './agent-config.js';

// The agent's config is where a cluster owner would aim it elsewhere (issue 32, finding 1): on the sim the machine
// root is a directory on the management host, so the token and CA paths must not climb out of it, and the token goes
// only over https.

describe('the agent config', () => {
  let dir: string;
  let root: HostRoot;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'agent-config-'));
    root = new HostRoot(join(dir, 'machine'));
    mkdirSync(join(dir, 'machine/etc/capstan/agent'), { recursive: true });
    writeFileSync(join(dir, 'machine/etc/capstan/agent/token'), 'machine-token', { mode: 0o600 });
    writeFileSync(join(dir, 'machine/etc/capstan/agent/ca.crt'), 'ca');
    // A file of the management host, next to the machine root.
    writeFileSync(join(dir, 'host-token'), 'management-token');
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const write = (overrides: Record<string, string>) =>
    writeFileSync(
      join(dir, 'machine/etc/capstan/agent/config.yaml'),
      stringify({
        server: 'https://10.0.0.1:6443',
        caFile: '/etc/capstan/agent/ca.crt',
        tokenFile: '/etc/capstan/agent/token',
        namespace: 'ns',
        secretName: 'm-machine-plan',
        ...overrides,
      }),
      { mode: 0o600 },
    );
  const load = () => loadAgentConfig(root, '/etc/capstan/agent/config.yaml');

  it('reads a config that stays inside the machine', () => {
    write({});
    expect(load()).toMatchObject({ server: 'https://10.0.0.1:6443', tokenFile: '/etc/capstan/agent/token' });
  });

  it.each([
    [
      'a tokenFile climbing out of the machine root',
      { tokenFile: '/../host-token' },
      /tokenFile must be an absolute machine path/,
    ],
    [
      'a caFile climbing out of the machine root',
      { caFile: '/etc/../../host-token' },
      /caFile must be an absolute machine path/,
    ],
    ['a relative tokenFile', { tokenFile: 'token' }, /tokenFile must be an absolute machine path/],
    ['a plain-http server', { server: 'http://10.0.0.1:6443' }, /server must be an https:\/\/ URL/],
  ])('refuses %s, naming the rule', (_what, overrides, rule) => {
    write(overrides);
    expect(load).toThrow(AgentConfigError);
    expect(load).toThrow(rule);
  });

  it('never reads a host file through a path that climbs out, even past the config check', () => {
    write({});
    const config = load();
    expect(() => agentKubeConfig(root, { ...config, tokenFile: '/../host-token' })).toThrow(HostPathError);
  });

  it('reads no token through a symbolic link and none that others can read', () => {
    write({});
    const config = load();
    unlinkSync(join(dir, 'machine/etc/capstan/agent/token'));
    symlinkSync(join(dir, 'host-token'), join(dir, 'machine/etc/capstan/agent/token'));
    expect(() => agentKubeConfig(root, config)).toThrow('tokenFile cannot be read (ELOOP)');
    unlinkSync(join(dir, 'machine/etc/capstan/agent/token'));
    writeFileSync(join(dir, 'machine/etc/capstan/agent/token'), 'machine-token', { mode: 0o644 });
    chmodSync(join(dir, 'machine/etc/capstan/agent/token'), 0o644);
    expect(() => agentKubeConfig(root, config)).toThrow('tokenFile must have mode 0600 (has 0644)');
  });

  it('refuses a config that is a symbolic link to a file outside the machine', () => {
    writeFileSync(join(dir, 'host-config.yaml'), stringify({ server: 'https://attacker:6443' }), { mode: 0o600 });
    symlinkSync(join(dir, 'host-config.yaml'), join(dir, 'machine/etc/capstan/agent/config.yaml'));
    expect(load).toThrow('cannot be read (ELOOP)');
  });
});

describe('HostRoot', () => {
  it('resolves machine paths under the root and refuses the rest', () => {
    const root = new HostRoot('/srv/machines/m1');
    expect(root.resolve('/etc/motd')).toBe('/srv/machines/m1/etc/motd');
    for (const path of ['etc/motd', '/../etc/shadow', '/a/../../b', '/a/..', '/a\0b']) {
      expect(() => root.resolve(path, 'the file')).toThrow('the file must be an absolute machine path');
    }
    expect(new HostRoot('/').resolve('/etc/motd')).toBe('/etc/motd');
  });
});
