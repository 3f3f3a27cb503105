// Writes that arrive while one is running are gathered and written together when it ends (a group
// commit): under load many outcomes cost one round trip, and when idle one waits for nothing.
//
// Invariants:
// - at most one write runs at a time, of at most `max` items; the rest wait for the next;
// - an item's `add()` settles as the write that holds it does;
// - one bad item fails only itself: a write of several that fails is tried again an item at a time,
//   and only the items that fail alone are rejected.

/** Gathers items into writes of at most `max`, one write at a time. */
export class GroupCommit<T> {
  private queued: { item: T; done: () => void; failed: (e: unknown) => void }[] = [];
  private running = false;

  constructor(
    private readonly write: (items: T[]) => Promise<void>,
    private readonly max = 100,
  ) {}

  /** Resolves once `item` is written (with whatever else was waiting). */
  add(item: T): Promise<void> {
    return new Promise<void>((done, failed) => {
      this.queued.push({ item, done, failed });
      if (!this.running) void this.drain();
    });
  }

  private async drain(): Promise<void> {
    this.running = true;
    while (this.queued.length > 0) {
      const batch = this.queued.splice(0, this.max);
      try {
        await this.write(batch.map((b) => b.item));
        for (const b of batch) b.done();
      } catch (e) {
        if (batch.length === 1) batch[0]!.failed(e);
        else for (const b of batch) await this.write([b.item]).then(b.done, b.failed);
      }
    }
    this.running = false;
  }
}
