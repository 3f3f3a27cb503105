// Process lifecycle shared by the entry points: the mode line at start, graceful shutdown on SIGTERM/SIGINT.
import type { Logger } from "pino";
import { type Config, ConfigError, loadConfig, requireRelayerKeys } from "./config.js";
import { DatabaseConnectionError } from "./db/client.js";
import { DatabaseLockedError } from "./db/embedded-lock.js";
import { DatabaseMarkerError } from "./db/marker.js";
import { MigrationError } from "./db/migrate.js";

/**
 * The configuration of a process that starts, or exit 1 with the problems (which name variables,
 * never values) instead of a stack trace. `sendsTransactions`: the process needs relayer keys.
 */
export function configOrExit(sendsTransactions: (config: Config) => boolean): Config {
  try {
    const config = loadConfig();
    if (sendsTransactions(config)) requireRelayerKeys(config);
    return config;
  } catch (e) {
    if (!(e instanceof ConfigError)) throw e;
    process.stderr.write(`${e.message}\n`);
    process.exit(1);
  }
}

/**
 * Awaits a start step; a refusal whose message tells the operator what to do (pending migrations, a
 * lost, locked or unreachable database) is logged as fatal and exits 1, with no stack trace to read past.
 */
export async function startOrExit<T>(logger: Logger, step: Promise<T>): Promise<T> {
  try {
    return await step;
  } catch (e) {
    const told = e instanceof MigrationError || e instanceof DatabaseMarkerError || e instanceof DatabaseLockedError || e instanceof DatabaseConnectionError;
    if (!told) throw e;
    logger.fatal({ error: e.name }, e.message);
    process.exit(1);
  }
}

/** How long stopping may take once the delay is over, before the process exits anyway. */
const FORCE_EXIT_MS = 15_000;

export interface Shutdown {
  /** Called at once on the signal: fail readiness so a load balancer stops sending new requests. */
  leaveRotation?: () => void;
  /** How long to keep serving after leaving rotation (the load balancer's time to notice). */
  delayMs?: number;
  /** Stops everything: drains requests, stops jobs, closes connections. */
  stop: () => Promise<void>;
}

/** On the first SIGTERM or SIGINT leaves rotation, waits, stops, then exits; a second signal or a hung stop forces exit. */
export function runUntilSignal(logger: Logger, { leaveRotation, delayMs = 0, stop }: Shutdown): void {
  let stopping = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (stopping) process.exit(1);
    stopping = true;
    leaveRotation?.();
    logger.info({ signal, delayMs }, "shutting down");
    setTimeout(() => {
      logger.error("shutdown took too long; exiting");
      process.exit(1);
    }, delayMs + FORCE_EXIT_MS).unref();
    new Promise((r) => setTimeout(r, delayMs)).then(stop).then(
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
