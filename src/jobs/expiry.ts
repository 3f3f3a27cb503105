// The expiry sweep: PENDING charges past `expiresAt` become EXPIRED, in batches, from any number of
// worker processes at once (the domain query skips rows another sweep holds); and the security
// history's events past their retention are deleted, in batches too.
import type { Logger } from "pino";
import type { Prisma } from "../db/client.js";
import type { Charge } from "../domain/charges/read.js";
import type { ChangeSettings } from "../domain/charges/settings.js";
import { expireDueCharges } from "../domain/charges/expire.js";
import { deleteExpiredSecurityEvents } from "../domain/security-events.js";
import { every, type Periodic } from "../lib/periodic.js";

export interface ExpirySweepOptions {
  intervalMs: number;
  /** The clock (tests move it). */
  now?: () => Date;
  /** Charges (and security events deleted) per transaction. */
  batchSize?: number;
  /** Called after each committed batch with the charges it expired. */
  onExpired?: (charges: Charge[]) => void;
}

/** Starts sweeping; each run drains every charge that is due, then the security events past retention, before sleeping again. */
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
        if (expired.length < batchSize) break;
      }
      for (;;) {
        const deleted = await deleteExpiredSecurityEvents(prisma, now(), batchSize);
        if (deleted > 0) logger.info({ count: deleted }, "security events past retention deleted");
        if (deleted < batchSize) return;
      }
    },
    (err) => logger.error({ err }, "expiry sweep failed"),
  );
}
