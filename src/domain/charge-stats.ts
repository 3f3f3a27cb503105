// The dashboard's summary of a merchant's charges in one mode: how many are in each status, the
// volume completed per day, and the protocol fees paid, over the last `days` days. Sums are taken
// in the database over integer base units (numeric), read as text and formatted once.
import { type Prisma, selectRows } from "../db/client.js";
import type { ChargeStatsQuery } from "./charge-stats-requests.js";
import { CHARGE_STATUSES, type ChargeStatus } from "./charges/lifecycle.js";
import { formatAmount } from "./money.js";
import type { Scope } from "./scope.js";

const DAY_MS = 24 * 60 * 60 * 1000;

export interface ChargeStats {
  days: number;
  /** Charges created in the window, by status (every status, zeros included). */
  byStatus: { status: ChargeStatus; count: number }[];
  /** USDC received by the charges completed on each UTC day of the window, oldest first, days without any included. */
  completedVolume: { day: string; amount: string }[];
  /** Protocol fees of the charges completed in the window. */
  feesPaid: string;
}

/** The summary over the last `days` UTC days (today included). */
export async function chargeStats(prisma: Prisma, scope: Scope, { days }: ChargeStatsQuery, now = new Date()): Promise<ChargeStats> {
  const today = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
  const since = new Date(today - (days - 1) * DAY_MS);
  const params = [scope.merchantId, scope.livemode, since];
  const [statuses, volume] = await Promise.all([
    selectRows<{ status: ChargeStatus; count: string }>(
      prisma,
      "SELECT status::text AS status, count(*)::text AS count FROM charges WHERE merchant_id = $1 AND livemode = $2 AND kind = 'charge' AND created_at >= $3 GROUP BY status",
      params,
    ),
    selectRows<{ day: string; amount: string; fees: string }>(
      prisma,
      `SELECT to_char(completed_at AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day, sum(amount_received)::text AS amount, coalesce(sum(fee_amount), 0)::text AS fees
         FROM charges WHERE merchant_id = $1 AND livemode = $2 AND status = 'COMPLETED' AND completed_at >= $3 GROUP BY 1`,
      params,
    ),
  ]);
  const counts = new Map(statuses.map((r) => [r.status, Number(r.count)]));
  const byDay = new Map(volume.map((r) => [r.day, BigInt(r.amount)]));
  const completedVolume = Array.from({ length: days }, (_, i) => {
    const day = new Date(since.getTime() + i * DAY_MS).toISOString().slice(0, 10);
    return { day, amount: formatAmount(byDay.get(day) ?? 0n) };
  });
  return {
    days,
    byStatus: CHARGE_STATUSES.map((status) => ({ status, count: counts.get(status) ?? 0 })),
    completedVolume,
    feesPaid: formatAmount(volume.reduce((sum, r) => sum + BigInt(r.fees), 0n)),
  };
}
