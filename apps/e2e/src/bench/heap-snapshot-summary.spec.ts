import { summarizeHeapSnapshotJson } from './heap-snapshot-summary.js';

describe('summarizeHeapSnapshotJson', () => {
  it('sums self sizes by node type and objects by constructor, largest first', () => {
    const snapshot = {
      snapshot: {
        meta: {
          node_fields: ['type', 'name', 'id', 'self_size', 'edge_count'],
          node_types: [['hidden', 'array', 'string', 'object', 'code']] as [string[]],
        },
      },
      strings: ['Object', 'Informer', 'some text'],
      // type, name, id, self_size, edge_count
      nodes: [3, 0, 1, 100, 0, 3, 0, 2, 50, 0, 3, 1, 3, 400, 0, 2, 2, 4, 1000, 0, 4, 2, 5, 7, 0],
    };
    expect(summarizeHeapSnapshotJson(snapshot)).toEqual({
      totalBytes: 1557,
      byType: { object: 550, string: 1000, code: 7 },
      topConstructors: [
        { name: 'Informer', bytes: 400, count: 1 },
        { name: 'Object', bytes: 150, count: 2 },
      ],
    });
  });
});
