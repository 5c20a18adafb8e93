import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildBaseImage, type BaseImage } from './base-image.js';
import {
  CONTEXT_TARS,
  contextDigest,
  SERVICE_APPS,
  stageBuildContext,
  type BuildContext,
  type ServiceApp,
} from './build-context.js';
import { describeImage, imageHistory, runDocker, type BuiltImage } from './docker-cli.js';
import { dockerfileSteps } from './dockerfile-steps.js';
import { ImageBuildError } from './image-build-error.js';

/**
 * The label holding a digest of everything an image was built from (context, Dockerfile, base image, target): an
 * image whose label matches is current and is not built again. The classic builder would find every step in its cache
 * too, but only after the whole context is sent and unpacked, which takes seconds per image.
 */
export const BUILD_INPUTS_LABEL = 'dev.capstan.build-inputs';

/** The services' image repository (deploy/services, docker-compose.yml). */
export const SERVICE_IMAGE_REPOSITORY = 'ghcr.io/capstan-dev';

export function serviceImageTag(app: ServiceApp, tag = '0.1.0'): string {
  return `${SERVICE_IMAGE_REPOSITORY}/${app}:${tag}`;
}

export interface ServiceImage extends BuiltImage {
  app: ServiceApp;
  /** False when the image was current (its build inputs unchanged), so nothing was built. */
  rebuilt: boolean;
  /** Wall time of its build (or of finding it current), ms. */
  buildMs: number;
}

export interface ServiceImages {
  base: BaseImage;
  context: BuildContext;
  services: ServiceImage[];
}

export interface BuildServiceImagesOptions {
  /** The engine's API socket (dockerEngine()). */
  socketPath: string;
  /** The services' image tag (default 0.1.0, as deploy/services names them). */
  tag?: string;
  /** Which services (default all five). */
  apps?: readonly ServiceApp[];
  /** The staged build context (default <repo>/.capstan/image-context). */
  contextDir?: string;
  log?: (line: string) => void;
}

/**
 * Builds ghcr.io/capstan-dev/<app>:<tag> for each service from the staged context, on the base image (built first,
 * if its root filesystem changed). Nothing is pulled: FROM names only the local base, and --pull=false.
 * `node scripts/build.mjs` must have run, and for the machine provider `npm run setup` (its Go binaries).
 */
export async function buildServiceImages(options: BuildServiceImagesOptions): Promise<ServiceImages> {
  const log = options.log ?? (() => undefined);
  const apps = options.apps ?? SERVICE_APPS;
  const base = await buildBaseImage({ socketPath: options.socketPath, log });
  const staged = stageBuildContext({
    ...(options.contextDir ? { dir: options.contextDir } : {}),
    goBinaries: apps.includes('machine-provider'),
    log,
  });
  const dockerfile = readFileSync(join(staged.dir, 'Dockerfile'), 'utf8');
  // The base's layers, named by its Dockerfile's lines (when its history is that Dockerfile's, as it is when built here).
  const baseHistory = (await imageHistory(options.socketPath, base.tag)).length;
  const inherited =
    base.instructions.length === baseHistory
      ? base.instructions.map((instruction) => `${instruction} (${base.tag})`)
      : Array.from({ length: baseHistory }, () => '');
  const services: ServiceImage[] = [];
  for (const app of apps) {
    const tag = serviceImageTag(app, options.tag);
    const started = Date.now();
    const machineProvider = app === 'machine-provider';
    const target = machineProvider ? 'machine-provider' : 'service';
    const files = ['Dockerfile', CONTEXT_TARS.nodeModules, CONTEXT_TARS.workspace, CONTEXT_TARS.app(app)];
    const inputs = createHash('sha256')
      .update(contextDigest(staged, machineProvider ? [...files, 'go-cache'] : files))
      .update(`\0${base.id}\0${target}\0${app}`)
      .digest('hex');
    const previous = await localImage(options.socketPath, tag);
    const rebuilt = previous?.labels[BUILD_INPUTS_LABEL] !== inputs;
    if (rebuilt) {
      // Only the machine provider's stage reads go-cache/: the other builds are not sent its 300 MB.
      const tar = contextTar(staged.dir, machineProvider ? [] : ['./go-cache']);
      await Promise.all([
        runDocker({
          socketPath: options.socketPath,
          args: [
            'build',
            '--pull=false',
            '--file=Dockerfile',
            `--target=${target}`,
            `--build-arg=BASE=${base.tag}`,
            `--build-arg=APP=${app}`,
            `--label=${BUILD_INPUTS_LABEL}=${inputs}`,
            `--tag=${tag}`,
            '-',
          ],
          stdin: tar.stream,
          onLine: (line) => {
            if (/^Step \d+\/\d+ :/.test(line)) log(`${app}: ${line}`);
          },
        }),
        tar.written,
      ]);
    }
    const image = await describeImage(options.socketPath, tag, {
      parentHistory: 0,
      instructions: [...inherited, ...dockerfileSteps(dockerfile, target)],
    });
    if (previous && previous.id !== image.id) await removeReplaced(options.socketPath, previous.id);
    const buildMs = Date.now() - started;
    log(
      `${tag}: ${(image.size / 2 ** 20).toFixed(1)} MiB, ${rebuilt ? 'built' : 'current'} in ${(buildMs / 1000).toFixed(1)} s`,
    );
    services.push({ ...image, app, rebuilt, buildMs });
  }
  return { base, context: staged, services };
}

/** A local image's id and labels, or undefined when the engine has no such image. */
async function localImage(
  socketPath: string,
  image: string,
): Promise<{ id: string; labels: Record<string, string> } | undefined> {
  try {
    const inspected = await runDocker({
      socketPath,
      args: ['image', 'inspect', '--format', '{{json .Id}}\t{{json .Config.Labels}}', image],
    });
    const [id, labels] = inspected.trim().split('\t');
    return {
      id: JSON.parse(id!) as string,
      labels: (JSON.parse(labels!) as Record<string, string> | null) ?? {},
    };
  } catch {
    return undefined;
  }
}

/**
 * Removes the image a rebuild replaced, with the intermediate images only it used: a machine-provider image is over
 * 500 MB, and its Go binaries sit above the app layer, so every code change would otherwise leave 400 MB behind.
 * An image a container still uses stays.
 */
async function removeReplaced(socketPath: string, id: string): Promise<void> {
  await runDocker({ socketPath, args: ['image', 'rm', id] }).catch(() => undefined);
}

/** The context folder as a tar on a stream (what `docker build -` reads), less `exclude`; `written` settles when tar exits. */
function contextTar(
  dir: string,
  exclude: readonly string[],
): { stream: NodeJS.ReadableStream; written: Promise<void> } {
  const tar = spawn(
    'tar',
    ['--create', '--file=-', `--directory=${dir}`, ...exclude.map((e) => `--exclude=${e}`), '.'],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let stderr = '';
  tar.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const written = new Promise<void>((resolve, reject) => {
    tar.on('error', (error) =>
      reject(new ImageBuildError(`tar of the build context ${dir}: ${error.message}`, { dir })),
    );
    tar.on('close', (code) =>
      code === 0
        ? resolve()
        : reject(new ImageBuildError(`tar of the build context ${dir} failed: ${stderr}`, { dir })),
    );
  });
  return { stream: tar.stdout, written };
}
