import { parseWebhookFlags } from './webhook-flags.js';

describe('parseWebhookFlags', () => {
  it('runs no webhook without a port, and leaves the other flags alone', () => {
    expect(parseWebhookFlags(['--namespace', 'x'], {})).toEqual({ webhook: undefined, rest: ['--namespace', 'x'] });
  });

  it('serves through the Service by default and through a URL when given one', () => {
    const inCluster = parseWebhookFlags(['--webhook-port=9443', '--metrics-port', '0'], {});
    expect(inCluster.rest).toEqual(['--metrics-port', '0']);
    expect(inCluster.webhook).toEqual({
      port: 9443,
      bindAddress: '0.0.0.0',
      clientConfig: { service: { name: 'capstan-core-webhook', namespace: 'capstan-system', path: '/convert', port: 443 } },
      secretName: 'capstan-core-webhook-tls',
    });
    const local = parseWebhookFlags(
      ['--webhook-port', '20443', '--webhook-bind-address', '127.0.0.1', '--webhook-url', 'https://127.0.0.1:20443/convert'],
      {},
    );
    expect(local.webhook).toMatchObject({ bindAddress: '127.0.0.1', clientConfig: { url: 'https://127.0.0.1:20443/convert' } });
    expect(parseWebhookFlags([], { WEBHOOK_PORT: '9443' }).webhook?.port).toBe(9443);
  });

  it('takes the CA of the API server client certificate admission reviews must carry, by flag or environment', () => {
    expect(parseWebhookFlags(['--webhook-port=9443', '--webhook-client-ca-file', '/ca.crt'], {}).webhook?.clientCaFile).toBe('/ca.crt');
    expect(parseWebhookFlags(['--webhook-port=9443'], { WEBHOOK_CLIENT_CA_FILE: '/env-ca.crt' }).webhook?.clientCaFile).toBe('/env-ca.crt');
    expect(parseWebhookFlags(['--webhook-port=9443'], {}).webhook).not.toHaveProperty('clientCaFile');
  });

  it('refuses values it cannot use, naming the flag', () => {
    expect(() => parseWebhookFlags(['--webhook-port', 'soon'], {})).toThrow('--webhook-port must be a port number (1-65535)');
    expect(() => parseWebhookFlags(['--webhook-port', '1', '--webhook-url', 'http://x'], {})).toThrow('--webhook-url must be an https:// URL');
    expect(() => parseWebhookFlags(['--webhook-port', '1', '--webhook-service', 'lonely'], {})).toThrow('--webhook-service must be <namespace>/<name>');
    expect(() => parseWebhookFlags(['--webhook-url'], {})).toThrow('--webhook-url needs a value');
  });
});
