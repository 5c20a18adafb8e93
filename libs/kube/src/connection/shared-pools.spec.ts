import { SharedPools } from './shared-pools.js';

const SERVER = 'https://127.0.0.1:6443';
const TLS = { ca: 'ca', rejectUnauthorized: true };

describe('SharedPools', () => {
  it('gives clients of one server with the same TLS material one pool, and closes it with the last lease', async () => {
    const pools = new SharedPools();
    const first = pools.lease(SERVER, TLS);
    const second = pools.lease(`${SERVER}/`, { ...TLS });
    expect(second.dispatcher).toBe(first.dispatcher);
    expect(pools.size).toBe(1);

    await first.release();
    await first.release(); // idempotent: the second lease keeps the pool
    expect(pools.size).toBe(1);
    await second.release();
    expect(pools.size).toBe(0);

    const after = pools.lease(SERVER, TLS);
    expect(after.dispatcher).not.toBe(first.dispatcher);
    await after.release();
  });

  it('keeps servers and TLS identities apart', async () => {
    const pools = new SharedPools();
    const leases = [
      pools.lease(SERVER, TLS),
      pools.lease('https://127.0.0.1:6444', TLS),
      pools.lease(SERVER, { ...TLS, ca: 'other ca' }),
      pools.lease(SERVER, { ...TLS, cert: 'client cert', key: 'client key' }),
      pools.lease(SERVER, { ...TLS, cert: 'client cert', key: 'another key' }),
      pools.lease(SERVER, { ...TLS, rejectUnauthorized: false }),
      pools.lease(SERVER, { ...TLS, servername: 'kubernetes' }),
    ];
    expect(new Set(leases.map((l) => l.dispatcher)).size).toBe(leases.length);
    expect(pools.size).toBe(leases.length);
    await Promise.all(leases.map((l) => l.release()));
    expect(pools.size).toBe(0);
  });
});
