// What `k3s etcd-snapshot save` saved, as one line of its output: Capstan's sim prints it, the control plane provider
// reads it back from the plan's saved output (docs/day2.md).

/** The prefix of the result line; the rest of the line is the JSON of a SavedEtcdSnapshot. */
export const SNAPSHOT_RESULT_PREFIX = 'capstan-etcd-snapshot ';

/** What `k3s etcd-snapshot save` saved, as the server reported it. */
export interface SavedEtcdSnapshot {
  fileName: string;
  location: string;
  sizeBytes: number;
  createdAt: string;
}

const FILE_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,252}$/;

/**
 * The result line of `k3s etcd-snapshot save` output (`capstan-etcd-snapshot {json}`), checked field by field: the
 * output is the machine's to write, so nothing but a well-formed record is taken.
 */
export function savedEtcdSnapshotIn(output: string): SavedEtcdSnapshot | undefined {
  const line = output.split('\n').find((l) => l.startsWith(SNAPSHOT_RESULT_PREFIX));
  if (!line) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(line.slice(SNAPSHOT_RESULT_PREFIX.length));
  } catch {
    return undefined;
  }
  const record = value as Partial<SavedEtcdSnapshot>;
  if (
    typeof record.fileName !== 'string' ||
    !FILE_NAME.test(record.fileName) ||
    typeof record.location !== 'string' ||
    !/^(s3|file):\/\/[^\s]{1,2000}$/.test(record.location) ||
    typeof record.sizeBytes !== 'number' ||
    !Number.isSafeInteger(record.sizeBytes) ||
    record.sizeBytes < 0 ||
    typeof record.createdAt !== 'string' ||
    Number.isNaN(Date.parse(record.createdAt))
  ) {
    return undefined;
  }
  return {
    fileName: record.fileName,
    location: record.location,
    sizeBytes: record.sizeBytes,
    createdAt: new Date(record.createdAt).toISOString().replace(/\.\d{3}Z$/, 'Z'),
  };
}

/** The result line for `saved`. */
export function savedEtcdSnapshotLine(saved: SavedEtcdSnapshot): string {
  return `${SNAPSHOT_RESULT_PREFIX}${JSON.stringify(saved)}`;
}
