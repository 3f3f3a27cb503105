// Shares reads between concurrent askers of the same key, without ever answering one with a read
// that began before it asked: a read that began earlier may have missed a write the asker already
// saw committed.
//
// Invariants:
// - Per key, at most one read runs and at most one more waits for it to finish.
// - Every caller is answered by a read that started after its call: callers arriving while a read
//   runs share the next one, which starts when the running one ends.
// - Results (and errors) are shared by reference: callers must not mutate them.

/** Coalesces concurrent reads per key (see the invariants above). */
export class Coalescer<K, V> {
  private readonly running = new Map<K, Promise<V>>();
  private readonly waiting = new Map<K, Promise<V>>();

  /** `read()`'s answer for `key`, shared with the callers of the same key that arrive around it. */
  get(key: K, read: () => Promise<V>): Promise<V> {
    const queued = this.waiting.get(key);
    if (queued) return queued;
    const current = this.running.get(key);
    if (!current) return this.start(key, read);
    const next = current.then(
      () => this.startQueued(key, read),
      () => this.startQueued(key, read),
    );
    this.waiting.set(key, next);
    return next;
  }

  private startQueued(key: K, read: () => Promise<V>): Promise<V> {
    this.waiting.delete(key);
    return this.start(key, read);
  }

  private start(key: K, read: () => Promise<V>): Promise<V> {
    const p = read().finally(() => {
      if (this.running.get(key) === p) this.running.delete(key);
    });
    this.running.set(key, p);
    return p;
  }
}
