import { eventually } from './eventually.js';

describe('eventually', () => {
  it('returns the first value the probe produces', async () => {
    let calls = 0;
    await expect(eventually(() => (++calls >= 3 ? `after ${calls}` : false), { intervalMs: 1 })).resolves.toBe('after 3');
  });

  it('fails after the timeout with the last error the probe threw', async () => {
    await expect(
      eventually(
        () => {
          throw new Error('not there yet');
        },
        { timeoutMs: 20, intervalMs: 5, message: 'machine Running' },
      ),
    ).rejects.toThrow('machine Running not met within 20 ms: not there yet');
  });
});
