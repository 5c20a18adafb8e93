import { readFileSync } from 'node:fs';

/** What a V8 heap snapshot holds, summed by what the devtools call node types and by constructor. */
export interface HeapSummary {
  /** Every node's self size: the live heap (a snapshot is taken after a full collection). */
  totalBytes: number;
  byType: Record<string, number>;
  /** Objects' self size by constructor name, largest first. */
  topConstructors: { name: string; bytes: number; count: number }[];
}

interface SnapshotJson {
  snapshot: { meta: { node_fields: string[]; node_types: [string[], ...unknown[]] } };
  nodes: number[];
  strings: string[];
}

/** Reads a `.heapsnapshot` (V8's JSON format) and sums its nodes' self sizes. */
export function summarizeHeapSnapshot(file: string, top = 15): HeapSummary {
  return summarizeHeapSnapshotJson(JSON.parse(readFileSync(file, 'utf8')) as SnapshotJson, top);
}

export function summarizeHeapSnapshotJson(snapshot: SnapshotJson, top = 15): HeapSummary {
  const fields = snapshot.snapshot.meta.node_fields;
  const typeNames = snapshot.snapshot.meta.node_types[0];
  const stride = fields.length;
  const typeAt = fields.indexOf('type');
  const nameAt = fields.indexOf('name');
  const sizeAt = fields.indexOf('self_size');
  const byType: Record<string, number> = {};
  const constructors = new Map<string, { bytes: number; count: number }>();
  let totalBytes = 0;
  for (let i = 0; i < snapshot.nodes.length; i += stride) {
    const type = typeNames[snapshot.nodes[i + typeAt]!] ?? 'unknown';
    const size = snapshot.nodes[i + sizeAt]!;
    totalBytes += size;
    byType[type] = (byType[type] ?? 0) + size;
    if (type === 'object') {
      const name = snapshot.strings[snapshot.nodes[i + nameAt]!] ?? '?';
      const entry = constructors.get(name) ?? { bytes: 0, count: 0 };
      entry.bytes += size;
      entry.count += 1;
      constructors.set(name, entry);
    }
  }
  const topConstructors = [...constructors.entries()]
    .map(([name, e]) => ({ name, ...e }))
    .sort((a, b) => b.bytes - a.bytes)
    .slice(0, top);
  return { totalBytes, byType, topConstructors };
}
