import {
  MAX_OBJECTS_PER_RESOURCE,
  MAX_RESOURCE_BYTES,
  resourceHash,
  resourceObjects,
  ResourceSetDataError,
  resourceValues,
} from './resource-set-data.js';

const configMap = (data: Record<string, string>) => ({ data });

describe('what a ClusterResourceSet resource holds', () => {
  it('reads several YAML documents and a JSON list, in key order', () => {
    const values = resourceValues(
      configMap({
        'b.json': JSON.stringify([{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'third' } }]),
        'a.yaml': [
          'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: first',
          'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: second\n  namespace: first',
          '',
        ].join('\n---\n'),
      }),
      'ConfigMap',
    );
    expect(resourceObjects(values).map((o) => o.metadata?.name)).toEqual(['first', 'second', 'third']);
  });

  it("decodes a Secret's values before reading them", () => {
    const manifest = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: from-secret\n';
    const values = resourceValues({ data: { x: Buffer.from(manifest).toString('base64') } }, 'Secret');
    expect(resourceObjects(values)[0]!.metadata?.name).toBe('from-secret');
  });

  it('hashes the values sorted by key: the same content hashes the same, any change differs', () => {
    const a = resourceHash(resourceValues(configMap({ x: '1', y: '2' }), 'ConfigMap'));
    const b = resourceHash(resourceValues(configMap({ y: '2', x: '1' }), 'ConfigMap'));
    const c = resourceHash(resourceValues(configMap({ x: '1', y: '3' }), 'ConfigMap'));
    expect(a).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(a).toBe(b);
    expect(c).not.toBe(a);
  });

  it('refuses what cannot be applied, naming the key and never the content', () => {
    const refused = (data: Record<string, string>) => {
      try {
        resourceObjects(resourceValues(configMap(data), 'ConfigMap'));
      } catch (error) {
        expect(error).toBeInstanceOf(ResourceSetDataError);
        return (error as Error).message;
      }
      throw new Error('accepted');
    };
    expect(refused({ bad: 'password: hunter2: [' })).toMatch(/^data key bad is not valid YAML/);
    expect(refused({ bad: 'password: hunter2: [' })).not.toContain('hunter2');
    expect(refused({ nameless: 'apiVersion: v1\nkind: ConfigMap\n' })).toBe(
      'data key nameless, document 1 needs apiVersion, kind and metadata.name',
    );
    expect(refused({ list: '[1, 2' })).toBe('data key list is not a valid JSON list');
    expect(refused({ scalar: 'just text' })).toBe('data key scalar, document 1 is not a Kubernetes object');
    // An alias bomb is refused rather than expanded.
    expect(refused({ bomb: 'a: &a [x, x]\nb: [*a, *a]\n' })).toMatch(/^data key bomb/);
    expect(refused({ big: 'x'.repeat(MAX_RESOURCE_BYTES + 1) })).toMatch(/more than the \d+ allowed$/);
    const many = Array.from(
      { length: MAX_OBJECTS_PER_RESOURCE + 1 },
      (_, i) => `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c${i}`,
    ).join('\n---\n');
    expect(refused({ many })).toBe(`it holds more than ${MAX_OBJECTS_PER_RESOURCE} objects`);
  });
});
