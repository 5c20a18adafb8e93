import { referencedSimKey, referencedSimRoute } from './provider-writes.js';

describe('sim hand-off routing', () => {
  const ref = { apiGroup: 'infrastructure.capstan.dev', kind: 'SimMachine', name: 'm-0' };

  it('routes an event to the sim object its infrastructureRef names, and nothing else', () => {
    const route = referencedSimRoute('SimMachine', 'simmachine');
    expect(route({ data: { object: { namespace: 'ns' }, infrastructureRef: ref } })).toEqual([
      { controller: 'simmachine', key: 'ns/m-0' },
    ]);
    expect(route({ data: { object: { namespace: 'ns' } } })).toEqual([]);
    expect(
      route({ data: { object: { namespace: 'ns' }, infrastructureRef: { ...ref, apiGroup: 'other.io' } } }),
    ).toEqual([]);
    expect(referencedSimKey('ns', ref, 'SimCluster')).toEqual([]);
  });
});
