// Confirmed chain money, applied to charges: a chain transfer (domain/chain-transfers.ts) that has its
// confirmations becomes a ledger row (domain/ledger.ts), and what it means for its charge is decided
// here, under the charge's row lock, in the same transaction (.docs/payments.md "Charges", "Money from
// the chain, not from our own transactions", "Ledger"):
//
//   payment, PENDING, in a block before expiresAt   counted; RECEIVED once the total is enough
//                                                    (charge.received), else charge.partial (expiry
//                                                    pushed back, not for dust)
//   payment, PENDING, in a block at/after expiresAt the charge expired first (by the chain's clock:
//                                                    charge.expired or charge.underpaid), then late
//   payment, RECEIVED                               counted (overpaid); the next payout takes it
//   payment, EXPIRED/CANCELLED/COMPLETED            late: counted, charge.late_payment, paid out too;
//                                                    never the invoice's
//   payout/fee, RECEIVED, all paid out but dust     COMPLETED, charge.completed
//   payout/fee, otherwise                           charge.payout_confirmed
//   refund                                          the refund COMPLETED (refund.completed)
//
// Invariants: a transfer is confirmed once (its status, under the charge's row lock), so it is posted
// once; transfers are applied in chain order; the money fields are derived from the ledger in the same
// transaction; an invoice counts only the payments its charges received on time while it was not void.
import type { Prisma } from "../db/client.js";
import { Prisma as P, type X402Payment } from "../generated/prisma/client.js";
import { enqueueReceipt } from "./buyer-emails.js";
import { amountOverpaid } from "./charges/display.js";
import { acceptedAmount, type ChargeStatus, nextStatus, partialExtensionMinutes } from "./charges/lifecycle.js";
import type { ChangeSettings } from "./charges/settings.js";
import { type Charge, CHARGE_COLUMNS } from "./charges/read.js";
import { type ChargeEventExtras, type ChargeView, chargeResource } from "./charges/resource.js";
import { COMPLETION_CAUSE, EXPIRY_CAUSE, type NewEvent, recordEvents } from "./events.js";
import { type Invoice, invoicePaymentEvent, lockPaidInvoice } from "./invoices.js";
import { type ConfirmedTransfer, deriveMoney, postTransfers } from "./ledger.js";
import { formatAmount, toUnits, type Units } from "./money.js";
import type { PaymentResource } from "./payment-schema.js";
import { summarizeBlocks } from "./payouts.js";
import { refundCompletedEvents } from "./refunds.js";
import { inScope, type Scope } from "./scope.js";
import { X402_KIND } from "./x402/anchors.js";
import { x402PaymentEvents, x402Settlements } from "./x402/payments.js";

const MINUTE_MS = 60_000;

export type { PaymentResource };

/** What confirming chain money needs from the service settings. */
export interface PaymentSettings extends ChangeSettings {
  /** How far a partial payment pushes the charge's expiry back, in minutes. */
  partialExtensionMinutes: number;
  /** The dust limit (PAYOUT_MIN_AMOUNT, else 0.01 USDC; base units): less left in the clones does not hold up completion. */
  payoutMinAmount: bigint;
  /** Most charges whose money one transaction confirms (default 50). */
  confirmBatch?: number;
}

/** A chain as confirming needs it. */
export interface ConfirmingChain {
  chainId: number;
  /** The chain's confirmations, for charges that picked another chain (a picked chain's are the charge's). */
  confirmations: number;
}

interface PaymentRow {
  txHash: string;
  logIndex: number;
  blockNumber: bigint;
  chainId: number;
  fromAddress: string;
  amount: P.Decimal | bigint;
  status: string;
}

/** How buyers and merchants name a transfer's status (a reversed one is not shown). */
export function paymentStatus(status: string): "pending" | "confirmed" {
  return status === "SEEN" ? "pending" : "confirmed";
}

/** Shapes a stored payment. */
export function paymentResource(p: PaymentRow): PaymentResource {
  return {
    txHash: p.txHash,
    logIndex: p.logIndex,
    blockNumber: Number(p.blockNumber),
    chainId: p.chainId,
    from: p.fromAddress,
    amount: formatAmount(p.amount),
    status: paymentStatus(p.status),
  };
}

