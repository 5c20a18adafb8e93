import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { repoRoot } from '@capstan/testing';
import { SERVICE_BUFFER_POOL_BYTES } from './buffer-pool.js';

describe("a service process's main", () => {
  it("cuts small Buffers from 8 KiB slabs, not Node 24's 64 KiB (a long-lived small Buffer pins its slab)", () => {
    // A fresh Node: the test runner's own process is not a service's.
    const script = `
      import 'reflect-metadata';
      const before = Buffer.poolSize;
      const { runServicesMain } = await import(${JSON.stringify(join(repoRoot(), 'libs/provider-kit/dist/run-service-main.js'))});
      await runServicesMain('probe', undefined, [], async () => {
        process.stdout.write(JSON.stringify({ before, during: Buffer.poolSize }));
        process.exit(0);
      });
    `;
    const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], { cwd: repoRoot(), encoding: 'utf8', timeout: 60_000 });
    expect(JSON.parse(out)).toEqual({ before: 64 * 1024, during: SERVICE_BUFFER_POOL_BYTES });
  });
});
