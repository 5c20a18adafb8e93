import { Writable } from 'node:stream';
import { createLogger } from './logger.js';

function capture(): { lines: () => Record<string, unknown>[]; stream: Writable } {
  const chunks: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      chunks.push(chunk.toString());
      callback();
    },
  });
  return { stream, lines: () => chunks.join('').trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>) };
}

describe('createLogger', () => {
  it('writes JSON lines with the service name', () => {
    const out = capture();
    createLogger({ service: 'core', destination: out.stream }).info({ namespace: 'default', name: 'demo' }, 'reconciled');
    expect(out.lines()[0]).toMatchObject({ service: 'core', namespace: 'default', name: 'demo', msg: 'reconciled' });
  });

  it('censors secret-bearing fields at the top level and nested', () => {
    const out = capture();
    const logger = createLogger({ service: 'bootstrap-provider', destination: out.stream });
    logger.info(
      {
        token: 'abc.def',
        secret: { data: { value: 'I2Nsb3VkLWNvbmZpZw==' }, stringData: { value: 'raw' } },
        config: { kubeconfig: 'apiVersion: v1', 'tls.key': '-----BEGIN PRIVATE KEY-----' },
        key: 'default/demo',
      },
      'rendered',
    );
    const text = JSON.stringify(out.lines()[0]);
    for (const leaked of ['abc.def', 'I2Nsb3VkLWNvbmZpZw==', 'raw', 'apiVersion: v1', 'BEGIN PRIVATE KEY']) {
      expect(text).not.toContain(leaked);
    }
    expect(out.lines()[0]).toMatchObject({ key: 'default/demo', token: '[redacted]' });
  });
});
