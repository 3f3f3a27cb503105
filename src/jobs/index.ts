// The background jobs a worker runs (and the all-in-one `npm start` runs in-process).
import type { Logger } from "pino";
import type { ChainSet } from "../chain/chains.js";
import type { Config } from "../config.js";
import type { Database } from "../db/client.js";
import { startChainRunner } from "./chain-runner.js";
import { type ExpirySweepOptions, startExpirySweep } from "./expiry.js";

/** Running jobs; `stop()` waits for work in flight. */
export interface Jobs {
  stop(): Promise<void>;
}

export type JobsOptions = Pick<ExpirySweepOptions, "now" | "onExpired"> & {
  /** How often each chain runner looks for work. */
  chainIntervalMs?: number;
};

/** Starts every background job against `db`: the expiry sweep and one runner per enabled chain. */
export function startJobs(config: Config, db: Database, chains: ChainSet, logger: Logger, options: JobsOptions = {}): Jobs {
  const { chainIntervalMs = 1000, ...sweepOptions } = options;
  const running = [
    startExpirySweep(db.prisma, logger, { intervalMs: config.expirySweepIntervalMs, ...sweepOptions }),
    ...chains.all().map((chain) => startChainRunner(db, chain, logger, chainIntervalMs)),
  ];
  return {
    async stop() {
      await Promise.all(running.map((r) => r.stop()));
    },
  };
}
