/** Milliseconds since the epoch; injected so tests move time instead of sleeping. */
export type Clock = () => number;

/**
 * A map of at most `maxEntries` entries, each valid until its own deadline: the least recently used goes first when
 * it is full, an expired one when it is next read. Bounded so that callers choosing keys (tokens) cannot grow it.
 */
export class ExpiringLru<V> {
  // A Map iterates in insertion order: re-inserting on every read keeps the least recently used first.
  private readonly entries = new Map<string, { value: V; expiresAt: number }>();

  constructor(
    private readonly maxEntries: number,
    private readonly now: Clock = Date.now,
  ) {}

  get(key: string): V | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    this.entries.delete(key);
    if (entry.expiresAt <= this.now()) return undefined;
    this.entries.set(key, entry);
    return entry.value;
  }

  set(key: string, value: V, ttlMs: number): void {
    this.entries.delete(key);
    this.entries.set(key, { value, expiresAt: this.now() + ttlMs });
    while (this.entries.size > this.maxEntries) {
      const oldest = this.entries.keys().next();
      if (oldest.done) break;
      this.entries.delete(oldest.value);
    }
  }

  get size(): number {
    return this.entries.size;
  }
}