/**
 * The USDC payments to each charge's address that stand, in chain order, as its merchant sees them
 * (`from` is a hint only: often an exchange's hot wallet, not the buyer's own); one read for all.
 */
export async function paymentsOfCharges(prisma: Prisma, scope: Scope, chargeIds: readonly string[]): Promise<Map<string, PaymentResource[]>> {
  const rows = await prisma.chainTransfer.findMany({
    where: { chargeId: { in: [...chargeIds] }, kind: "PAYMENT", status: { not: "REVERSED" }, charge: inScope(scope) },
    orderBy: [{ blockNumber: "asc" }, { logIndex: "asc" }],
    select: { chargeId: true, txHash: true, logIndex: true, blockNumber: true, chainId: true, fromAddress: true, amount: true, status: true },
  });
  const byCharge = new Map<string, PaymentResource[]>(chargeIds.map((id) => [id, []]));
  for (const row of rows) if (row.chargeId) byCharge.get(row.chargeId)?.push(paymentResource(row));
  return byCharge;
}

const FINAL: readonly ChargeStatus[] = ["EXPIRED", "CANCELLED", "COMPLETED"];

/** A transfer being confirmed, as the UPDATE returns it. */
interface Confirming {
  id: string;
  chargeId: string;
  kind: ConfirmedTransfer["kind"];
  chainId: number;
  txHash: string;
  logIndex: number;
  blockNumber: bigint;
  blockTime: Date | null;
  fromAddress: string;
  amount: P.Decimal;
  refundId: string | null;
  factKey: string;
  /** How many times a reorg reversed this fact before. */
  reversals: number;
}

/** The cause (domain/events.ts) an event decided by transfer `t` names: the chain fact, and which inclusion of it. */
function factCause(what: string, t: Confirming): string {
  return `${what} ${t.chainId}:${t.factKey}#${t.reversals}`;
}

/**
 * Charges confirmed in one transaction. Per batch the database work is a fixed set of statements
 * plus one write per charge whose status or expiry changes, so 500 charges paid at once take ten
 * short transactions, not 500 (each long enough to finish well inside the embedded database's turn).
 */
const CONFIRM_BATCH = 50;

/**
 * Confirms every SEEN transfer on `chain` that has its confirmations at block `tip` and applies it
 * to its charge; then records how far the chain's money is confirmed (the clock charges expire and
 * authorizations end by). Returns the charges that changed.
 */
export async function confirmChainMoney(prisma: Prisma, settings: PaymentSettings, chain: ConfirmingChain, tip: bigint, now = new Date()): Promise<Charge[]> {
  const due = await prisma.$queryRaw<{ chargeId: string }[]>`
    SELECT DISTINCT t.charge_id AS "chargeId" FROM chain_transfers t JOIN charges c ON c.id = t.charge_id
    WHERE t.chain_id = ${chain.chainId} AND t.status = 'SEEN' AND t.block_number + ${confirmationsOf(chain)} - 1 <= ${tip}
    ORDER BY 1`;
  const changed: Charge[] = [];
  const size = settings.confirmBatch ?? CONFIRM_BATCH;
  for (let i = 0; i < due.length; i += size) {
    const batch = due.slice(i, i + size).map((d) => d.chargeId);
    changed.push(...(await confirmChargesMoney(prisma, settings, chain, batch, tip, now)));
  }
  await recordConfirmedClock(prisma, chain, tip);
  return changed;
}

/** The confirmations transfer `t` on `chain` needs: its charge's own on the chain it picked, else the chain's. */
function confirmationsOf(chain: ConfirmingChain): P.Sql {
  return P.sql`(CASE WHEN c.chain_id = t.chain_id THEN coalesce(c.confirmations, ${chain.confirmations}) ELSE ${chain.confirmations} END)`;
}

/**
 * Stores the newest block whose money is confirmed (tip - confirmations + 1) and its time, as the
 * newest stored block at or below it says. Charges expire and authorizations end by this clock.
 */
