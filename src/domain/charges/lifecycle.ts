// The charge state machine: which status may follow which, on what, and why not. Pure: no I/O.
// Every writer (REST, GraphQL, the expiry sweep, payment confirmation, settlement) asks it before
// writing a status, under a row lock or a status predicate, so two writers never both apply a step.
//
//   PENDING ──receive──▶ RECEIVED ──complete──▶ COMPLETED
//      ▲◀───reopen───────┘
//      ├────expire────▶ EXPIRED
//      └────cancel────▶ CANCELLED
//
// EXPIRED, CANCELLED and COMPLETED are final. Money that arrives after a final status is still
// paid out to the merchant; it is reported, it does not move the status. A charge completes only
// when everything it received has been paid out (settled), by our payout or anyone's, but for dust
// below the payout minimum, which waits for more money. "Received" means the amount, or at most the
// charge's underpayment tolerance less (acceptedAmount). A charge expires by the chains' clocks: once
// every chain that could have paid it has confirmed past `expiresAt` (the state machine is given the
// earliest of those times as `now`). A RECEIVED charge whose payments a reorg deeper than the
// confirmations took away before anything was paid out of it reopens: it is PENDING again (and
// expires as any PENDING charge, by the same clocks).
import { AppError } from "../errors.js";
import { toUnits, type Units } from "../money.js";
import { type Rules, step } from "../state-machine.js";

export const CHARGE_STATUSES = ["PENDING", "RECEIVED", "COMPLETED", "EXPIRED", "CANCELLED"] as const;
export type ChargeStatus = (typeof CHARGE_STATUSES)[number];

/** What can happen to a charge. */
export type ChargeTrigger = "cancel" | "expire" | "receive" | "complete" | "reopen";

/** The facts of a charge that the guards look at. */
export interface ChargeFacts {
  status: ChargeStatus;
  /** What the charge asks, in base units (int8 until the next release, numeric from it). */
  amount: Units;
  /** How short of `amount` confirmed money may be and still count as paid (basis points). */
  underpaymentToleranceBps: number;
  /** Confirmed USDC received so far, in base units (null: nothing yet). */
  amountReceived: Units | null;
  /** Confirmed USDC paid out of the clone so far, in base units. */
  settledAmount: Units;
  expiresAt: Date;
  /** The dust limit (PAYOUT_MIN_AMOUNT, else 0.01 USDC): less than this left in the clones does not hold up completion. */
  payoutMinAmount?: bigint;
}

const received = (c: Pick<ChargeFacts, "amountReceived">) => (c.amountReceived === null ? 0n : toUnits(c.amountReceived));

/** What is still due on `charge`: its amount less the confirmed money, never below zero. */
export function amountRemaining(charge: Pick<ChargeFacts, "amount" | "amountReceived">): bigint {
  const amount = toUnits(charge.amount);
  const got = received(charge);
  return got >= amount ? 0n : amount - got;
}

/**
 * The least confirmed money that pays `charge`: its amount less its underpayment tolerance, rounded
 * in the buyer's disfavour (the tolerance is floored, so never more than the merchant allowed).
 */
export function acceptedAmount(charge: Pick<ChargeFacts, "amount" | "underpaymentToleranceBps">): bigint {
  const amount = toUnits(charge.amount);
  return amount - (amount * BigInt(charge.underpaymentToleranceBps)) / 10_000n;
}

const RULES: Rules<ChargeTrigger, ChargeStatus, ChargeFacts> = {
  // Confirmed partial money does not stop a cancel: it is paid out to the merchant like an underpaid
  // expiry's. A payment still waiting for confirmations does (see cancelStatus).
  cancel: {
    from: ["PENDING"],
    to: "CANCELLED",
  },
  expire: {
    from: ["PENDING"],
    to: "EXPIRED",
    guard: (c, now) => (c.expiresAt.getTime() > now.getTime() ? "it has not reached its expiry time" : null),
  },
  receive: {
    from: ["PENDING"],
    to: "RECEIVED",
    guard: (c) => (received(c) < acceptedAmount(c) ? "less than the amount (less its underpayment tolerance) has been received" : null),
  },
  complete: {
    from: ["RECEIVED"],
    to: "COMPLETED",
    guard: (c) =>
      received(c) - toUnits(c.settledAmount) >= (c.payoutMinAmount && c.payoutMinAmount > 1n ? c.payoutMinAmount : 1n)
        ? "not all the money received has been paid out yet"
        : null,
  },
  // Only a reorg's reversal asks: the money that made it RECEIVED is gone, and none was paid out.
  reopen: {
    from: ["RECEIVED"],
    to: "PENDING",
    guard: (c) =>
      toUnits(c.settledAmount) > 0n
        ? "money has been paid out of it"
        : received(c) >= acceptedAmount(c)
          ? "what it received still pays the amount (less its underpayment tolerance)"
          : null,
  },
};

