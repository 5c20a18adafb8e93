import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { resolveNatsServer, resolveNodeImageProgram } from './binaries.js';
import { PAUSE_IMAGE } from './containerd-runtime.js';
import { LOCAL_BASE_IMAGE } from './images/base-image.js';
import { dockerEngine } from './docker-daemon.js';
import { describeImage, runDocker, saveImages, type BuiltImage } from './images/docker-cli.js';
import { buildServiceImages } from './images/service-images.js';
import { buildStaticBinaryImage } from './images/static-binary-image.js';
import { COREDNS_IMAGE } from './node-dns.js';
import { cacheRoot } from './repo.js';

/** deploy/'s NATS, built from Debian's nats-server on the project's base (`capstan init --image nats=<this>`). */
export const NATS_IMAGE_REPOSITORY = 'capstan.dev/nats';

const [pauseName, pauseTag] = PAUSE_IMAGE.split(':') as [string, string];
const [corednsName, corednsTag] = COREDNS_IMAGE.split(':') as [string, string];

/** The images a real node needs before its first pod and no registry can give here: the sandbox's pause, CoreDNS. */
export async function buildNodeSystemImages(
  socketPath: string,
  log?: (line: string) => void,
): Promise<BuiltImage[]> {
  const pause = resolveNodeImageProgram('pause', log);
  const coredns = resolveNodeImageProgram('coredns', log);
  return [
    await buildStaticBinaryImage({ socketPath, binaryPath: pause.path, name: pauseName, tag: pauseTag, log }),
    await buildStaticBinaryImage({
      socketPath,
      binaryPath: coredns.path,
      name: corednsName,
      tag: corednsTag,
      log,
    }),
  ];
}

/**
 * NATS with JetStream for deploy/'s StatefulSet: Debian's nats-server (what the test environment runs) on the base
 * image, whose libc it links against; deploy/ names nats:2.11-alpine, which a cluster with a registry pulls instead.
 * Needs the base image (buildBaseImage) first.
 */
export async function buildNatsImage(socketPath: string, log?: (line: string) => void): Promise<BuiltImage> {
  const binary = resolveNatsServer();
  const version = /v(\d+\.\d+\.\d+)/.exec(execFileSync(binary, ['--version'], { encoding: 'utf8' }))?.[1];
  const tag = `${NATS_IMAGE_REPOSITORY}:${version ?? 'debian'}`;
  const parent = join(cacheRoot(), 'images');
  mkdirSync(parent, { recursive: true });
  const context = mkdtempSync(join(parent, 'nats-'));
  try {
    copyFileSync(binary, join(context, 'nats-server'));
    mkdirSync(join(context, 'data'));
    writeFileSync(
      join(context, 'Dockerfile'),
      [
        `FROM ${LOCAL_BASE_IMAGE}`,
        'COPY nats-server /usr/local/bin/nats-server',
        // A store folder its user owns: a new compose volume mounted there takes the owner from the image.
        'COPY --chown=1000:1000 data /data',
        // deploy/'s StatefulSet runs it as 1000 with its data on a volume; the root stays read-only.
        'USER 1000:1000',
        'ENTRYPOINT ["/usr/local/bin/nats-server"]',
        '',
      ].join('\n'),
    );
    log?.(`building ${tag} from ${binary}`);
    await runDocker({ socketPath, args: ['build', '--pull=false', `--tag=${tag}`, context] });
  } finally {
    rmSync(context, { recursive: true, force: true });
  }
  return describeImage(socketPath, tag);
}

/**
 * Everything a real node imports before deploy/ runs on it, in one `docker save` archive: its own images (pause,
 * CoreDNS), deploy/'s NATS and the five service images, built here with the project's (or the machine's) Docker engine.
 * `natsImage` is what `capstan init --image nats=...` names.
 */
export async function buildNodeImageArchive(log: (line: string) => void): Promise<{ archive: string; natsImage: string }> {
  const engine = await dockerEngine({ log });
  const services = await buildServiceImages({ socketPath: engine.socketPath, log });
  const system = await buildNodeSystemImages(engine.socketPath, log);
  const nats = await buildNatsImage(engine.socketPath, log);
  const dir = join(cacheRoot(), 'images');
  mkdirSync(dir, { recursive: true });
  const archive = join(dir, 'node-images.tar');
  const tags = [...system, nats, ...services.services].map((image) => image.tag);
  await saveImages({ socketPath: engine.socketPath, tags, path: archive });
  return { archive, natsImage: nats.tag };
}
