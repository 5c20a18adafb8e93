import { DEFAULT_OPTIONS, OptionsError, PHASES, parseOptions } from './options.js';

describe('chaos options', () => {
  it('defaults to the issue figures', () => {
    const options = parseOptions([]);
    expect(options).toMatchObject({
      clusters: 20,
      controlPlanes: 1,
      workers: 2,
      kills: 50,
      natsOutageSeconds: 60,
      freezeSeconds: 60,
      malformedEventsPerSubject: 1000,
      malformedManifests: 200,
    });
    expect(options.seed).toBeUndefined();
    expect(options.phases).toEqual([...PHASES]);
    expect(DEFAULT_OPTIONS.churn).toBe(true);
  });

  it('takes a quick smoke and a seed to replay', () => {
    const options = parseOptions([
      '--clusters',
      '3',
      '--kills=5',
      '--seed',
      '42',
      '--nats-outage-seconds',
      '10',
      '--no-churn',
      '--skip',
      'freeze,malformed-manifests',
      '--agents',
      '2',
      '--agent-plans=3',
      '--agent-api-outage-seconds',
      '5',
    ]);
    expect(options).toMatchObject({
      clusters: 3,
      kills: 5,
      seed: 42,
      natsOutageSeconds: 10,
      churn: false,
      agents: 2,
      agentPlans: 3,
      agentApiOutageSeconds: 5,
    });
    expect(options.phases).toEqual(['kills', 'nats', 'apiserver', 'agents', 'malformed-events']);
    expect(parseOptions(['--phases', 'malformed-events,kills']).phases).toEqual([
      'kills',
      'malformed-events',
    ]);
    expect(parseOptions([]).leaseTimings).toBe('fast');
    expect(parseOptions(['--lease-timings', 'default']).leaseTimings).toBe('default');
    expect(() => parseOptions(['--lease-timings', 'slow'])).toThrow('fast or default');
  });

  it('refuses what it cannot use, naming the flag', () => {
    expect(() => parseOptions(['--clusters', '0'])).toThrow(OptionsError);
    expect(() => parseOptions(['--kills'])).toThrow('--kills needs a value');
    expect(() => parseOptions(['--kills', 'many'])).toThrow('--kills must be an integer');
    expect(() => parseOptions(['--phases', 'chaos-monkey'])).toThrow('unknown phase');
    expect(() => parseOptions(['--seed', String(2 ** 32)])).toThrow('below 2^32');
    expect(() => parseOptions(['--bogus'])).toThrow('unknown option');
    expect(() => parseOptions(['--kubernetes-version', '1.34'])).toThrow('v1.34.4');
  });
});
