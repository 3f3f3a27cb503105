// A bulkhead for callers without a key: however many of them there are, they use at most a share
// of the database connections, so merchants' keyed requests always find one free. Past its queue
// an anonymous request is refused at once (cheaper than letting it wait). The CPU is shared the same
// way: while the event loop runs late (the process is saturated) with every anonymous place taken,
// anonymous requests are refused before any work, so the keyed ones already queued are served first.
import { AppError } from "../domain/errors.js";
import type { EventLoopLag } from "../lib/event-loop-lag.js";

/** When to shed anonymous load: the event loop's lag, and the lag past which to refuse. */
export interface Shedding {
  lag: EventLoopLag;
  atMs: number;
}

const busy = () =>
  new AppError("rate_limited", "The service is busy with requests without an API key; retry in a second.", null, { headers: { "Retry-After": "1" } });

/** Leaves the bulkhead (idempotent). */
export type Release = () => void;

/** At most `limit` anonymous operations run at once; up to `queue` more wait their turn. */
export class Bulkhead {
  private running = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(
    private readonly limit: number,
    private readonly queue: number,
    private readonly shedding?: Shedding,
  ) {}

  /**
   * 429 `rate_limited` while the process is saturated (its event loop runs late) and callers without
   * a key are part of why (every place of theirs is taken). A late loop alone is no reason: a busy
   * machine or a process still starting would otherwise turn away a buyer it could serve.
   */
  refuseWhenSaturated(): void {
    if (this.shedding && this.running >= this.limit && this.shedding.lag.ms > this.shedding.atMs) throw busy();
  }

  /** Waits for a place; 429 `rate_limited` when the process is saturated or the queue is full. */
  async enter(): Promise<Release> {
    this.refuseWhenSaturated();
    if (this.running >= this.limit) {
      if (this.waiting.length >= this.queue) throw busy();
      await new Promise<void>((resolve) => this.waiting.push(resolve));
    } else {
      this.running++;
    }
    let released = false;
    return () => {
      if (released) return;
      released = true;
      // The place passes straight to the next in line, or is given back.
      const next = this.waiting.shift();
      if (next) next();
      else this.running--;
    };
  }
}
