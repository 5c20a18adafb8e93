import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { repoRoot } from '../repo.js';
import { buildBaseRootfs, type BaseRootfs, type BaseRootfsOptions } from './base-rootfs.js';
import { describeImage, imageExists, runDocker, type BuiltImage } from './docker-cli.js';
import { dockerfileSteps } from './dockerfile-steps.js';

/** The base image's repository; never pushed, so the name only has to be ours. */
export const BASE_IMAGE_REPOSITORY = 'capstan.dev/base';
/** The tag the root Dockerfile's BASE defaults to, for builds by hand. */
export const LOCAL_BASE_IMAGE = `${BASE_IMAGE_REPOSITORY}:local`;

export interface BaseImage extends BuiltImage {
  /** False when an image of this very root filesystem was already there (nothing was built). */
  rebuilt: boolean;
  rootfs: BaseRootfs;
  /** Its Dockerfile's instructions, one per history entry (dockerfileSteps). */
  instructions: string[];
}

export interface BuildBaseImageOptions extends Pick<
  BaseRootfsOptions,
  'outDir' | 'debCacheDir' | 'nodeBinary'
> {
  socketPath: string;
  log?: (line: string) => void;
}

/**
 * The base image of the services, FROM scratch (deploy/images/base.Dockerfile): tagged
 * capstan.dev/base:<node version>-<12 hex of the root filesystem's sha256> and capstan.dev/base:local. The root
 * filesystem is written each time (under a second; it is reproducible), the image built only when its hash is new.
 */
export async function buildBaseImage(options: BuildBaseImageOptions): Promise<BaseImage> {
  const log = options.log ?? (() => undefined);
  const rootfs = buildBaseRootfs({ ...options, log });
  const tag = `${BASE_IMAGE_REPOSITORY}:${rootfs.nodeVersion}-${rootfs.sha256.slice(0, 12)}`;
  const dockerfile = join(repoRoot(), 'deploy', 'images', 'base.Dockerfile');
  const rebuilt = !(await imageExists(options.socketPath, tag));
  if (rebuilt) {
    log(`building ${tag}`);
    await runDocker({
      socketPath: options.socketPath,
      args: [
        'build',
        '--pull=false',
        `--file=${dockerfile}`,
        `--build-arg=NODE_VERSION=${rootfs.labels['dev.capstan.base.node-version']}`,
        `--build-arg=NODE_STRIPPED=${rootfs.labels['dev.capstan.base.node-stripped']}`,
        `--build-arg=DEBIAN_PACKAGES=${rootfs.labels['dev.capstan.base.debian-packages']}`,
        `--build-arg=ROOTFS_SHA256=${rootfs.labels['dev.capstan.base.rootfs-sha256']}`,
        `--tag=${tag}`,
        dirname(rootfs.tarPath),
      ],
    });
  }
  await runDocker({ socketPath: options.socketPath, args: ['tag', tag, LOCAL_BASE_IMAGE] });
  await untagEarlierBases(options.socketPath, tag);
  const instructions = dockerfileSteps(readFileSync(dockerfile, 'utf8'));
  const image = await describeImage(options.socketPath, tag, { parentHistory: 0, instructions });
  return { ...image, rebuilt, rootfs, instructions };
}

/**
 * Untags the bases of earlier root filesystems: each goes once no service image is built on it any more (a rebuilt
 * service image removes the one it replaced, with the parents only that one used).
 */
async function untagEarlierBases(socketPath: string, current: string): Promise<void> {
  const listed = await runDocker({
    socketPath,
    args: ['image', 'ls', BASE_IMAGE_REPOSITORY, '--format', '{{.Tag}}'],
  });
  for (const tag of listed.split('\n').filter(Boolean)) {
    const image = `${BASE_IMAGE_REPOSITORY}:${tag}`;
    if (image !== current && image !== LOCAL_BASE_IMAGE) {
      await runDocker({ socketPath, args: ['image', 'rm', image] }).catch(() => undefined);
    }
  }
}
