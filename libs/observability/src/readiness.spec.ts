import { Readiness } from './readiness.js';

describe('Readiness', () => {
  it('is ready only when every check is, and reports a failing check with its reason', async () => {
    const readiness = new Readiness();
    readiness.register({ name: 'caches', check: () => ({ ready: true }) });
    readiness.register({
      name: 'nats',
      check: async () => {
        throw new Error('connection refused');
      },
    });
    const result = await readiness.evaluate();
    expect(result.ready).toBe(false);
    expect(result.checks['caches']).toEqual({ ready: true });
    expect(result.checks['nats']).toEqual({ ready: false, detail: 'connection refused' });
  });
});
