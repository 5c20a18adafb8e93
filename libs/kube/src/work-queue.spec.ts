import { jest } from '@jest/globals';
import { ItemExponentialRateLimiter, MaxOfRateLimiter, TokenBucketRateLimiter } from './rate-limiter.js';
import { WorkQueue } from './work-queue.js';

/** Resolves whether `promise` settled within the current macrotask turn. */
async function settled<T>(promise: Promise<T>): Promise<{ done: boolean; value?: T }> {
  let result: { done: boolean; value?: T } = { done: false };
  void promise.then((value) => (result = { done: true, value }));
  for (let i = 0; i < 5; i++) await Promise.resolve();
  return result;
}

describe('WorkQueue', () => {
  afterEach(() => jest.useRealTimers());

  it('coalesces repeated adds of a waiting key and hands keys out in FIFO order', async () => {
    const q = new WorkQueue({ name: 't' });
    q.add('ns/a');
    q.add('ns/b');
    q.add('ns/a');
    q.add('ns/a');
    expect(q.length).toBe(2);
    expect(await q.get()).toBe('ns/a');
    expect(await q.get()).toBe('ns/b');
    expect(q.length).toBe(0);
  });

  it('never hands out a key that is being processed; a re-add during processing comes back after done()', async () => {
    const q = new WorkQueue({ name: 't' });
    q.add('ns/a');
    const first = await q.get();
    expect(first).toBe('ns/a');
    q.add('ns/a');
    q.add('ns/a');
    expect(q.length).toBe(0);
    const second = q.get();
    expect((await settled(second)).done).toBe(false);
    q.done('ns/a');
    expect(await second).toBe('ns/a');
    q.done('ns/a');
    expect(q.length).toBe(0);
    expect(q.processingCount).toBe(0);
  });

  it('accepts only namespace/name keys (or a bare name for cluster-scoped objects)', () => {
    const q = new WorkQueue({ name: 't' });
    expect(() => q.add('a/b/c')).toThrow(TypeError);
    expect(() => q.add('/b')).toThrow(TypeError);
    expect(() => q.add('node-1')).not.toThrow();
  });

  it('addAfter delays the key; a second addAfter keeps the earlier time', async () => {
    jest.useFakeTimers();
    const q = new WorkQueue({ name: 't' });
    q.addAfter('ns/a', 1000);
    q.addAfter('ns/a', 300);
    q.addAfter('ns/a', 5000);
    const got = q.get();
    await jest.advanceTimersByTimeAsync(299);
    expect((await settled(got)).done).toBe(false);
    await jest.advanceTimersByTimeAsync(1);
    expect(await got).toBe('ns/a');
    q.done('ns/a');
    await jest.advanceTimersByTimeAsync(10_000);
    expect(q.length).toBe(0);
  });

  it('per-key backoff grows 5 ms, 10 ms, 20 ms ... and forget() resets it', async () => {
    jest.useFakeTimers();
    const q = new WorkQueue({ name: 't' });
    const observed: number[] = [];
    for (let attempt = 0; attempt < 6; attempt++) {
      const start = Date.now();
      q.addRateLimited('ns/a');
      const got = q.get();
      // Step 1 ms at a time: the key must appear exactly when its backoff ends.
      while (!(await settled(got)).done) await jest.advanceTimersByTimeAsync(1);
      observed.push(Date.now() - start);
      q.done('ns/a');
    }
    expect(observed).toEqual([5, 10, 20, 40, 80, 160]);
    expect(q.numRequeues('ns/a')).toBe(6);
    q.forget('ns/a');
    expect(q.numRequeues('ns/a')).toBe(0);
    const start = Date.now();
    q.addRateLimited('ns/a');
    const got = q.get();
    while (!(await settled(got)).done) await jest.advanceTimersByTimeAsync(1);
    expect(Date.now() - start).toBe(5);
  });

  it('shutDown() releases waiting workers and stops handing out keys; drain() waits for in-flight keys', async () => {
    const q = new WorkQueue({ name: 't' });
    q.add('ns/a');
    q.add('ns/b');
    const key = await q.get();
    const waiting = [q.get(), q.get()];
    expect(await waiting[0]).toBe('ns/b');
    q.shutDown();
    expect(await waiting[1]).toBeUndefined();
    q.add('ns/c');
    expect(await q.get()).toBeUndefined();
    const drained = q.drain(10_000);
    expect((await settled(drained)).done).toBe(false);
    q.done(key!);
    q.done('ns/b');
    expect(await drained).toBe(true);
  });

  it('drain() gives up after its timeout', async () => {
    jest.useFakeTimers();
    const q = new WorkQueue({ name: 't' });
    q.add('ns/a');
    await q.get();
    q.shutDown();
    const drained = q.drain(100);
    await jest.advanceTimersByTimeAsync(100);
    expect(await drained).toBe(false);
  });
});

describe('rate limiters', () => {
  it('item backoff doubles from 5 ms and is capped at 1000 s', () => {
    const limiter = new ItemExponentialRateLimiter(5, 1_000_000);
    const delays = Array.from({ length: 30 }, () => limiter.when('k'));
    expect(delays.slice(0, 4)).toEqual([5, 10, 20, 40]);
    expect(delays[17]).toBe(5 * 2 ** 17);
    expect(delays[18]).toBe(1_000_000);
    expect(delays[29]).toBe(1_000_000);
    expect(limiter.when('other')).toBe(5);
  });

  it('the token bucket lets a burst through, then spaces retries at its rate, and refills over time', () => {
    let now = 0;
    const bucket = new TokenBucketRateLimiter(10, 100, () => now);
    const burst = Array.from({ length: 100 }, () => bucket.when());
    expect(burst.every((d) => d === 0)).toBe(true);
    expect(bucket.when()).toBe(100);
    expect(bucket.when()).toBe(200);
    now += 10_000;
    expect(bucket.when()).toBe(0);
  });

  it('the controller default takes the larger of both delays', () => {
    let now = 0;
    const limiter = new MaxOfRateLimiter(
      new ItemExponentialRateLimiter(5, 1_000_000),
      new TokenBucketRateLimiter(10, 2, () => now),
    );
    expect(limiter.when('a')).toBe(5);
    expect(limiter.when('b')).toBe(5);
    expect(limiter.when('c')).toBe(100);
    now = 1;
    expect(limiter.numRequeues('a')).toBe(1);
    limiter.forget('a');
    expect(limiter.numRequeues('a')).toBe(0);
  });
});
