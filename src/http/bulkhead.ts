// A bulkhead for callers without a key: however many of them there are, they use at most a share
// of the database connections, so merchants' keyed requests always find one free. Past its queue
// an anonymous request is refused at once (cheaper than letting it wait).
import { AppError } from "../domain/errors.js";

/** Leaves the bulkhead (idempotent). */
export type Release = () => void;

/** At most `limit` anonymous operations run at once; up to `queue` more wait their turn. */
export class Bulkhead {
  private running = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(
    private readonly limit: number,
    private readonly queue: number,
  ) {}

  /** Waits for a place; 429 `rate_limited` when the queue is full. */
  async enter(): Promise<Release> {
    if (this.running >= this.limit) {
      if (this.waiting.length >= this.queue) {
        throw new AppError(429, "rate_limited", "The service is busy with requests without an API key; retry in a second.", null, { "Retry-After": "1" });
      }
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
