// Process lifecycle shared by the entry points: graceful shutdown on SIGTERM/SIGINT.
import type { Logger } from "pino";

const FORCE_EXIT_MS = 15_000;

/** Calls `stop` on the first SIGTERM or SIGINT, then exits; a second signal or a hung stop forces exit. */
export function runUntilSignal(logger: Logger, stop: () => Promise<void>): void {
  let stopping = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (stopping) process.exit(1);
    stopping = true;
    logger.info({ signal }, "shutting down");
    setTimeout(() => {
      logger.error("shutdown took too long; exiting");
      process.exit(1);
    }, FORCE_EXIT_MS).unref();
    stop().then(
      () => process.exit(0),
      (err) => {
        logger.error({ err }, "shutdown failed");
        process.exit(1);
      },
    );
  };
  process.on("SIGTERM", onSignal);
  process.on("SIGINT", onSignal);
}
