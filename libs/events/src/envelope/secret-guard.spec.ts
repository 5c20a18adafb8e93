import { SecretLikePayloadError } from '../errors.js';
import { assertNoSecrets } from './secret-guard.js';

describe('secret guard', () => {
  it.each([
    [{ token: 'x' }, 'data.token'],
    [{ Password: 'x' }, 'data.Password'],
    [{ nested: { kubeconfig: 'x' } }, 'data.nested.kubeconfig'],
    [{ list: [{ value: 'x' }] }, 'data.list[0].value'],
    [{ bootstrapData: 'x' }, 'data.bootstrapData'],
    [{ bootstrap_token: 'x' }, 'data.bootstrap_token'],
    [{ 'tls.key': 'x' }, 'data.tls.key'],
    [{ etcdPrivateKey: 'x' }, 'data.etcdPrivateKey'],
    [{ key: 'x' }, 'data.key'],
    [{ note: '-----BEGIN RSA PRIVATE KEY-----\nMIIE' }, 'data.note'],
    [{ note: '-----BEGIN CERTIFICATE-----' }, 'data.note'],
    [{ note: 'Bearer eyJhbGciOiJSUzI1NiIs.eyJpc3MiOiJrdWJlcm5ldGVz.sig' }, 'data.note'],
    [{ note: 'users:\n- user:\n    client-key-data: LS0t' }, 'data.note'],
  ])('refuses %j at %s', (value, path) => {
    expect(() => assertNoSecrets(value)).toThrow(SecretLikePayloadError);
    try {
      assertNoSecrets(value);
    } catch (error) {
      expect((error as SecretLikePayloadError).path).toBe(path);
    }
  });

  it('never puts the value in the message', () => {
    expect(() => assertNoSecrets({ token: 'hunter2' })).toThrow(
      expect.objectContaining({ message: expect.not.stringContaining('hunter2') }),
    );
  });

  it('accepts names of secrets and ordinary contract fields', () => {
    expect(() =>
      assertNoSecrets({
        dataSecretName: 'demo-bootstrap',
        bootstrapDataSecretName: 'x',
        providerID: 'sim://demo/m-1',
        addresses: [{ type: 'InternalIP', address: '10.0.0.1' }],
        controlPlaneEndpoint: { host: 'demo.example.com', port: 6443 },
        monkey: 'keyboard',
      }),
    ).not.toThrow();
  });

  it('refuses absurd nesting', () => {
    let deep: object = {};
    for (let i = 0; i < 40; i++) deep = { a: deep };
    expect(() => assertNoSecrets(deep)).toThrow(/nested deeper/);
  });
});
