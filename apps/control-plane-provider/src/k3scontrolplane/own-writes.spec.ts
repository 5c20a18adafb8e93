import { OWN_WRITE_TTL_MS, OwnWrites } from './own-writes.js';

describe('OwnWrites', () => {
  it('reports the cache stale until it shows a version other than the one read before the write', () => {
    const writes = new OwnWrites();
    writes.record('ns/cp', '10', '11', 0);
    writes.record('ns/cp', '11', '12', 1);
    expect(writes.isStale('ns/cp', '10', 2)).toBe(true);
    expect(writes.isStale('ns/other', '10', 2)).toBe(false);
    expect(writes.isStale('ns/cp', '12', 3)).toBe(false);
    expect(writes.isStale('ns/cp', '10', 4)).toBe(false);
  });

  it('ignores writes that changed nothing, and trusts the cache again after the TTL', () => {
    const writes = new OwnWrites();
    writes.record('ns/cp', '10', '10', 0);
    expect(writes.isStale('ns/cp', '10', 1)).toBe(false);
    writes.record('ns/cp', '10', '11', 0);
    expect(writes.isStale('ns/cp', '10', OWN_WRITE_TTL_MS + 1)).toBe(false);
  });
});
