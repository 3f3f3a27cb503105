// The background jobs a worker runs (and the all-in-one `npm start` runs in-process).
import type { Logger } from "pino";
import type { ChainSet } from "../chain/chains.js";
import type { Config } from "../config.js";
import type { Database } from "../db/client.js";
import type { ChargeFeed } from "../domain/live.js";
import type { ProcessMetrics } from "../lib/process-metrics.js";
import { startChainRunner } from "./chain-runner.js";
import { startWebhookDispatcher } from "./webhook-dispatcher.js";
import { type ExpirySweepOptions, startExpirySweep } from "./expiry.js";

/** Running jobs; `stop()` waits for work in flight. */
export interface Jobs {
  stop(): Promise<void>;
}

export interface JobsOptions extends Pick<ExpirySweepOptions, "now" | "onExpired"> {
  /** Announces the changes the jobs commit (expiry, payments, settlement) to live subscribers. */
  feed?: ChargeFeed;
  /** Where this process counts what the jobs do (webhook delivery results, reconciliation differences). */
  metrics?: Pick<ProcessMetrics, "webhookDeliveries" | "reconcileDifferences">;
}

/** Starts every background job against `db`: the expiry sweep, webhook delivery and one runner per enabled chain. */
export function startJobs(config: Config, db: Database, chains: ChainSet, logger: Logger, options: JobsOptions = {}): Jobs {
  const settings = {
    paymentBaseUrl: config.paymentBaseUrl,
    partialExtensionMinutes: config.partialExtensionMinutes,
    payoutMinAmount: config.payoutMinAmount,
    feed: options.feed,
  };
  const running = [
    startExpirySweep(db.prisma, settings, logger, { intervalMs: config.expirySweepIntervalMs, now: options.now, onExpired: options.onExpired }),
    startWebhookDispatcher(db.prisma, logger, { now: options.now, onResult: (result) => options.metrics?.webhookDeliveries.inc({ result }) }),
    ...chains.all().map((chain) =>
      startChainRunner(db, chain, logger, {
        intervalMs: config.chainPollIntervalMs,
        settings,
        bumpAfterMs: config.relayerBumpAfterMs,
        reconcileMs: config.reconcileIntervalMs,
        metrics: options.metrics,
        now: options.now,
      }),
    ),
  ];
  return {
    async stop() {
      await Promise.all(running.map((r) => r.stop()));
    },
  };
}
