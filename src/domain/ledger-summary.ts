// The ledger summed over a period (the dashboard's Home): money received, fees, refunds and what is
// left, and the money received on each UTC day, for a window of at most 366 days (the last 30 by
// default). Sums are the ledger's (domain/ledger.ts), a reversal counted with the kind of row it
// undoes on the day it was recorded, so a period's figures never change once the period is over.
import type { Prisma } from "../db/client.js";
import { invalidParam } from "./errors.js";
import type { LedgerSummaryQuery } from "./ledger-summary-requests.js";
import { formatAmount } from "./money.js";
import type { Scope } from "./scope.js";

const DAY_MS = 24 * 60 * 60 * 1000;
/** The longest window: a year, leap day included. */
const MAX_DAYS = 366;
const DEFAULT_DAYS = 30;

export interface LedgerSummary {
  createdGte: Date;
  createdLt: Date;
  /** Payments into the charges' addresses. */
  grossReceived: string;
  /** Protocol fees taken by payouts. */
  fees: string;
  /** Refunds the merchant's wallet paid. */
  refunded: string;
  /** grossReceived less fees and refunds. */
  net: string;
  /** Paid out to the merchant's wallet (net of fees). */
  paidOut: string;
  /** Payments received on each UTC day the window touches, oldest first, days without any included. */
  daily: { day: string; grossReceived: string }[];
}

/** The ledger of `scope` summed over [createdGte, createdLt): by default the last 30 UTC days, today included. */
export async function ledgerSummary(prisma: Prisma, scope: Scope, parsed: LedgerSummaryQuery, now = new Date()): Promise<LedgerSummary> {
  const tomorrow = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()) + DAY_MS;
  const createdLt = parsed.createdLt ?? new Date(tomorrow);
  const createdGte = parsed.createdGte ?? new Date(createdLt.getTime() - DEFAULT_DAYS * DAY_MS);
  if (createdGte >= createdLt) throw invalidParam("createdLt", "must be after createdGte");
  const first = Math.floor(createdGte.getTime() / DAY_MS) * DAY_MS;
  const days = Math.ceil((createdLt.getTime() - first) / DAY_MS);
  if (days > MAX_DAYS) throw invalidParam("createdGte", `the window is at most ${MAX_DAYS} days`);
  const rows = await prisma.$queryRaw<{ day: string; kind: string; amount: string }[]>`
    SELECT to_char(b.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day, coalesce(o.type, b.type)::text AS kind, sum(b.amount)::text AS amount
    FROM balance_transactions b LEFT JOIN balance_transactions o ON o.id = b.reverses_id
    WHERE b.merchant_id = ${scope.merchantId} AND b.livemode = ${scope.livemode} AND b.created_at >= ${createdGte} AND b.created_at < ${createdLt}
    GROUP BY 1, 2`;
  const total = (kind: string) => rows.filter((r) => r.kind === kind).reduce((sum, r) => sum + BigInt(r.amount), 0n);
  const received = total("payment");
  const fees = -total("fee");
  const refunded = -total("refund");
  const byDay = new Map(rows.filter((r) => r.kind === "payment").map((r) => [r.day, BigInt(r.amount)]));
  return {
    createdGte,
    createdLt,
    grossReceived: formatAmount(received),
    fees: formatAmount(fees),
    refunded: formatAmount(refunded),
    net: formatAmount(received - fees - refunded),
    paidOut: formatAmount(-total("payout")),
    daily: Array.from({ length: days }, (_, i) => {
      const day = new Date(first + i * DAY_MS).toISOString().slice(0, 10);
      return { day, grossReceived: formatAmount(byDay.get(day) ?? 0n) };
    }),
  };
}
