import { prefixRangeEnd } from './etcd.js';

describe('etcd prefix range', () => {
  it('ends a prefix range at the next key after every key that starts with it', () => {
    expect(prefixRangeEnd('/capstan-sim/ns/demo/')).toBe('/capstan-sim/ns/demo0');
    expect(prefixRangeEnd('a')).toBe('b');
    expect(prefixRangeEnd('a\u00ff')).not.toBe('a');
  });
});
