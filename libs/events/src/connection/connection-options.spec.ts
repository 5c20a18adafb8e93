import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConnectionOptionsError } from '../errors.js';
import {
  natsOptionsFromEnv,
  redactServerUrl,
  serverList,
  toNatsConnectOptions,
} from './connection-options.js';

describe('NATS connection options', () => {
  it('reconnects forever with jitter', () => {
    expect(toNatsConnectOptions({ servers: 'nats://a:4222' })).toMatchObject({
      servers: ['nats://a:4222'],
      reconnect: true,
      maxReconnectAttempts: -1,
      reconnectTimeWait: 1000,
      reconnectJitter: 1000,
      waitOnFirstConnect: false,
    });
  });

  it('splits and trims server lists', () => {
    expect(serverList('nats://a:4222, nats://b:4222,')).toEqual(['nats://a:4222', 'nats://b:4222']);
    expect(() => serverList(' ')).toThrow(ConnectionOptionsError);
  });

  it('builds one authenticator per credential kind', () => {
    const options = toNatsConnectOptions({ servers: 'x', user: 'u', password: 'p', token: 't' });
    expect(options.authenticator).toHaveLength(2);
    expect(toNatsConnectOptions({ servers: 'x' }).authenticator).toBeUndefined();
  });

  it.each([
    [{ password: 'p' }, /needs a user/],
    [{ nkeySeed: 'SUABC', credsFile: '/x' }, /not both/],
    [{ nkeySeed: 'NOTASEED' }, /starts with "SU"/],
    [{ credsFile: '/does/not/exist.creds' }, /cannot read the NATS creds file/],
    [{ tls: { certFile: '/c.pem' } }, /needs its key/],
  ])('refuses %j', (extra, message) => {
    expect(() => toNatsConnectOptions({ servers: 'x', ...extra })).toThrow(message);
  });

  it('passes TLS files through and requires TLS for tls: true', () => {
    expect(
      toNatsConnectOptions({
        servers: 'x',
        tls: { caFile: '/ca.pem', certFile: '/c.pem', keyFile: '/k.pem' },
      }).tls,
    ).toEqual({
      caFile: '/ca.pem',
      certFile: '/c.pem',
      keyFile: '/k.pem',
    });
    expect(toNatsConnectOptions({ servers: 'x', tls: true }).tls).toEqual({});
    expect(toNatsConnectOptions({ servers: 'x' }).tls).toBeUndefined();
  });

  it('reads the environment the way the nats CLI names it', () => {
    const dir = mkdtempSync(join(tmpdir(), 'nats-env-'));
    writeFileSync(join(dir, 'seed'), 'SUAM7Y\n');
    expect(
      natsOptionsFromEnv({
        NATS_URL: 'nats://a:4222',
        NATS_USER: 'u',
        NATS_PASSWORD: 'p',
        NATS_NKEY: join(dir, 'seed'),
        NATS_CA: '/ca.pem',
      }),
    ).toEqual({
      servers: 'nats://a:4222',
      user: 'u',
      password: 'p',
      nkeySeed: 'SUAM7Y',
      tls: { caFile: '/ca.pem', certFile: undefined, keyFile: undefined },
      name: undefined,
      token: undefined,
      credsFile: undefined,
    });
    expect(natsOptionsFromEnv({})).toBeUndefined();
  });

  it('removes credentials from URLs before they are logged', () => {
    expect(redactServerUrl('nats://user:secret@host:4222')).toBe('nats://host:4222');
    expect(redactServerUrl('tls://host:4222')).toBe('tls://host:4222');
  });
});
