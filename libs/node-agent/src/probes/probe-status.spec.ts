import { nextProbeStatus } from './probe-status.js';

const probe = { successThreshold: 2, failureThreshold: 3, httpGet: { url: 'https://127.0.0.1' } };

describe('nextProbeStatus', () => {
  it('becomes healthy after successThreshold successes and unhealthy after failureThreshold failures', () => {
    let status = nextProbeStatus(probe, undefined, true);
    expect(status).toEqual({ healthy: false, successCount: 1, failureCount: 0 });
    status = nextProbeStatus(probe, status, true);
    expect(status.healthy).toBe(true);
    status = nextProbeStatus(probe, status, false);
    status = nextProbeStatus(probe, status, false);
    expect(status).toEqual({ healthy: true, successCount: 0, failureCount: 2 });
    status = nextProbeStatus(probe, status, false);
    expect(status.healthy).toBe(false);
    expect(nextProbeStatus({ httpGet: probe.httpGet }, undefined, true).healthy).toBe(true);
  });
});
