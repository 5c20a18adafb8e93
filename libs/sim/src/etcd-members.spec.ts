import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { EtcdMemberSet, whenSafe } from './etcd-members.js';
import { isSimError } from './errors.js';

// A member's name is its server's node name, which the cluster owner chooses (agentConfig.nodeName): it becomes a
// directory name under the cluster's etcd dir, so anything that is not a DNS name is refused before a path is made.
describe('etcd member names a cluster owner chooses', () => {
  const root = mkdtempSync(join(tmpdir(), 'capstan-members-'));
  const dir = join(root, 'clusters', 'ns', 'c', 'etcd');
  const members = new EtcdMemberSet({
    dir,
    clusterKey: 'ns/c',
    binaries: {
      etcd: () => {
        throw new Error('no etcd is started for a refused name');
      },
      etcdutl: () => {
        throw new Error('no etcdutl is run for a refused name');
      },
    },
    quotaBackendBytes: 1024,
    logger: pino({ level: 'silent' }),
  });

  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it.each(['../../../../etc', '..', 'a/b', '/abs', 'Upper', '-leading', `${'a'.repeat(254)}`, ''])(
    'refuses %j for every operation, creating nothing',
    async (name) => {
      for (const attempt of [
        () => members.ensure(name),
        () => members.startAll(name),
        () => members.remove(name),
        () => members.saveSnapshot(name, join(root, 'x.db'), 1024),
        () => members.restore(name, join(root, 'x.db'), 0),
      ]) {
        const error = await attempt().catch((e: unknown) => e);
        expect(isSimError(error, 'EtcdJoinFailed')).toBe(true);
        expect((error as Error).message).toContain('cannot name an etcd member');
      }
      expect(existsSync(dir) ? readdirSync(dir) : []).toEqual([]);
      expect(readdirSync(root)).toEqual([]);
    },
  );
});

describe('whenSafe', () => {
  it("asks a membership change again while etcd answers 'unhealthy cluster', and gives up on anything else", async () => {
    let calls = 0;
    const added = await whenSafe('adding', 'server-1', async () => {
      calls++;
      if (calls < 3) throw new Error('etcd member add failed: etcdserver: unhealthy cluster');
      return 'learner';
    });
    expect([added, calls]).toEqual(['learner', 3]);
    await expect(
      whenSafe('adding', 'server-1', () => Promise.reject(new Error('etcdserver: peerURL exists'))),
    ).rejects.toThrow('adding etcd member server-1: etcdserver: peerURL exists');
  });
});