async function recordConfirmedClock(prisma: Prisma, chain: ConfirmingChain, tip: bigint): Promise<void> {
  const confirmed = tip - BigInt(chain.confirmations) + 1n;
  await prisma.$executeRaw`
    UPDATE chain_cursors cc SET confirmed_block = b.number, confirmed_time = b.timestamp
    FROM (SELECT number, timestamp FROM chain_blocks WHERE chain_id = ${chain.chainId} AND number <= ${confirmed} AND timestamp IS NOT NULL
          ORDER BY number DESC LIMIT 1) b
    WHERE cc.chain_id = ${chain.chainId} AND (cc.confirmed_block IS NULL OR cc.confirmed_block < b.number)`;
}

/** One charge's part of a batch: its newly confirmed transfers (in chain order) and what they do to it. */
interface Step {
  charge: Charge;
  confirmed: Confirming[];
  plan: Plan;
}

/**
 * Confirms the due transfers of `chargeIds` on `chain` in one transaction, under the charges' row
 * locks (taken in id order, as every batch takes them: two batches never wait on each other in a
 * circle), then the locks of the invoices they pay (after the charges', in id order too).
 */
async function confirmChargesMoney(prisma: Prisma, settings: PaymentSettings, chain: ConfirmingChain, chargeIds: readonly string[], tip: bigint, now: Date) {
  const written = await prisma.$transaction(async (tx) => {
    const charges = await tx.$queryRaw<Charge[]>`SELECT ${CHARGE_COLUMNS} FROM charges WHERE id = ANY(${[...chargeIds]}) ORDER BY id FOR UPDATE`;
    const confirmed = await confirmTransfers(tx, chain, chargeIds, tip, now);
    if (confirmed.length === 0) return [];
    const before = await reversedTwins(tx, confirmed);
    const byCharge = new Map<string, Confirming[]>();
    for (const t of confirmed) byCharge.get(t.chargeId)?.push(t) ?? byCharge.set(t.chargeId, [t]);
    const paying = charges.filter((c) => byCharge.has(c.id));
    const invoiceIds = [...new Set(paying.flatMap((c) => (c.invoiceId === null ? [] : [c.invoiceId])))].sort();
    const invoices = new Map<string, Invoice>();
    for (const id of invoiceIds) invoices.set(id, await lockPaidInvoice(tx, id));
    const steps: Step[] = paying.map((charge) => {
      const mine = byCharge.get(charge.id)!;
      const invoice = charge.invoiceId === null ? undefined : invoices.get(charge.invoiceId);
      const plan =
        charge.kind === X402_KIND
          ? x402Plan(mine, before)
          : applyConfirmed(charge, mine, before, invoice !== undefined && invoice.status !== "VOID", settings, now);
      return { charge, confirmed: mine, plan };
    });
    const x402 = await x402Settlements(
      tx,
      steps.flatMap((s) => s.plan.x402),
    );
    await postTransfers(
      tx,
      steps.flatMap(({ charge, confirmed, plan }) =>
        confirmed.map((t) => ({
          ...t,
          amount: toUnits(t.amount),
          scope: charge,
          invoiceId: plan.paysInvoice.has(t.id) ? charge.invoiceId : null,
          x402PaymentId: x402.get(t.id)?.id ?? null,
        })),
      ),
      now,
    );
    const late = steps.flatMap((s) => s.plan.late);
    if (late.length > 0) await tx.chainTransfer.updateMany({ where: { id: { in: late } }, data: { late: true } });
    await deriveMoney(
      tx,
      paying.map((c) => c.id),
    );
    const paidOut = steps.filter((s) => s.confirmed.some((t) => t.kind === "PAYOUT" || t.kind === "FEE")).map((s) => s.charge.id);
    await afterPayouts(tx, settings, paidOut, chain.chainId, now);
    return writeConfirmed(tx, steps, settings, now, x402);
  });
  if (written.length > 0) settings.feed?.changed(written);
  return written;
}

