/**
 * Compacts etcd's history up to its current revision (through etcd's JSON gateway); returns that revision. A write
 * first moves the revision past anything a client has seen (a bookmark can bring a watcher up to the latest one),
 * so every client's resourceVersion is compacted away and its next watch gets 410.
 */
export async function compactEtcd(etcdUrl: string): Promise<number> {
  const bump = await fetch(`${etcdUrl}/v3/kv/put`, {
    method: 'POST',
    body: JSON.stringify({
      key: Buffer.from('capstan-compaction-probe').toString('base64'),
      value: Buffer.from(String(Date.now())).toString('base64'),
    }),
  });
  if (!bump.ok) throw new Error(`etcd put: ${bump.status}`);
  const range = await fetch(`${etcdUrl}/v3/kv/range`, {
    method: 'POST',
    body: JSON.stringify({ key: Buffer.from('capstan-compaction-probe').toString('base64') }),
  });
  if (!range.ok) throw new Error(`etcd range: ${range.status}`);
  const revision = Number(((await range.json()) as { header: { revision: string } }).header.revision);
  const compaction = await fetch(`${etcdUrl}/v3/kv/compaction`, {
    method: 'POST',
    body: JSON.stringify({ revision: String(revision), physical: true }),
  });
  if (!compaction.ok) throw new Error(`etcd compaction: ${compaction.status} ${await compaction.text()}`);
  return revision;
}
