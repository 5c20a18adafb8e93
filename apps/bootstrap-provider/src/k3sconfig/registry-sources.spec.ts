import type { V1Secret } from '@kubernetes/client-node';
import type { PrivateRegistriesConfig } from '@capstan/api';
import { SECRETS, type ResourceClient } from '@capstan/kube';
import { InMemoryApiServer } from '@capstan/kube/testing';
import { resolveRegistries } from './registry-sources.js';

const NS = 'fleet';
const PASSWORD = 'pa55-w0rd-never-shown';
const CA = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n';

describe('resolveRegistries', () => {
  let secrets: ResourceClient<V1Secret>;

  // `data`, as the API server stores `stringData` (the in-memory one does not convert).
  const secret = (name: string, text: Record<string, string>, type = 'Opaque') =>
    secrets.create({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name, namespace: NS },
      type,
      data: Object.fromEntries(Object.entries(text).map(([k, v]) => [k, Buffer.from(v).toString('base64')])),
    });
  const resolve = (config: PrivateRegistriesConfig | undefined) => resolveRegistries(NS, config, secrets);

  beforeEach(() => {
    secrets = new InMemoryApiServer([SECRETS]).client().resource<V1Secret>(SECRETS);
  });

  it('needs nothing without privateRegistriesConfig', async () => {
    expect(await resolve(undefined)).toEqual({ resolved: true });
  });

  it('reads basic-auth credentials, an identity token and the TLS Secret; the inline caBundle wins over ca.crt', async () => {
    await secret('registry-auth', { username: 'puller', password: PASSWORD }, 'kubernetes.io/basic-auth');
    await secret('quay-token', { 'identity-token': 'token-value' });
    await secret(
      'registry-tls',
      { 'ca.crt': 'secret ca', 'tls.crt': 'client cert', 'tls.key': 'client key' },
      'kubernetes.io/tls',
    );
    const mirrors = { 'docker.io': { endpoint: ['https://registry.example.com:5000'] } };
    expect(
      await resolve({
        mirrors,
        configs: {
          'registry.example.com:5000': {
            authSecret: { name: 'registry-auth' },
            tls: { tlsConfigSecret: { name: 'registry-tls' }, insecureSkipVerify: false },
          },
          'quay.example.com': { authSecret: { name: 'quay-token' } },
          'ca.example.com': { tls: { caBundle: CA, tlsConfigSecret: { name: 'registry-tls' } } },
        },
      }),
    ).toEqual({
      resolved: true,
      registries: {
        mirrors,
        configs: {
          'registry.example.com:5000': {
            auth: { username: 'puller', password: PASSWORD },
            tls: {
              caPem: 'secret ca',
              certPem: 'client cert',
              keyPem: 'client key',
              insecureSkipVerify: false,
            },
          },
          'quay.example.com': { auth: { identityToken: 'token-value' } },
          'ca.example.com': { tls: { caPem: CA, certPem: 'client cert', keyPem: 'client key' } },
        },
      },
    });
  });

  it.each([
    ['a missing auth Secret', undefined, 'secret registry-auth not found'],
    ['a password without its username', { password: PASSWORD }, 'secret registry-auth has no key username'],
    ['a username without its password', { username: 'puller' }, 'secret registry-auth has no key password'],
    [
      'no credentials at all',
      { token: PASSWORD },
      'secret registry-auth has neither the keys username and password nor identity-token',
    ],
  ])('names the auth Secret and the key for %s, never a value', async (_case, data, problem) => {
    if (data) await secret('registry-auth', data);
    const result = await resolve({
      configs: { 'registry.example.com': { authSecret: { name: 'registry-auth' } } },
    });
    expect(result).toEqual({
      resolved: false,
      message: `spec.privateRegistriesConfig.configs[registry.example.com].authSecret: ${problem}`,
    });
  });

  it.each([
    ['a missing TLS Secret', undefined, 'secret registry-tls not found'],
    ['a client certificate without its key', { 'tls.crt': 'cert' }, 'secret registry-tls has no key tls.key'],
    ['a key without its certificate', { 'tls.key': PASSWORD }, 'secret registry-tls has no key tls.crt'],
    [
      'none of its keys',
      { other: PASSWORD },
      'secret registry-tls has none of the keys ca.crt, tls.crt and tls.key',
    ],
    [
      'a key larger than a PEM may be',
      { 'tls.crt': 'c', 'tls.key': `${PASSWORD}${'x'.repeat(70_000)}` },
      'key tls.key of secret registry-tls is 70021 bytes, more than the 65536 a PEM may be',
    ],
  ])('names the TLS Secret and the key for %s, never a value', async (_case, data, problem) => {
    if (data) await secret('registry-tls', data);
    const result = await resolve({
      configs: { '*': { tls: { tlsConfigSecret: { name: 'registry-tls' } } } },
    });
    expect(result).toEqual({
      resolved: false,
      message: `spec.privateRegistriesConfig.configs[*].tls.tlsConfigSecret: ${problem}`,
    });
  });
});
