import { request } from 'node:http';

/** The images the containers strategy of the test environment runs (both need a registry unless present). */
export const TEST_ENVIRONMENT_IMAGES = ['rancher/k3s:v1.34.4-k3s1', 'nats:2.11'] as const;

/** The Docker engine's API socket: DOCKER_HOST when it names a unix socket, else the default; undefined for TCP. */
export function dockerSocketPath(): string | undefined {
  const host = process.env['DOCKER_HOST'];
  if (host && !host.startsWith('unix://')) return undefined;
  return host ? host.slice('unix://'.length) : '/var/run/docker.sock';
}

/** The status code of a GET on the engine's API, or undefined when nothing answers within a second. */
function engineStatus(path: string, socketPath: string | undefined): Promise<number | undefined> {
  if (!socketPath) return Promise.resolve(undefined);
  return new Promise((resolve) => {
    const req = request({ socketPath, path, timeout: 1000 }, (res) => {
      res.resume();
      resolve(res.statusCode);
    });
    req.on('error', () => resolve(undefined));
    req.on('timeout', () => {
      req.destroy();
      resolve(undefined);
    });
    req.end();
  });
}

/** True when a Docker engine answers its ping. */
export async function dockerAnswers(socketPath = dockerSocketPath()): Promise<boolean> {
  return (await engineStatus('/_ping', socketPath)) === 200;
}

/** The images of `wanted` the engine does not hold locally (asked without pulling: no registry is contacted). */
export async function imagesMissingLocally(
  wanted: readonly string[],
  socketPath = dockerSocketPath(),
): Promise<string[]> {
  const missing: string[] = [];
  for (const image of wanted) {
    const status = await engineStatus(`/images/${encodeURIComponent(image)}/json`, socketPath);
    if (status !== 200) missing.push(image);
  }
  return missing;
}

/**
 * Whether the test environment may run in containers: only where an engine answers and already holds every image.
 * A pull is never tried, so a machine whose engine answers but reaches no registry starts local processes instead
 * of failing on a registry lookup. `reason` says why containers were not chosen (one line, for the log).
 */
export async function containersUsable(
  socketPath = dockerSocketPath(),
): Promise<{ usable: true } | { usable: false; reason?: string }> {
  if (!(await dockerAnswers(socketPath))) return { usable: false };
  const missing = await imagesMissingLocally(TEST_ENVIRONMENT_IMAGES, socketPath);
  if (missing.length === 0) return { usable: true };
  return {
    usable: false,
    reason: `a Docker engine answers but holds no ${missing.join(' or ')} image (not pulled: a registry may be out of reach); using local processes`,
  };
}
