import { testMachine } from '../planning/testing.js';
import { TestScope, testKcp } from '../testing/control-plane-scope.js';
import {
  INITIALIZATION_PROBE_INTERVAL_MS,
  needsProbe,
  probeAgainAfter,
  reconcileInitialization,
} from './k3scontrolplane.probes.js';

describe('initialization probes', () => {
  const machines = [testMachine('a', { ready: false, hasNode: false })];

  it('probe only until initialized, and only once a machine exists', () => {
    expect(needsProbe(false, machines)).toBe(true);
    expect(needsProbe(false, [])).toBe(false);
    expect(needsProbe(true, machines)).toBe(false);
    expect(probeAgainAfter(false, machines)).toBe(INITIALIZATION_PROBE_INTERVAL_MS);
    expect(probeAgainAfter(true, machines)).toBeUndefined();
  });

  it('asks the workload API only while the status does not say initialized', async () => {
    const asked: string[] = [];
    const probe = async (kubeconfig: string) => {
      asked.push(kubeconfig);
      return true;
    };
    const fresh = new TestScope(testKcp(), { facts: machines }).scope;
    expect(await reconcileInitialization(fresh, 'kc', probe)).toBe(true);
    expect(asked).toEqual(['kc']);

    const none = new TestScope(testKcp()).scope;
    expect(await reconcileInitialization(none, 'kc', probe)).toBe(false);
    const done = new TestScope(testKcp({}, { initialization: { controlPlaneInitialized: true } }), {
      facts: machines,
    }).scope;
    expect(await reconcileInitialization(done, 'kc', probe)).toBe(true);
    expect(asked).toEqual(['kc']);
  });
});