/** Marks the due SEEN transfers of `chargeIds` on `chain` CONFIRMED; returns them in chain order. */
async function confirmTransfers(tx: P.TransactionClient, chain: ConfirmingChain, chargeIds: readonly string[], tip: bigint, now: Date): Promise<Confirming[]> {
  const confirmed = await tx.$queryRaw<Confirming[]>`
    UPDATE chain_transfers t SET status = 'CONFIRMED', confirmed_at = ${now}
    FROM charges c
    WHERE c.id = t.charge_id AND t.charge_id = ANY(${[...chargeIds]}) AND t.chain_id = ${chain.chainId} AND t.status = 'SEEN'
      AND t.block_number + ${confirmationsOf(chain)} - 1 <= ${tip}
    RETURNING t.id, t.charge_id AS "chargeId", t.kind::text AS kind, t.chain_id AS "chainId", t.tx_hash AS "txHash", t.log_index AS "logIndex",
      t.block_number AS "blockNumber", t.block_time AS "blockTime", t.from_address AS "fromAddress", t.amount, t.refund_id AS "refundId",
      t.fact_key AS "factKey",
      (SELECT count(*)::int FROM chain_transfers r WHERE r.chain_id = t.chain_id AND r.kind = t.kind AND r.fact_key = t.fact_key AND r.status = 'REVERSED') AS reversals`;
  // A subscription pull's payment, payout and fee share its Pulled log: the payment comes first.
  return confirmed.sort(
    (a, b) => Number(a.blockNumber - b.blockNumber) || a.logIndex - b.logIndex || Number(b.kind === "PAYMENT") - Number(a.kind === "PAYMENT"),
  );
}

/**
 * The batch's charges as confirming left them (their plans' fields written, their money derived) and
 * their events recorded: each charge's own, its payout's, its invoice's (one per invoice, caused by
 * the last payment to it) and its refunds'. Returns the charges.
 */
async function writeConfirmed(
  tx: P.TransactionClient,
  steps: readonly Step[],
  settings: PaymentSettings,
  now: Date,
  x402: ReadonlyMap<string, X402Payment>,
): Promise<Charge[]> {
  const rows = new Map((await writeChanges(tx, steps, now)).map((c) => [c.id, c]));
  const unchanged = steps.filter((s) => !rows.has(s.charge.id)).map((s) => s.charge.id);
  if (unchanged.length > 0) for (const c of await tx.$queryRaw<Charge[]>`SELECT ${CHARGE_COLUMNS} FROM charges WHERE id = ANY(${unchanged})`) rows.set(c.id, c);
  const events: NewEvent[] = [];
  const paidInvoices = new Map<string, Confirming>();
  for (const { charge, confirmed, plan } of steps) {
    const row = rows.get(charge.id)!;
    events.push(...plan.events);
    // The payout's event shows the charge as the ledger now has it (its settlements included).
    if (plan.payout) {
      const { type, extra, cause } = plan.payout;
      events.push({ scope: row, type, data: { ...chargeResource(row, settings), ...extra }, cause });
      // The buyer's receipt commits with the completion, or not at all.
      if (type === "charge.completed") await enqueueReceipt(tx, row, settings);
    }
    const paying = confirmed.filter((t) => plan.paysInvoice.has(t.id));
    if (charge.invoiceId !== null && paying.length > 0) paidInvoices.set(charge.invoiceId, paying[paying.length - 1]!);
  }
  for (const [invoiceId, last] of paidInvoices)
    events.push({ ...(await invoicePaymentEvent(tx, invoiceId, settings, now)), cause: factCause("invoice", last) });
  const refunds = new Map(steps.flatMap((s) => s.confirmed.filter((t) => t.kind === "REFUND").map((t) => [t.refundId!, t] as const)));
  for (const e of await refundCompletedEvents(tx, [...refunds.keys()], settings, now))
    events.push({ ...e, cause: factCause("refund", refunds.get((e.data as { id: string }).id)!) });
  events.push(
    ...x402PaymentEvents(
      steps.flatMap(({ charge, plan }) => plan.x402.map((t) => ({ ...t, anchor: charge, cause: factCause("x402", t) }))),
      x402,
      now,
    ),
  );
  await recordEvents(tx, events);
  return steps.map((s) => rows.get(s.charge.id)!);
}

