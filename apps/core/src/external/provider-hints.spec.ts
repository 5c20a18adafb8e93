import { ProviderHints } from './provider-hints.js';

const machine = { apiGroup: 'infrastructure.cluster.x-k8s.io', kind: 'SimMachine', namespace: 'ns', name: 'm1' };
const other = { ...machine, name: 'm2' };
const at = (resourceVersion: string) => ({ metadata: { resourceVersion } });

describe('ProviderHints', () => {
  it('lets the cache serve an object nobody named a version of', () => {
    const hints = new ProviderHints();
    expect(hints.satisfiedBy(machine, at('5'))).toBe(true);
  });

  it('keeps the cache from serving an object older than a named version, until it holds that version', () => {
    const hints = new ProviderHints();
    hints.record(machine, '9');
    expect(hints.satisfiedBy(machine, at('5'))).toBe(false);
    expect(hints.satisfiedBy(other, at('5'))).toBe(true);
    expect(hints.satisfiedBy(machine, at('9'))).toBe(true);
    expect(hints.outstanding(machine)).toBeUndefined();
  });

  it('settles a version with a read from the API server that started after it, not one recorded during the read', () => {
    const hints = new ProviderHints();
    hints.record(machine, '9');
    const before = hints.outstanding(machine);
    hints.record(machine, '12'); // a newer hint while the GET was under way
    hints.settle(machine, before);
    expect(hints.outstanding(machine)).toBe('12');
    hints.settle(machine, hints.outstanding(machine));
    expect(hints.size).toBe(0);
  });

  it('forgets a version once the informer delivers it or the deletion, and ignores writes without a version', () => {
    const hints = new ProviderHints();
    hints.record(machine, '9');
    hints.seen(machine, '8');
    expect(hints.outstanding(machine)).toBe('9');
    hints.seen(machine, '9');
    expect(hints.size).toBe(0);
    hints.record(machine, '10');
    hints.seen(machine, '3', true);
    expect(hints.size).toBe(0);
    hints.record(machine, undefined);
    expect(hints.size).toBe(0);
  });
});
