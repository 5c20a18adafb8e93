import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { dockerEngine, type DockerEngine } from '../docker-daemon.js';
import { cacheRoot, repoRoot } from '../repo.js';
import { runDocker } from './docker-cli.js';
import { buildStaticBinaryImage } from './static-binary-image.js';

describe('an image of one static binary', () => {
  let engine: DockerEngine;
  beforeAll(async () => {
    engine = await dockerEngine();
  }, 120_000);

  it('runs the binary as its entrypoint, with nothing else in the image', async () => {
    // etcd is in the binary cache wherever the test environment has run (`npm run setup` builds it).
    const version = /go\.etcd\.io\/etcd\/server\/v3 (v\S+)/.exec(
      readFileSync(join(repoRoot(), 'tools', 'etcd', 'go.mod'), 'utf8'),
    )![1]!;
    const etcd = join(cacheRoot(), 'bin', 'etcd', version, 'etcd');
    expect(existsSync(etcd)).toBe(true);
    const built = await buildStaticBinaryImage({
      socketPath: engine.socketPath,
      binaryPath: etcd,
      name: 'capstan.dev/test-etcd',
      tag: version,
    });
    expect(built.tag).toBe(`capstan.dev/test-etcd:${version}`);
    const output = await runDocker({
      socketPath: engine.socketPath,
      args: ['run', '--rm', '--read-only', '--network=none', built.tag, '--version'],
    });
    expect(output).toContain(`etcd Version: ${version.slice(1)}`);
    // One layer: the binary (scratch adds none).
    const layers = JSON.parse(
      await runDocker({
        socketPath: engine.socketPath,
        args: ['image', 'inspect', '--format', '{{json .RootFS.Layers}}', built.tag],
      }),
    ) as string[];
    expect(layers).toHaveLength(1);
  });
});
