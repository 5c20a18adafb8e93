/**
 * Hand-off events owed per object key. An event is published after the status write it announces, so a
 * failed publish cannot be recomputed from the object on the retry (the status already says "done"): it is
 * remembered here and published first by the next reconcile of that key. A restart forgets it; the core's
 * periodic resync covers that case.
 */
export class PendingEvents {
  private readonly owed = new Map<string, Map<string, () => Promise<unknown>>>();

  /** Publishes now; on failure keeps it owed and rethrows, so the reconcile is retried. */
  async publish(key: string, event: string, send: () => Promise<unknown>): Promise<void> {
    const events = this.owed.get(key) ?? new Map<string, () => Promise<unknown>>();
    events.set(event, send);
    this.owed.set(key, events);
    await this.flush(key);
  }

  /** Publishes what a previous reconcile of `key` failed to. */
  async flush(key: string): Promise<void> {
    const events = this.owed.get(key);
    if (!events) return;
    for (const [event, send] of events) {
      await send();
      events.delete(event);
    }
    this.owed.delete(key);
  }
}
