// A task run on a fixed interval: never two runs at once, and stopping waits for the run in flight.

/** A running periodic task. */
export interface Periodic {
  /** Stops scheduling and resolves once the current run (if any) has finished. */
  stop(): Promise<void>;
}

/**
 * Runs `task` now (or, with `firstNow: false`, after one interval) and then every `intervalMs` after
 * each run ends; failures go to `onError`.
 */
export function every(intervalMs: number, task: () => Promise<unknown>, onError: (err: unknown) => void, { firstNow = true } = {}): Periodic {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> = Promise.resolve();
  const tick = () => {
    running = task()
      .then(
        () => {},
        (err) => onError(err),
      )
      .finally(() => {
        if (!stopped) timer = setTimeout(tick, intervalMs);
      });
  };
  if (firstNow) tick();
  else timer = setTimeout(tick, intervalMs);
  return {
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await running;
    },
  };
}
