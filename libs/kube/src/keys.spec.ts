import { objectKey, parseKey } from './keys.js';

describe('keys', () => {
  it('are namespace/name, or the name alone for cluster-scoped objects, and parse back', () => {
    expect(objectKey({ metadata: { namespace: 'ns', name: 'a' } })).toBe('ns/a');
    expect(objectKey({ metadata: { name: 'node-1' } })).toBe('node-1');
    expect(parseKey('ns/a')).toEqual({ namespace: 'ns', name: 'a' });
    expect(parseKey('node-1')).toEqual({ name: 'node-1' });
  });

  it('refuse malformed keys and nameless objects', () => {
    for (const bad of ['a/b/c', '/a', 'a/']) expect(() => parseKey(bad)).toThrow(TypeError);
    expect(() => objectKey({ metadata: {} })).toThrow(TypeError);
  });
});
