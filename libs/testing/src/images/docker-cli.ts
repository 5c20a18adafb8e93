import { spawn } from 'node:child_process';
import { renameSync, rmSync } from 'node:fs';
import { onPath } from '../binaries.js';
import { historyKeyword } from './dockerfile-steps.js';
import { ImageBuildError } from './image-build-error.js';

/** Layers at least this large are reported with the instruction that made them. */
export const LARGE_LAYER_BYTES = 50 * 1024 * 1024;

export interface ImageLayer {
  /** Bytes, uncompressed. */
  size: number;
  /** What made it, as `docker history --no-trunc` shows it (an ADDed file by its hash). */
  createdBy: string;
  /** The Dockerfile line that made it (`ADD go-cache/kube-apiserver.tar /`), when the Dockerfile was given. */
  instruction?: string;
}

export interface BuiltImage {
  /** repository:tag */
  tag: string;
  /** sha256:… */
  id: string;
  /** Bytes, uncompressed, all layers. */
  size: number;
  /** The layers over LARGE_LAYER_BYTES, oldest first. */
  largeLayers: ImageLayer[];
}

export interface DockerCommand {
  /** The engine's API socket (DOCKER_HOST=unix://<socketPath>). */
  socketPath: string;
  args: readonly string[];
  /** A stream to feed the command's stdin (a build context tar). */
  stdin?: NodeJS.ReadableStream;
  /** Each line of stdout as it comes (build progress). */
  onLine?: (line: string) => void;
}

/**
 * Runs the docker CLI against one engine and resolves with its stdout. The classic builder (DOCKER_BUILDKIT=0) is what
 * Debian's dockerd 20.10 has without buildx; DOCKER_CONTEXT is dropped as DOCKER_HOST names the engine.
 */
export function runDocker(command: DockerCommand): Promise<string> {
  const cli = onPath('docker');
  if (!cli) {
    return Promise.reject(
      new ImageBuildError('the docker CLI is not installed (Debian: apt-get install docker.io)', {
        args: command.args,
      }),
    );
  }
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    DOCKER_HOST: `unix://${command.socketPath}`,
    DOCKER_BUILDKIT: '0',
  };
  delete env['DOCKER_CONTEXT'];
  delete env['DOCKER_TLS_VERIFY'];
  return new Promise((resolve, reject) => {
    const child = spawn(cli, command.args, { env, stdio: 'pipe' });
    const stdout: Buffer[] = [];
    let stderr = '';
    let pending = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout.push(chunk);
      if (!command.onLine) return;
      pending += chunk.toString('utf8');
      const lines = pending.split('\n');
      pending = lines.pop() ?? '';
      for (const line of lines) command.onLine(line);
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr = (stderr + chunk.toString('utf8')).slice(-8000);
    });
    // The CLI may exit (a bad flag) before it reads all of the context: that is reported by its exit status.
    child.stdin.on('error', () => undefined);
    if (command.stdin) command.stdin.pipe(child.stdin);
    else child.stdin.end();
    child.on('error', (error) =>
      reject(
        new ImageBuildError(`docker ${command.args.join(' ')}: ${error.message}`, { args: command.args }),
      ),
    );
    child.on('close', (code) => {
      if (pending && command.onLine) command.onLine(pending);
      const out = Buffer.concat(stdout).toString('utf8');
      if (code === 0) resolve(out);
      else {
        reject(
          new ImageBuildError(
            `docker ${command.args.join(' ')} exited with ${code}:\n${stderr || out.slice(-4000)}`,
            {
              args: command.args,
              exitCode: code,
            },
          ),
        );
      }
    });
  });
}

/** Whether the engine holds `image` (a tag or id); asks the engine only, never a registry. */
export async function imageExists(socketPath: string, image: string): Promise<boolean> {
  try {
    await runDocker({ socketPath, args: ['image', 'inspect', '--format', '{{.Id}}', image] });
    return true;
  } catch {
    return false;
  }
}

/** Which Dockerfile built an image: its instructions (dockerfileSteps) on a parent with this many history entries. */
export interface ImageSteps {
  parentHistory: number;
  instructions: readonly string[];
}

/** An image's history entries (layers and metadata steps), oldest first. */
export async function imageHistory(socketPath: string, tag: string): Promise<ImageLayer[]> {
  const history = await runDocker({
    socketPath,
    args: ['history', '--human=false', '--no-trunc', '--format', '{{.Size}}\t{{.CreatedBy}}', tag],
  });
  return history
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const tab = line.indexOf('\t');
      return { size: Number(line.slice(0, tab)), createdBy: line.slice(tab + 1) };
    })
    .reverse();
}

/**
 * An image's id, size and large layers, from `docker image inspect` and `docker history`; with `steps`, each large
 * layer also names its Dockerfile line (when the history entry's keyword matches the line's).
 */
export async function describeImage(
  socketPath: string,
  tag: string,
  steps?: ImageSteps,
): Promise<BuiltImage> {
  const [id = '', size = '0'] = (
    await runDocker({ socketPath, args: ['image', 'inspect', '--format', '{{.Id}}\t{{.Size}}', tag] })
  )
    .trim()
    .split('\t');
  const largeLayers = (await imageHistory(socketPath, tag))
    .map((layer, position) => {
      const instruction = steps?.instructions[position - steps.parentHistory];
      const matches = instruction?.split(' ')[0]?.toUpperCase() === historyKeyword(layer.createdBy);
      return instruction && matches ? { ...layer, instruction } : layer;
    })
    .filter((layer) => layer.size > LARGE_LAYER_BYTES);
  return { tag, id, size: Number(size), largeLayers };
}

export interface SaveImagesOptions {
  socketPath: string;
  /** repository:tag of each image; shared layers are written once. */
  tags: readonly string[];
  /** The tar to write (`docker save` format, which `ctr images import` reads). */
  path: string;
}

/** Writes several images into one `docker save` tar, e.g. to import them into containerd for a kubelet. */
export async function saveImages(options: SaveImagesOptions): Promise<void> {
  const partial = `${options.path}.${process.pid}.partial`;
  try {
    await runDocker({ socketPath: options.socketPath, args: ['save', '--output', partial, ...options.tags] });
    renameSync(partial, options.path);
  } finally {
    rmSync(partial, { force: true });
  }
}
