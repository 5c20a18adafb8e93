import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { eventually } from '@capstan/testing';
import { HostRoot } from '../apply/host-root.js';
import { PeriodicRunner } from './periodic-runner.js';

// A plan's files are written while none of the machine's programs runs (issue 32, finding 6: a program running next
// to the writer could swap a directory for a symlink between the writer's check and its write).

describe('PeriodicRunner.pause', () => {
  it('stops a periodic instruction that is running and waits for it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'periodic-'));
    mkdirSync(join(dir, 'var/lib/capstan/agent/work'), { recursive: true });
    const runner = new PeriodicRunner(new HostRoot(dir), async () => undefined);
    try {
      runner.replace([
        { name: 'long', command: 'sh', args: ['-c', 'touch "$CAPSTAN_HOST_ROOT/started"; sleep 30; touch "$CAPSTAN_HOST_ROOT/finished"'], periodSeconds: 1 },
      ]);
      await eventually(async () => existsSync(join(dir, 'started')), { timeoutMs: 5_000 });
      const started = Date.now();
      await runner.pause();
      expect(Date.now() - started).toBeLessThan(8_000);
      expect(existsSync(join(dir, 'finished'))).toBe(false);
      rmSync(join(dir, 'started'));
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      expect(existsSync(join(dir, 'started'))).toBe(false);
    } finally {
      runner.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  }, 20_000);
});
