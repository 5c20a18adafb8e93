import type { KubernetesObject } from '@kubernetes/client-node';
import { specMetadataOrStatusFieldsChanged, specOrMetadataChanged } from './predicates.js';

type Thing = KubernetesObject & { status?: { initialization?: { provisioned?: boolean }; conditions?: { type: string }[] } };

const thing = (metadata: KubernetesObject['metadata'], status: Thing['status'] = {}): Thing => ({
  metadata: { namespace: 'ns', name: 't', generation: 1, ...metadata },
  status,
});

describe('watch predicates', () => {
  it('pass adds, deletes and updates of spec or metadata; not status-only updates', () => {
    const before = thing({ labels: { a: '1' } }, { conditions: [{ type: 'Ready' }] });
    const update = (after: Thing) => specOrMetadataChanged({ type: 'update', object: after, oldObject: before });
    expect(specOrMetadataChanged({ type: 'add', object: before })).toBe(true);
    expect(specOrMetadataChanged({ type: 'delete', object: before })).toBe(true);
    expect(update(thing({ labels: { a: '1' } }, { conditions: [] }))).toBe(false);
    expect(update(thing({ labels: { a: '1' }, generation: 2 }))).toBe(true);
    expect(update(thing({ labels: { a: '2' } }))).toBe(true);
    expect(update(thing({ labels: { a: '1' }, annotations: { 'cluster.x-k8s.io/paused': '' } }))).toBe(true);
    expect(update(thing({ labels: { a: '1' }, deletionTimestamp: new Date(0) }))).toBe(true);
    expect(update(thing({ labels: { a: '1' }, finalizers: ['f'] }))).toBe(true);
  });

  it('pass status updates of the named fields only', () => {
    const changed = specMetadataOrStatusFieldsChanged<Thing>('initialization');
    const before = thing({}, { conditions: [{ type: 'Ready' }] });
    expect(changed({ type: 'update', object: thing({}, { conditions: [] }), oldObject: before })).toBe(false);
    expect(changed({ type: 'update', object: thing({}, { initialization: { provisioned: true } }), oldObject: before })).toBe(true);
  });
});