/** Writes every step's changes in one statement (a field a plan leaves out keeps its value); returns the charges it wrote. */
async function writeChanges(tx: P.TransactionClient, steps: readonly Step[], now: Date): Promise<Charge[]> {
  // Named apart from the charge's columns, which RETURNING lists unqualified.
  const changes = steps
    .filter((s) => Object.keys(s.plan.data).length > 0)
    .map(({ charge, plan: { data } }) => ({
      v_id: charge.id,
      v_status: data.status,
      v_expires_at: data.expiresAt,
      v_extended: data.expiryExtendedMinutes,
      v_completed_at: data.completedAt,
      v_flush_tx_hash: data.flushTxHash,
    }));
  if (changes.length === 0) return [];
  return tx.$queryRaw<Charge[]>`
    UPDATE charges c SET status = coalesce(v.v_status::"ChargeStatus", c.status), expires_at = coalesce(v.v_expires_at, c.expires_at),
      expiry_extended_minutes = coalesce(v.v_extended, c.expiry_extended_minutes), completed_at = coalesce(v.v_completed_at, c.completed_at),
      flush_tx_hash = coalesce(v.v_flush_tx_hash, c.flush_tx_hash), updated_at = ${now}
    FROM jsonb_to_recordset(${JSON.stringify(changes)}::jsonb)
      AS v(v_id text, v_status text, v_expires_at timestamptz, v_extended int, v_completed_at timestamptz, v_flush_tx_hash text)
    WHERE c.id = v.v_id
    RETURNING ${CHARGE_COLUMNS}`;
}

/**
 * After payouts of `chargeIds`' clones on `chainId` were posted: the clones have code (a payout
 * deploys them), and a clone whose money is all out has nothing blocking it any more; the charges
 * show their picked chain's deployment and their clones' first blocked reason.
 */
async function afterPayouts(tx: P.TransactionClient, settings: PaymentSettings, chargeIds: readonly string[], chainId: number, now: Date): Promise<void> {
  if (chargeIds.length === 0) return;
  const ids = [...chargeIds];
  await tx.$executeRaw`
    UPDATE clones SET deployed_at = coalesce(deployed_at, ${now}),
      payout_blocked_reason = CASE WHEN held <= 0 THEN NULL ELSE payout_blocked_reason END,
      payout_blocked_at = CASE WHEN held <= 0 THEN NULL ELSE payout_blocked_at END,
      flush_failures = CASE WHEN held <= 0 THEN 0 ELSE flush_failures END,
      flush_retry_at = CASE WHEN held <= 0 THEN NULL ELSE flush_retry_at END
    WHERE charge_id = ANY(${ids}) AND chain_id = ${chainId}`;
  await tx.$executeRaw`
    UPDATE charges c SET deployed_at = k.deployed_at FROM clones k
    WHERE c.id = ANY(${ids}) AND k.charge_id = c.id AND k.chain_id = c.chain_id AND c.deployed_at IS NULL`;
  await summarizeBlocks(tx, ids, settings);
}

/** How a payment was counted when a deep reorg reversed it: late or not, and the invoice it paid. */
interface Reversed {
  late: boolean;
  invoiceId: string | null;
}

/**
 * The payments among `confirmed` that a deep reorg reversed before and the chain has re-included
 * (the same fact): each is counted again as it was counted then, not as new money.
 */
async function reversedTwins(tx: P.TransactionClient, confirmed: readonly Confirming[]): Promise<Map<string, Reversed>> {
  const ids = confirmed.filter((t) => t.kind === "PAYMENT").map((t) => t.id);
  if (ids.length === 0) return new Map();
  const rows = await tx.$queryRaw<({ id: string } & Reversed)[]>`
    SELECT DISTINCT ON (t.id) t.id, r.late, b.invoice_id AS "invoiceId"
    FROM chain_transfers t
    JOIN chain_transfers r ON r.chain_id = t.chain_id AND r.kind = t.kind AND r.fact_key = t.fact_key AND r.status = 'REVERSED'
    LEFT JOIN balance_transactions b ON b.transfer_id = r.id AND b.type <> 'reversal'
    WHERE t.id = ANY(${ids})
    ORDER BY t.id, r.reversed_at DESC`;
  return new Map(rows.map((r) => [r.id, { late: r.late, invoiceId: r.invoiceId }]));
}

