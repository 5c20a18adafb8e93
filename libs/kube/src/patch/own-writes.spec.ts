import { OWN_WRITE_TTL_MS, OwnWrites } from './own-writes.js';

const at = (rv: string, name = 'cp') => ({ metadata: { namespace: 'ns', name, resourceVersion: rv } });

describe('OwnWrites', () => {
  it('knows the versions its writes produced, a few per object', () => {
    const writes = new OwnWrites(2);
    writes.record(at('11'));
    writes.record(at('12'));
    expect(writes.isOwn(at('11'))).toBe(true);
    expect(writes.isOwn(at('13'))).toBe(false);
    expect(writes.isOwn(at('11', 'other'))).toBe(false);
    writes.record(at('13'));
    expect(writes.isOwn(at('11'))).toBe(false);
    writes.forget('ns/cp');
    expect(writes.isOwn(at('13'))).toBe(false);
  });

  it('reports the cache stale until it shows a version other than the one read before the write', () => {
    const writes = new OwnWrites();
    writes.record(at('11'), '10', 0);
    writes.record(at('12'), '11', 1);
    expect(writes.isStale('ns/cp', '10', 2)).toBe(true);
    // The version between two writes of one reconcile is as stale as the first.
    expect(writes.isStale('ns/cp', '11', 2)).toBe(true);
    expect(writes.isStale('ns/other', '10', 2)).toBe(false);
    expect(writes.isStale('ns/cp', '12', 3)).toBe(false);
    expect(writes.isStale('ns/cp', '10', 4)).toBe(false);
  });

  it('ignores writes that changed nothing, and trusts the cache again after the TTL', () => {
    const writes = new OwnWrites();
    writes.record(at('10'), '10', 0);
    expect(writes.isStale('ns/cp', '10', 1)).toBe(false);
    writes.record(at('11'), '10', 0);
    expect(writes.isStale('ns/cp', '10', OWN_WRITE_TTL_MS + 1)).toBe(false);
  });
});
