import { parseServiceOptions } from './service-options.js';

describe('parseServiceOptions', () => {
  it('takes flags over environment variables over defaults', () => {
    const options = parseServiceOptions('core', ['--http-port', '0', '--leader-elect', '--sync-period', '30'], {
      NATS_URL: 'nats://bus:4222',
      HTTP_PORT: '9000',
      POD_NAME: 'core-abc',
    });
    expect(options).toMatchObject({
      natsUrl: 'nats://bus:4222',
      httpPort: 0,
      leaderElect: true,
      leaderElectionId: 'capstan-core',
      leaderElectionNamespace: 'capstan-system',
      identity: 'core-abc',
      syncPeriodSeconds: 30,
      streamName: 'CAPSTAN',
      subjectRoot: 'capstan',
    });
  });

  it('refuses a malformed number with commander’s error, not a crash later', () => {
    expect(() => parseServiceOptions('core', ['--concurrency', 'many'], {})).toThrow(/whole number/);
  });
});
