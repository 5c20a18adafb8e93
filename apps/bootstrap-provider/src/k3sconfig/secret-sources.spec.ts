import type { V1Secret } from '@kubernetes/client-node';
import { SECRETS, type ResourceClient } from '@capstan/kube';
import { InMemoryApiServer } from '@capstan/kube/testing';
import { resolveSecretSources } from './secret-sources.js';

describe('resolveSecretSources', () => {
  let secrets: ResourceClient<V1Secret>;
  const spec = {
    files: [{ path: '/etc/motd', contentFrom: { secret: { name: 'motd', key: 'text' } } }],
    privateRegistriesConfig: {
      configs: { 'registry.example.com': { authSecret: { name: 'registry-auth' } } },
    },
  };
  const create = (name: string, data: Record<string, string>) =>
    secrets.create({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name, namespace: 'ns' },
      data: Object.fromEntries(Object.entries(data).map(([k, v]) => [k, Buffer.from(v).toString('base64')])),
    });

  beforeEach(() => {
    secrets = new InMemoryApiServer([SECRETS]).client().resource<V1Secret>(SECRETS);
  });

  it('waits for the file Secret first, then the registry Secret, each with its own reason', async () => {
    expect(await resolveSecretSources('ns', spec, secrets)).toEqual({
      resolved: false,
      reason: 'WaitingForFileSecret',
      message: 'spec.files[0]: secret motd not found',
    });
    await create('motd', { text: 'welcome' });
    expect(await resolveSecretSources('ns', spec, secrets)).toMatchObject({
      resolved: false,
      reason: 'WaitingForRegistrySecret',
    });
    await create('registry-auth', { username: 'puller', password: 'pa55' });
    expect(await resolveSecretSources('ns', spec, secrets)).toEqual({
      resolved: true,
      read: {
        files: [{ path: '/etc/motd', content: 'welcome' }],
        registries: {
          configs: { 'registry.example.com': { auth: { username: 'puller', password: 'pa55' } } },
        },
      },
    });
  });

  it('reads nothing for a spec without Secrets', async () => {
    expect(await resolveSecretSources('ns', {}, secrets)).toEqual({ resolved: true, read: { files: [] } });
  });
});
