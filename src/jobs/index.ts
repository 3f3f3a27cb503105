// The background jobs a worker runs (and the all-in-one `npm start` runs in-process).
import type { Logger } from "pino";
import type { Config } from "../config.js";
import type { Database } from "../db/client.js";
import { type ExpirySweepOptions, startExpirySweep } from "./expiry.js";

/** Running jobs; `stop()` waits for work in flight. */
export interface Jobs {
  stop(): Promise<void>;
}

export type JobsOptions = Pick<ExpirySweepOptions, "now" | "onExpired">;

/** Starts every background job against `db`. */
export function startJobs(config: Config, db: Database, logger: Logger, options: JobsOptions = {}): Jobs {
  const sweep = startExpirySweep(db.prisma, logger, { intervalMs: config.expirySweepIntervalMs, ...options });
  return {
    async stop() {
      await sweep.stop();
    },
  };
}
