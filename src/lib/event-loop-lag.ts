// How late this process's event loop runs lately: a 10 ms timer measures how late it fires, and the
// figure is a moving average over the last few ticks. One late tick (a garbage collection) barely
// moves it; a saturated process (every tick late) reaches its real lag within about 30 ms. Load
// shedding reads it: when the loop is late, every request waits that long.

const TICK_MS = 10;
/** Weight of the newest tick in the average. */
const WEIGHT = 0.5;

/** The event loop's recent lag in milliseconds, sampled in the background until `stop()`. */
export class EventLoopLag {
  private lag = 0;
  private readonly timer: NodeJS.Timeout;

  constructor() {
    let expected = performance.now() + TICK_MS;
    this.timer = setInterval(() => {
      const now = performance.now();
      this.observe(now - expected);
      expected = now + TICK_MS;
    }, TICK_MS);
    this.timer.unref();
  }

  /** Milliseconds a callback scheduled now is likely to wait. */
  get ms(): number {
    return this.lag;
  }

  /** Records one tick that came `lateMs` late. */
  observe(lateMs: number): void {
    this.lag += (Math.max(0, lateMs) - this.lag) * WEIGHT;
  }

  /** Stops sampling. */
  stop(): void {
    clearInterval(this.timer);
  }
}
