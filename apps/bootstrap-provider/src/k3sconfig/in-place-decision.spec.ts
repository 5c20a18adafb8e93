import { decideInPlace } from './in-place-decision.js';

describe('decideInPlace', () => {
  const base = { version: 'v1.34.4', spec: { agentConfig: { nodeLabels: ['a=b'] } } };

  it('takes a patch or one-minor upgrade in place, restarting K3s', () => {
    expect(decideInPlace(base, { ...base, version: 'v1.34.5' })).toEqual({ inPlace: true, restart: true });
    expect(decideInPlace(base, { ...base, version: 'v1.35.4' })).toEqual({ inPlace: true, restart: true });
  });

  it('refuses a downgrade and a skipped minor, naming the version field', () => {
    expect(decideInPlace(base, { ...base, version: 'v1.33.9' })).toMatchObject({
      inPlace: false,
      reason: expect.stringContaining('does not downgrade'),
      fields: ['spec.version'],
    });
    expect(decideInPlace(base, { ...base, version: 'v1.36.0' })).toMatchObject({
      inPlace: false,
      reason: expect.stringContaining('one minor version at a time'),
    });
  });

  it('restarts K3s for config changes but not for files alone', () => {
    expect(decideInPlace(base, { ...base, spec: { agentConfig: { nodeLabels: ['a=c'] } } })).toEqual({
      inPlace: true,
      restart: true,
    });
    const files = { ...base, spec: { ...base.spec, files: [{ path: '/etc/motd', content: 'hi' }] } };
    expect(decideInPlace(base, files)).toEqual({ inPlace: true });
  });

  it('restarts K3s, servers and agents alike, when private registries are added, changed or removed', () => {
    const mirrors = { 'docker.io': { endpoint: ['https://mirror.example.com'] } };
    const withRegistries = { ...base, spec: { ...base.spec, privateRegistriesConfig: { mirrors } } };
    const configs = { 'mirror.example.com': { authSecret: { name: 'pull' } } };
    const changed = { ...base, spec: { ...base.spec, privateRegistriesConfig: { mirrors, configs } } };
    for (const role of ['server', 'agent'] as const) {
      expect(decideInPlace(base, withRegistries, role)).toEqual({ inPlace: true, restart: true });
      expect(decideInPlace(withRegistries, changed, role)).toEqual({ inPlace: true, restart: true });
      expect(decideInPlace(changed, base, role)).toEqual({ inPlace: true, restart: true });
      expect(decideInPlace(changed, structuredClone(changed), role)).toEqual({ inPlace: true });
    }
  });

  it('refuses what only the first boot or the cluster init reads, naming every such field', () => {
    const decision = decideInPlace(base, {
      ...base,
      spec: { ...base.spec, preK3sCommands: ['echo'], serverConfig: { clusterCIDR: '10.99.0.0/16' } },
    });
    expect(decision.inPlace).toBe(false);
    expect(decision.fields).toEqual(['spec.preK3sCommands', 'spec.serverConfig.clusterCIDR']);
    expect(decision.reason).toContain('first boot');
  });

  it('refuses turning secrets encryption on or off in place: K3s reads it when the cluster starts', () => {
    const decision = decideInPlace(base, { ...base, spec: { ...base.spec, serverConfig: { secretsEncryption: true } } });
    expect(decision.inPlace).toBe(false);
    expect(decision.fields).toEqual(['spec.serverConfig.secretsEncryption']);
    expect(decision.reason).toContain('spec.rotateEncryptionKeys');
  });

  it('compares K3s releases when the config pins one', () => {
    const pinned = { version: 'v1.34.4', spec: { version: 'v1.34.4+k3s1' } };
    expect(decideInPlace(pinned, { version: 'v1.34.4', spec: { version: 'v1.34.4+k3s2' } })).toEqual({
      inPlace: true,
      restart: true,
    });
    expect(decideInPlace(pinned, pinned)).toEqual({ inPlace: true });
  });

  it('ignores serverConfig for agents: a server-only change touches them without a restart', () => {
    const serverOnly = { ...base, spec: { ...base.spec, serverConfig: { kubeAPIServerArgs: ['event-ttl=2h'], clusterCIDR: '10.99.0.0/16' } } };
    expect(decideInPlace(base, serverOnly, 'agent')).toEqual({ inPlace: true });
    expect(decideInPlace(base, serverOnly, 'server').inPlace).toBe(false);
  });
});
