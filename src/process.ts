// Process lifecycle shared by the entry points: the mode line at start, graceful shutdown on SIGTERM/SIGINT.
import type { Logger } from "pino";
import type { Config } from "./config.js";

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

/**
 * Logs, once at start of `npm start` (dist/main.js), the mode NODE_ENV selects and what it changes:
 * NODE_ENV unset means development, so a deployment that forgot it says so in its first lines.
 */
export function logMode(logger: Logger, config: Pick<Config, "env" | "devnet">): void {
  const devnet = config.devnet ? "a local devnet chain (31337) runs" : "no local devnet";
  if (config.env === "production") {
    logger.info({ mode: config.env }, `running in production mode: GraphiQL off, no demo merchant, ${devnet}`);
    return;
  }
  const mode = config.env === "development" ? "development mode (the default when NODE_ENV is unset)" : `${config.env} mode`;
  // warn, not info: still shown when a deployment runs with LOG_LEVEL=warn.
  logger.warn(
    { mode: config.env },
    `running in ${mode}: GraphiQL on at /graphql, a demo merchant is created and its keys printed, ${devnet}; set NODE_ENV=production for a deployment`,
  );
}
