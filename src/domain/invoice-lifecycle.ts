// The invoice state machine (.docs/invoices.md "Invoices"): which status may follow which, on what, and
// why not. Pure: no I/O. Every writer (domain/invoices.ts, the ledger's payment of an invoice) asks it
// under the invoice's row lock before writing a status or changing the invoice.
//
//   DRAFT ──finalize──▶ OPEN ──settle──▶ PAID ──reopen──▶ OPEN
//     │                  │  ╲──mark_uncollectible──▶ UNCOLLECTIBLE ──settle──▶ PAID
//   delete               └──void──▶ VOID ◀──void──────────┘
//
// VOID is final; PAID is too, unless a reorg takes back money that paid it (reopen: due again, its
// number and lines kept). Only a DRAFT is edited (update) or deleted; an OPEN or UNCOLLECTIBLE invoice
// takes payments (pay) while something is due, and settles (PAID) once the ledger's payments for it
// reach the total. A void is refused once money was paid on it: mark it uncollectible instead.
import { AppError } from "./errors.js";
import { formatAmount, toUnits, type Units } from "./money.js";
import { type Rules, step } from "./state-machine.js";

export const INVOICE_STATUSES = ["DRAFT", "OPEN", "PAID", "VOID", "UNCOLLECTIBLE"] as const;
export type InvoiceStatus = (typeof INVOICE_STATUSES)[number];

/** What can happen to an invoice. */
export type InvoiceTrigger = "update" | "delete" | "finalize" | "void" | "mark_uncollectible" | "pay" | "settle" | "reopen";

/** The facts of an invoice that the guards look at. */
export interface InvoiceFacts {
  id: string;
  status: InvoiceStatus;
  /** The lines' sum, in base units (int8 until the next release, numeric from it). */
  total: Units;
  /** The ledger's payments for it, in base units. */
  amountPaid: Units;
  subscriptionId: string | null;
  /** Whether one of its PENDING charges holds confirmed money not yet counted as paid (a void asks). */
  openChargeHoldsMoney?: boolean;
}

/** What is left to pay: never below zero (a buyer may send more than asked). */
export function amountDue(i: Pick<InvoiceFacts, "total" | "amountPaid">): bigint {
  const due = toUnits(i.total) - toUnits(i.amountPaid);
  return due > 0n ? due : 0n;
}

// A guard's reason completes "Invoice <id> …" in the refusal the API shows.
const RULES: Rules<InvoiceTrigger, InvoiceStatus, InvoiceFacts> = {
  update: { from: ["DRAFT"], to: null },
  delete: { from: ["DRAFT"], to: null },
  finalize: { from: ["DRAFT"], to: "OPEN" },
  void: {
    from: ["OPEN", "UNCOLLECTIBLE"],
    to: "VOID",
    guard: (i) =>
      toUnits(i.amountPaid) > 0n || i.openChargeHoldsMoney
        ? `cannot be voided: ${formatAmount(i.amountPaid)} USDC was paid on it. Mark it uncollectible instead, or refund the buyer`
        : null,
  },
  mark_uncollectible: { from: ["OPEN"], to: "UNCOLLECTIBLE" },
  // Paid by hand as well as by a retry of its pull, a subscription's period would be paid twice.
  pay: {
    from: ["OPEN", "UNCOLLECTIBLE"],
    to: null,
    guard: (i) =>
      i.subscriptionId !== null
        ? "bills a subscription period: the subscription pulls it from the subscriber's wallet"
        : amountDue(i) === 0n
          ? "has nothing left to pay"
          : null,
  },
  settle: {
    from: ["OPEN", "UNCOLLECTIBLE"],
    to: "PAID",
    guard: (i) => (amountDue(i) > 0n ? "has not been paid in full" : null),
  },
  // A reorg took back money that paid it: due again, its number and lines kept.
  reopen: {
    from: ["PAID"],
    to: "OPEN",
    guard: (i) => (amountDue(i) === 0n ? "is still paid in full" : null),
  },
};

/** How each refused trigger's message ends: "only DRAFT invoices can be <done>". */
const DONE: Record<InvoiceTrigger, string> = {
  update: "changed",
  delete: "deleted",
  finalize: "finalized",
  void: "voided",
  mark_uncollectible: "marked uncollectible",
  pay: "paid",
  settle: "paid",
  reopen: "reopened",
};

/** The status `trigger` moves `invoice` to, or the 409 saying why not (`invoice_not_payable` for pay, else `invoice_not_editable`). */
export function invoiceStep(invoice: InvoiceFacts, trigger: InvoiceTrigger, now: Date): InvoiceStatus {
  const next = step(RULES, trigger, invoice, now);
  if (next.ok) return next.to;
  const { refusal } = next;
  throw new AppError(
    trigger === "pay" ? "invoice_not_payable" : "invoice_not_editable",
    refusal.kind === "status"
      ? `Invoice ${invoice.id} is ${refusal.status}: only ${refusal.allowed.join(" or ")} invoices can be ${DONE[trigger]}.`
      : `Invoice ${invoice.id} ${refusal.reason}.`,
    "id",
  );
}

/** Whether the money now confirmed for `invoice` makes it PAID. */
export function settles(invoice: InvoiceFacts, now: Date): boolean {
  return step(RULES, "settle", invoice, now).ok;
}

/** Whether the money the ledger still holds for a PAID `invoice` no longer pays it (a reorg took some back). */
export function reopens(invoice: InvoiceFacts, now: Date): boolean {
  return step(RULES, "reopen", invoice, now).ok;
}

/** Whether the invoice takes a payment now: its status allows one and something is due. */
export function takesPayment(i: Pick<InvoiceFacts, "status" | "total" | "amountPaid">): boolean {
  return RULES.pay.from.includes(i.status) && amountDue(i) > 0n;
}
