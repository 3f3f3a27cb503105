// The background jobs a worker runs (and the all-in-one `npm start` runs in-process).
import type { Logger } from "pino";
import type { ChainSet } from "../chain/chains.js";
import type { Config } from "../config.js";
import type { Database } from "../db/client.js";
import type { PaymentSettings } from "../domain/payments.js";
import type { ProcessMetrics } from "../lib/process-metrics.js";
import { startChainRunner } from "./chain-runner.js";
import { newWorkerId, startChainShare } from "./chain-share.js";
import { startEmailSender } from "./email-sender.js";
import { startWebhookDispatcher } from "./webhook-dispatcher.js";
import { type ExpirySweepOptions, startExpirySweep } from "./expiry.js";

/** Running jobs; `stop()` waits for work in flight. */
export interface Jobs {
  stop(): Promise<void>;
}

/** What the jobs run on: the process's services (services.ts). */
export interface JobServices {
  config: Pick<
    Config,
    | "expirySweepIntervalMs"
    | "chainPollIntervalMs"
    | "relayerBumpAfterMs"
    | "subscriptionRetrySchedule"
    | "reconcileIntervalMs"
    | "relayerGasBudgetPerMerchant"
    | "email"
  > &
    Partial<Pick<Config, "relayerPreviousKeys" | "env">>;
  db: Database;
  chains: ChainSet;
  logger: Logger;
  /** The domain's settings; its feed announces the changes the jobs commit to live subscribers. */
  settings: PaymentSettings;
  /** Rings from other processes that queued webhook deliveries (with Redis): the dispatcher claims at once. */
  webhooksDue?: (ring: () => void) => () => void;
  /** Where this process counts what the jobs do (webhook delivery results, emails, reconciliation differences, the chain locks it holds). */
  metrics: Pick<ProcessMetrics, "webhookDeliveries" | "emails" | "reconcileDifferences" | "chainLocks">;
}

export type JobsOptions = Pick<ExpirySweepOptions, "now" | "onExpired">;

/**
 * Starts every background job: the expiry sweep, webhook delivery, the email sender and one runner per enabled chain.
 * On PostgreSQL this worker joins the others in the `workers` table and works its share of the
 * chains; the embedded database has one process, which works them all.
 */
export function startJobs(services: JobServices, options: JobsOptions = {}): Jobs {
  const { config, db, settings, logger, metrics } = services;
  const workerId = newWorkerId();
  const chains = services.chains.all();
  const share =
    db.kind === "postgres"
      ? startChainShare(
          db.prisma,
          workerId,
          chains.map((c) => c.chainId),
          logger,
        )
      : undefined;
  const running = [
    startExpirySweep(db.prisma, settings, logger, { intervalMs: config.expirySweepIntervalMs, now: options.now, onExpired: options.onExpired }),
    startWebhookDispatcher(db.prisma, logger, {
      now: options.now,
      keepPrivateResponses: config.env !== "production",
      onResult: (result) => metrics.webhookDeliveries.inc({ result }),
      doorbell: services.webhooksDue,
    }),
    startEmailSender(db.prisma, logger, {
      smtpUrl: config.email.smtpUrl,
      from: config.email.from,
      now: options.now,
      onResult: (type, result) => metrics.emails.inc({ type, result }),
    }),
    ...chains.map((chain) =>
      startChainRunner(db, chain, logger, {
        intervalMs: config.chainPollIntervalMs,
        settings,
        bumpAfterMs: config.relayerBumpAfterMs,
        reconcileMs: config.reconcileIntervalMs,
        relayerGasBudget: config.relayerGasBudgetPerMerchant,
        previousRelayerKeys: config.relayerPreviousKeys,
        subscriptionRetrySchedule: config.subscriptionRetrySchedule,
        metrics,
        workerId,
        share,
        alertTo: config.email.alertTo,
        now: options.now,
      }),
    ),
  ];
  return {
    async stop() {
      // The runners release their locks and the row goes: the other workers take the chains at their next poll.
      await Promise.all([...running.map((r) => r.stop()), share?.stop()]);
    },
  };
}
