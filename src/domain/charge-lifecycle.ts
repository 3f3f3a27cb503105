// The charge state machine: which status may follow which, on what, and why not. Pure: no I/O.
// Every writer (REST, GraphQL, the expiry sweep, payment confirmation, settlement) asks it before
// writing a status, under a row lock or a status predicate, so two writers never both apply a step.
//
//   PENDING ──receive──▶ RECEIVED ──complete──▶ COMPLETED
//      ├────expire────▶ EXPIRED
//      └────cancel────▶ CANCELLED
//
// EXPIRED, CANCELLED and COMPLETED are final. Money that arrives after a final status is still
// flushed to the merchant; it is reported, it does not move the status.
import { AppError } from "./errors.js";

export const CHARGE_STATUSES = ["PENDING", "RECEIVED", "COMPLETED", "EXPIRED", "CANCELLED"] as const;
export type ChargeStatus = (typeof CHARGE_STATUSES)[number];

/** What can happen to a charge. */
export type ChargeTrigger = "cancel" | "expire" | "receive" | "complete";

/** The facts of a charge that the guards look at. */
export interface ChargeFacts {
  status: ChargeStatus;
  amount: bigint;
  /** Confirmed USDC received so far, in base units (null: nothing yet). */
  amountReceived: bigint | null;
  expiresAt: Date;
}

interface Rule {
  from: ChargeStatus;
  to: ChargeStatus;
  /** Why the step may not happen to a charge in `from`, or null when it may. */
  guard(charge: ChargeFacts, now: Date): string | null;
}

const received = (c: ChargeFacts) => c.amountReceived ?? 0n;

const RULES: Record<ChargeTrigger, Rule> = {
  cancel: {
    from: "PENDING",
    to: "CANCELLED",
    guard: (c) => (received(c) > 0n ? "it has already received a payment" : null),
  },
  expire: {
    from: "PENDING",
    to: "EXPIRED",
    guard: (c, now) => (c.expiresAt.getTime() > now.getTime() ? "it has not reached its expiry time" : null),
  },
  receive: {
    from: "PENDING",
    to: "RECEIVED",
    guard: (c) => (received(c) < c.amount ? "less than the amount has been received" : null),
  },
  complete: {
    from: "RECEIVED",
    to: "COMPLETED",
    guard: () => null,
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
  const rule = RULES[trigger];
  if (charge.status !== rule.from) throw new ChargeTransitionError(trigger, charge.status, `it is ${charge.status}`);
  const refusal = rule.guard(charge, now);
  if (refusal) throw new ChargeTransitionError(trigger, charge.status, refusal);
  return rule.to;
}

/**
 * The merchant's cancel, as API.md defines it: a CANCELLED charge stays as it is (idempotent),
 * anything the machine refuses is 409 `charge_not_cancellable`. Returns null for "already cancelled".
 */
export function cancelStatus(charge: ChargeFacts & { id: string }, now: Date): ChargeStatus | null {
  if (charge.status === "CANCELLED") return null;
  try {
    return nextStatus(charge, "cancel", now);
  } catch (e) {
    if (!(e instanceof ChargeTransitionError)) throw e;
    throw new AppError(409, "charge_not_cancellable", `Charge ${charge.id} cannot be cancelled: ${e.reason}`, "id");
  }
}

/** Why a buyer may not pay (or pick a chain for) `charge` now, or null when they may. */
export function notPayableReason(charge: ChargeFacts, now: Date): string | null {
  if (charge.status !== "PENDING") return `it is ${charge.status}`;
  if (charge.expiresAt.getTime() <= now.getTime()) return "it has expired";
  return null;
}