/** The fields besides money that confirming may change on a charge. */
interface ChargeChanges {
  status?: ChargeStatus;
  expiresAt?: Date;
  expiryExtendedMinutes?: number;
  completedAt?: Date;
  flushTxHash?: string;
}

/**
 * What confirming a charge's transfers does to it: the fields to write besides money, the payments'
 * events, which payments are late and which pay its invoice, and the payouts' event (made once the
 * ledger has the charge's new settlements).
 */
interface Plan {
  data: ChargeChanges;
  events: NewEvent[];
  late: string[];
  paysInvoice: Set<string>;
  payout: { type: "charge.completed" | "charge.payout_confirmed"; extra: ChargeEventExtras; cause: string } | null;
  /** An x402 address's new payments (their `x402.payment` events are made with what settle stored about them). */
  x402: Confirming[];
}

/**
 * The charge after newly confirmed `transfers` (in chain order): payments first, each against the
 * chain's clock, then payouts and fees. Each event carries the charge as it was right after its step.
 * A payment in `reincluded` restores money a reorg took away: it counts as it counted before (late or
 * not, paying the invoice it paid), with no event of its own.
 */
function applyConfirmed(
  charge: Charge,
  transfers: readonly Confirming[],
  reincluded: ReadonlyMap<string, Reversed>,
  invoiceOpen: boolean,
  settings: PaymentSettings,
  now: Date,
): Plan {
  type Money = "amountReceived" | "feeAmount" | "netAmount" | "settledAmount" | "amountRefunded";
  const c: Omit<ChargeView, Money> & {
    amountReceived: bigint | null;
    feeAmount: bigint | null;
    netAmount: bigint | null;
    settledAmount: bigint;
    amountRefunded: bigint;
    payoutMinAmount: bigint;
  } = {
    ...charge,
    amountReceived: charge.amountReceived === null ? null : toUnits(charge.amountReceived),
    feeAmount: charge.feeAmount === null ? null : toUnits(charge.feeAmount),
    netAmount: charge.netAmount === null ? null : toUnits(charge.netAmount),
    settledAmount: toUnits(charge.settledAmount),
    amountRefunded: toUnits(charge.amountRefunded),
    payoutMinAmount: settings.payoutMinAmount,
  };
  const plan: Plan = { data: {}, events: [], late: [], paysInvoice: new Set(), payout: null, x402: [] };
  const event = (type: NewEvent["type"], cause: string, extra: ChargeEventExtras = {}) =>
    plan.events.push({ scope: c, type, data: { ...chargeResource(c, settings), ...extra }, cause });
  const listed = (ps: readonly Confirming[]) => ({ payments: ps.map((p) => paymentResource({ ...p, status: "CONFIRMED" })) });
  const received = () => c.amountReceived ?? 0n;

  // Payments, in runs: those on time, until the chain's clock passes the expiry; then the late ones.
  let run: Confirming[] = [];
  const closeRun = () => {
    if (run.length === 0) return;
    // The payment that tipped the charge over (or the latest part) decided the event, however the
    // confirmations happened to be batched.
    const last = run[run.length - 1]!;
    if (c.status === "PENDING" && received() >= acceptedAmount(c)) {
      c.status = plan.data.status = nextStatus(c, "receive", now);
      event("charge.received", factCause("PENDING→RECEIVED", last), { ...listed(run), ...underpaid(c, received()) });
    } else if (c.status === "PENDING") {
      event("charge.partial", factCause("partial", last), listed(run));
    }
    run = [];
  };
  const late: Confirming[] = [];
  for (const p of transfers.filter((t) => t.kind === "PAYMENT")) {
    const was = reincluded.get(p.id);
    if (was && (was.late || FINAL.includes(c.status))) {
      c.amountReceived = received() + toUnits(p.amount);
      if (was.late) plan.late.push(p.id);
      if (was.invoiceId !== null && was.invoiceId === charge.invoiceId) plan.paysInvoice.add(p.id);
      continue;
    }
    if (c.status === "PENDING" && p.blockTime !== null && p.blockTime.getTime() >= c.expiresAt.getTime()) {
      // The chain passed the expiry before this payment: the charge expired then.
      closeRun();
      c.status = plan.data.status = nextStatus(c, "expire", p.blockTime);
      event(received() > 0n ? "charge.underpaid" : "charge.expired", EXPIRY_CAUSE);
    }
    const amount = toUnits(p.amount);
    c.amountReceived = received() + amount;
    if (FINAL.includes(c.status)) {
      late.push(p);
      continue;
    }
    run.push(p);
    if (invoiceOpen) plan.paysInvoice.add(p.id);
    if (c.status === "PENDING" && received() < acceptedAmount(c)) {
      // The buyer is mid-payment: give them time to send the rest, unless this is dust.
      const minutes = partialExtensionMinutes(c, [amount], settings.partialExtensionMinutes);
      if (minutes > 0) {
        c.expiresAt = plan.data.expiresAt = new Date(Math.max(c.expiresAt.getTime(), now.getTime()) + minutes * MINUTE_MS);
        c.expiryExtendedMinutes = plan.data.expiryExtendedMinutes = c.expiryExtendedMinutes + minutes;
      }
    }
  }
  closeRun();
  if (late.length > 0) {
    plan.late.push(...late.map((p) => p.id));
    event("charge.late_payment", factCause("late", late[late.length - 1]!), listed(late));
  }

  // Payouts and fees: money out of the clones.
  const out = transfers.filter((t) => t.kind === "PAYOUT" || t.kind === "FEE");
  if (out.length > 0) {
    const net = out.filter((t) => t.kind === "PAYOUT").reduce((sum, t) => sum + toUnits(t.amount), 0n);
    const fee = out.filter((t) => t.kind === "FEE").reduce((sum, t) => sum + toUnits(t.amount), 0n);
    c.netAmount = (c.netAmount ?? 0n) + net;
    c.feeAmount = (c.feeAmount ?? 0n) + fee;
    c.settledAmount = c.settledAmount + net + fee;
    const last = out[out.length - 1]!;
    let completes = false;
    if (c.status === "RECEIVED") {
      try {
        c.status = nextStatus(c, "complete", now);
        completes = true;
      } catch {
        // Not all of it out yet: the next payout takes the rest.
      }
    }
    if (completes) {
      plan.data.status = c.status;
      plan.data.completedAt = now;
      plan.data.flushTxHash = last.txHash;
      // Whichever payout completes it, a charge completes once (COMPLETED is final): one charge.completed.
      const extra = { overpaidAmount: formatAmount(amountOverpaid(c)), ...underpaid(c, received()) };
      plan.payout = { type: "charge.completed", extra, cause: COMPLETION_CAUSE };
    } else {
      // A completed charge keeps the payout that completed it; any other keeps its first.
      if (c.flushTxHash === null) plan.data.flushTxHash = out[0]!.txHash;
      plan.payout = { type: "charge.payout_confirmed", extra: {}, cause: factCause("payout", last) };
    }
  }
  return plan;
}

/**
 * An x402 address's plan: it only carries money (no status, no charge event); each new payment is an
 * x402 payment, and one a reorg took away and the chain re-included is the same one, already announced.
 */
function x402Plan(transfers: readonly Confirming[], reincluded: ReadonlyMap<string, Reversed>): Plan {
  const x402 = transfers.filter((t) => t.kind === "PAYMENT" && !reincluded.has(t.id));
  return { data: {}, events: [], late: [], paysInvoice: new Set(), payout: null, x402 };
}

/** `underpaidAmount` for a charge paid within its underpayment tolerance (and nothing when paid in full). */
function underpaid(c: { amount: Units }, received: bigint): { underpaidAmount?: string } {
  const amount = toUnits(c.amount);
  return received < amount ? { underpaidAmount: formatAmount(amount - received) } : {};
}
