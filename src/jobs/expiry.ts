// The expiry sweep: PENDING charges past `expiresAt` become EXPIRED, in batches, from any number of
// worker processes at once (the domain query skips rows another sweep holds).
import type { Logger } from "pino";
import type { Prisma } from "../db/client.js";
import { type Charge, type ChangeSettings, expireDueCharges } from "../domain/charges.js";
import { every, type Periodic } from "../lib/periodic.js";

export interface ExpirySweepOptions {
  intervalMs: number;
  /** The clock (tests move it). */
  now?: () => Date;
  /** Charges per transaction. */
  batchSize?: number;
  /** Called after each committed batch with the charges it expired. */
  onExpired?: (charges: Charge[]) => void;
}

/** Starts sweeping; each run drains every charge that is due before sleeping again. */
export function startExpirySweep(prisma: Prisma, settings: ChangeSettings, logger: Logger, options: ExpirySweepOptions): Periodic {
  const { now = () => new Date(), batchSize = 500, onExpired } = options;
  return every(
    options.intervalMs,
    async () => {
      for (;;) {
        const expired = await expireDueCharges(prisma, settings, now(), { limit: batchSize });
        if (expired.length > 0) {
          logger.info({ count: expired.length }, "charges expired");
          onExpired?.(expired);
        }
        if (expired.length < batchSize) return;
      }
    },
    (err) => logger.error({ err }, "expiry sweep failed"),
  );
}
