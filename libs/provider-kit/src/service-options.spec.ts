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

describe('a service help text', () => {
  it("lists the service's own flags after the shared ones", () => {
    let printed = '';
    const write = process.stdout.write;
    process.stdout.write = ((text: string) => {
      printed += text;
      return true;
    }) as typeof process.stdout.write;
    try {
      expect(() => parseServiceOptions('core', ['--help'], {}, 'Core flags:\n  --watch-external-providers  ...')).toThrow();
    } finally {
      process.stdout.write = write;
    }
    expect(printed).toContain('--nats-url');
    expect(printed).toContain('Core flags:\n  --watch-external-providers');
  });
});
