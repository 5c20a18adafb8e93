import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import {
  buildNodeImageArchive,
  cacheRoot,
  dockerEngine,
  repoRoot,
  saveImages,
  startLocalEnvironment,
  type LocalEnvironment,
} from '@capstan/testing';

const run = promisify(execFile);

/** Capstan as its users deploy it: images built here, a real node, `capstan init` without --local. */
export interface DeployedCapstan {
  environment: LocalEnvironment;
  kubeconfigPath: string;
  /** The project's (or the machine's) Docker engine the images were built with. */
  dockerSocket: string;
  natsImage: string;
  figures: { imagesMs: number; environmentMs: number; initMs: number };
  /** `capstan <args>` against the management cluster, as a user runs it. */
  capstan(...args: string[]): Promise<string>;
  /** `kubectl <args>` against the management cluster. */
  kubectl(...args: string[]): Promise<string>;
  /** Builds and imports one more image into the node (a rolling update's new image). */
  importImages(tags: string[]): Promise<void>;
  stop(): Promise<void>;
}

export async function deployCapstan(log: (line: string) => void): Promise<DeployedCapstan> {
  const started = Date.now();
  const engine = await dockerEngine({ log });
  const { archive, natsImage } = await buildNodeImageArchive(log);
  const imagesMs = Date.now() - started;

  const environmentStarted = Date.now();
  const environment = await startLocalEnvironment({ node: { imageArchives: [archive] }, log });
  const environmentMs = Date.now() - environmentStarted;
  const kubeconfigPath = environment.kubeconfigPath;
  const env = { ...process.env, KUBECONFIG: kubeconfigPath };
  const capstan = async (...args: string[]) =>
    (
      await run(process.execPath, [join(repoRoot(), 'apps/cli/bin/capstan.js'), ...args], {
        env,
        maxBuffer: 16 << 20,
      })
    ).stdout;
  const kubectl = async (...args: string[]) =>
    (await run('kubectl', ['--request-timeout=30s', ...args], { env, maxBuffer: 16 << 20 })).stdout;
  try {
    const initStarted = Date.now();
    await capstan('init', '--image', `nats=${natsImage}`, '--wait-timeout', '300s');
    const initMs = Date.now() - initStarted;
    return {
      environment,
      kubeconfigPath,
      dockerSocket: engine.socketPath,
      natsImage,
      figures: { imagesMs, environmentMs, initMs },
      capstan,
      kubectl,
      importImages: async (tags) => {
        const path = join(cacheRoot(), 'images', `extra-${process.pid}.tar`);
        await saveImages({ socketPath: engine.socketPath, tags, path });
        await environment.node!.containerd.importImages(path);
      },
      stop: () => environment.stop(),
    };
  } catch (error) {
    await environment.stop();
    throw error;
  }
}
