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

  it('takes --sharding and upstream-style Lease durations, and refuses --sharding with --leader-elect', () => {
    const options = parseServiceOptions(
      'core',
      ['--sharding', '--leader-elect-lease-duration', '6s', '--leader-elect-renew-deadline', '4000ms', '--leader-elect-retry-period', '0.5s'],
      {},
    );
    expect(options).toMatchObject({ sharding: true, leaderElect: false, leaseDurationMs: 6000, renewDeadlineMs: 4000, retryPeriodMs: 500 });
    expect(parseServiceOptions('core', [], { SHARDING: 'true' }).sharding).toBe(true);
    expect(parseServiceOptions('core', [], {})).toMatchObject({ sharding: false, leaseDurationMs: 15_000, renewDeadlineMs: 10_000, retryPeriodMs: 2_000 });
    expect(() => parseServiceOptions('core', ['--sharding', '--leader-elect'], {})).toThrow(/exclude each other/);
    expect(() => parseServiceOptions('core', ['--leader-elect-lease-duration', 'soon'], {})).toThrow(/duration such as 15s/);
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