/** A step the state machine refuses; carries the reason in words. */
export class ChargeTransitionError extends Error {
  override name = "ChargeTransitionError";
  constructor(
    readonly trigger: ChargeTrigger,
    readonly status: ChargeStatus,
    readonly reason: string,
  ) {
    super(`Cannot ${trigger} a ${status} charge: ${reason}`);
  }
}

/** The status `trigger` moves `charge` to, or throws ChargeTransitionError saying why it cannot. */
export function nextStatus(charge: ChargeFacts, trigger: ChargeTrigger, now: Date): ChargeStatus {
  const next = step(RULES, trigger, charge, now);
  if (next.ok) return next.to;
  const { refusal } = next;
  throw new ChargeTransitionError(trigger, charge.status, refusal.kind === "status" ? `it is ${charge.status}` : refusal.reason);
}

/**
 * The merchant's cancel, as .docs/payments.md "Charges" defines it: a CANCELLED charge stays as it is (idempotent); a
 * PENDING one with a payment seen but not yet confirmed is 409 `charge_payment_confirming` (cancel
 * once it counts, or it completes the charge); anything else the machine refuses is 409
 * `charge_not_cancellable`. Returns null for "already cancelled".
 */
export function cancelStatus(charge: ChargeFacts & { id: string }, paymentConfirming: boolean, now: Date): ChargeStatus | null {
  if (charge.status === "CANCELLED") return null;
  if (charge.status === "PENDING" && paymentConfirming) {
    throw new AppError(
      "charge_payment_confirming",
      `Charge ${charge.id} cannot be cancelled while a payment to it is waiting for confirmations; try again once it is confirmed`,
      "id",
    );
  }
  try {
    return nextStatus(charge, "cancel", now);
  } catch (e) {
    if (!(e instanceof ChargeTransitionError)) throw e;
    throw new AppError("charge_not_cancellable", `Charge ${charge.id} cannot be cancelled: ${e.reason}`, "id");
  }
}

/** Why a buyer may not pay (or pick a chain for) `charge` now, or null when they may. */
export function notPayableReason(charge: ChargeFacts, now: Date): string | null {
  if (charge.status !== "PENDING") return `it is ${charge.status}`;
  if (charge.expiresAt.getTime() <= now.getTime()) return "it has expired";
  return null;
}

/** The most partial payments may push a charge's expiry back, in all (.docs/payments.md "Charges", Dust). */
export const PARTIAL_EXTENSION_CAP_MINUTES = 60;
/** The smallest payment that extends expiry, whatever the amount: 0.01 USDC. */
const MIN_EXTENDING_PAYMENT = 10_000n;

/**
 * Minutes that newly confirmed partial `payments` add to a charge's expiry: `perPaymentMinutes` if
 * one of them is at least 1% of the amount (and 0.01 USDC), within what is left of the 60-minute
 * cap. Dust earns nothing, so nobody can keep a charge open by sending crumbs.
 */
export function partialExtensionMinutes(
  charge: { amount: Units; expiryExtendedMinutes: number },
  payments: readonly bigint[],
  perPaymentMinutes: number,
): number {
  const amount = toUnits(charge.amount);
  const earns = payments.some((p) => p * 100n >= amount && p >= MIN_EXTENDING_PAYMENT);
  if (!earns) return 0;
  return Math.max(0, Math.min(perPaymentMinutes, PARTIAL_EXTENSION_CAP_MINUTES - charge.expiryExtendedMinutes));
}
