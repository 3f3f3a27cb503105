// How a charge is shown in lists and on its page: its status, refined by the money it holds, so a
// partly paid charge does not read PENDING and a partly refunded one does not read COMPLETED. Decided
// here once (GraphQL's `displayStatus`, the dashboard's badges). Pure: no I/O. Whether the charge
// needs review is not a display status: it is shown beside whichever applies (`needsReview`), and so
// is what was paid beyond the amount (`amountOverpaid`, decided here too).
import type { ChargeStatus } from "./lifecycle.js";
import { toUnits, type Units } from "../money.js";

export const CHARGE_DISPLAY_STATUSES = [
  "PENDING",
  "PARTLY_PAID",
  "RECEIVED",
  "COMPLETED",
  "PARTLY_REFUNDED",
  "REFUNDED",
  "UNDERPAID",
  "EXPIRED",
  "CANCELLED",
] as const;
export type ChargeDisplayStatus = (typeof CHARGE_DISPLAY_STATUSES)[number];

/** The facts of a charge its display status depends on. */
export interface DisplayFacts {
  status: ChargeStatus;
  /** Confirmed money received (null: nothing yet). */
  amountReceived: Units | null;
  /** Paid back by the merchant's wallet: the completed refunds, at most what was received. */
  amountRefunded: Units;
}

/**
 * The status to show: refunds first (REFUNDED once they give back all that was received, else
 * PARTLY_REFUNDED), then confirmed money short of a final state (PARTLY_PAID while PENDING, UNDERPAID
 * once EXPIRED), else the status itself.
 */
export function chargeDisplayStatus(c: DisplayFacts): ChargeDisplayStatus {
  const received = c.amountReceived === null ? 0n : toUnits(c.amountReceived);
  const refunded = toUnits(c.amountRefunded);
  if (refunded > 0n) return refunded >= received ? "REFUNDED" : "PARTLY_REFUNDED";
  if (received > 0n && c.status === "PENDING") return "PARTLY_PAID";
  if (received > 0n && c.status === "EXPIRED") return "UNDERPAID";
  return c.status;
}

/**
 * Confirmed money received beyond `amount` (0 when none), from the ledger-derived `amountReceived`:
 * what the buyer paid too much, on time or late. Like `amountReceived` it is what arrived, so refunds
 * (`amountRefunded`) do not lower it.
 */
export function amountOverpaid(c: { amount: Units; amountReceived: Units | null }): bigint {
  const excess = (c.amountReceived === null ? 0n : toUnits(c.amountReceived)) - toUnits(c.amount);
  return excess > 0n ? excess : 0n;
}
