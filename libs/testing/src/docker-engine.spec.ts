import { createServer, type Server } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { containersUsable, imagesMissingLocally, TEST_ENVIRONMENT_IMAGES } from './docker-engine.js';

/**
 * The engine's side of the two calls the decision makes (GET /_ping, GET /images/{name}/json), answered on a unix
 * socket as dockerd answers them; what the engine holds is the test's input.
 */
function engineHolding(images: readonly string[], socketPath: string): Promise<Server> {
  const requested: string[] = [];
  const server = createServer((req, res) => {
    requested.push(req.url ?? '');
    if (req.url === '/_ping') return void res.writeHead(200).end('OK');
    const image = /^\/images\/(.+)\/json$/.exec(req.url ?? '')?.[1];
    if (req.method === 'GET' && image && images.includes(decodeURIComponent(image))) {
      return void res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    }
    res.writeHead(404, { 'content-type': 'application/json' }).end('{"message":"No such image"}');
  });
  Object.assign(server, { requested });
  return new Promise((resolve) => server.listen(socketPath, () => resolve(server)));
}

describe('choosing containers for the test environment', () => {
  let dir: string;
  let server: Server | undefined;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'capstan-docker-'));
  });
  afterEach(async () => {
    await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)));
    server = undefined;
    rmSync(dir, { recursive: true, force: true });
  });

  it('falls back to local processes, saying why, when the engine answers but holds neither image', async () => {
    const socket = join(dir, 'docker.sock');
    server = await engineHolding([], socket);
    const decision = await containersUsable(socket);
    expect(decision).toEqual({
      usable: false,
      reason: expect.stringContaining(
        `holds no ${TEST_ENVIRONMENT_IMAGES[0]} or ${TEST_ENVIRONMENT_IMAGES[1]} image`,
      ),
    });
    // Only local lookups were made: nothing asked the engine to pull.
    expect(
      (server as Server & { requested: string[] }).requested.some((url) => url.includes('/create')),
    ).toBe(false);
  });

  it('names only the image that is missing', async () => {
    const socket = join(dir, 'docker.sock');
    server = await engineHolding([TEST_ENVIRONMENT_IMAGES[1]], socket);
    expect(await imagesMissingLocally(TEST_ENVIRONMENT_IMAGES, socket)).toEqual([TEST_ENVIRONMENT_IMAGES[0]]);
  });

  it('uses containers when the engine holds both images', async () => {
    const socket = join(dir, 'docker.sock');
    server = await engineHolding(TEST_ENVIRONMENT_IMAGES, socket);
    expect(await containersUsable(socket)).toEqual({ usable: true });
  });

  it('says nothing when no engine answers (local processes are the normal case)', async () => {
    expect(await containersUsable(join(dir, 'nothing-here.sock'))).toEqual({ usable: false });
  });
});
