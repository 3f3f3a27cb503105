// Money from the chain: payments (USDC transfers into a charge's clone) and settlements (the clone's
// Flushed events, paying out), as the indexer records them, whoever sent them. Both are SEEN once
// their block is read and CONFIRMED once it has the charge's confirmations; only confirmed money
// counts. Confirming is where money changes a charge (API.md "Charge lifecycle", "Money from the
// chain, not from our own transactions"):
//
//   payments, PENDING, total < amount   stays PENDING, charge.partial (expiry pushed back, not for dust)
//   payments, PENDING, total ≥ amount   RECEIVED, charge.received; the clone is then paid out
//   payments, RECEIVED                  counted; the next payout takes it
//   payments, EXPIRED/CANCELLED/COMPLETED  late: counted, charge.late_payment, paid out all the same
//   settlements, RECEIVED, all paid out COMPLETED, charge.completed (feeAmount, netAmount, flushTxHash)
//   settlements, otherwise              charge.payout_confirmed
//
// Invariants: a payment or settlement is confirmed once (status predicate under the charge's row
// lock), so money is never counted twice; payments are applied before settlements of the same
// block, so money paid in and out in one block completes the charge; a reorg deletes only SEEN
// rows, so nothing counted is taken back.
import type { Prisma } from "../db/client.js";
import { Prisma as P } from "../generated/prisma/client.js";
import { invoicePaymentEvent } from "./invoices.js";
import { acceptedAmount, type ChargeStatus, nextStatus, partialExtensionMinutes } from "./charge-lifecycle.js";
import { type ChangeSettings, type Charge, CHARGE_COLUMNS, type ChargeView, chargeResource } from "./charges.js";
import { type NewEvent, recordEvents } from "./events.js";
import type { ChargeRef } from "./live.js";
import { formatAmount, type Numeric, toUnits, type Units } from "./money.js";
import { inScope, type Scope } from "./scope.js";
import { type StoredSettlement, storedSettlements } from "./settlements.js";

const MINUTE_MS = 60_000;

/** What confirming chain money needs from the service settings. */
export interface PaymentSettings extends ChangeSettings {
  /** How far a partial payment pushes the charge's expiry back, in minutes. */
  partialExtensionMinutes: number;
}

/** A payment as events and the hosted page show it. */
export interface PaymentResource {
  txHash: string;
  logIndex: number;
  blockNumber: number;
  from: string;
  amount: string;
  status: "pending" | "confirmed";
}

interface PaymentRow {
  txHash: string;
  logIndex: number;
  blockNumber: bigint;
  fromAddress: string;
  amount: Units;
  status: "SEEN" | "CONFIRMED";
}

interface SettlementRow {
  txHash: string;
  logIndex: number;
  blockNumber: bigint;
  netAmount: Numeric;
  feeAmount: Numeric;
}

/** How buyers and merchants name a payment's status. */
export function paymentStatus(status: "SEEN" | "CONFIRMED"): "pending" | "confirmed" {
  return status === "SEEN" ? "pending" : "confirmed";
}

/** Shapes a stored payment. */
export function paymentResource(p: PaymentRow): PaymentResource {
  return {
    txHash: p.txHash,
    logIndex: p.logIndex,
    blockNumber: Number(p.blockNumber),
    from: p.fromAddress,
    amount: formatAmount(p.amount),
    status: paymentStatus(p.status),
  };
}

/**
 * The USDC transfers into a charge's clone, in chain order, as its merchant sees them (`from` is a
 * hint only: often an exchange's hot wallet, not the buyer's own).
 */
export async function paymentsOfCharge(prisma: Prisma, scope: Scope, chargeId: string): Promise<PaymentResource[]> {
  const rows = await prisma.payment.findMany({
    where: { chargeId, charge: inScope(scope) },
    orderBy: [{ blockNumber: "asc" }, { logIndex: "asc" }],
    select: { txHash: true, logIndex: true, blockNumber: true, fromAddress: true, amount: true, status: true },
  });
  return rows.map(paymentResource);
}

const FINAL: readonly ChargeStatus[] = ["EXPIRED", "CANCELLED", "COMPLETED"];
const byPosition = (a: { blockNumber: bigint; logIndex: number }, b: { blockNumber: bigint; logIndex: number }) =>
  Number(a.blockNumber - b.blockNumber) || a.logIndex - b.logIndex;

/**
 * Confirms every SEEN payment and settlement on `chainId` that has its charge's confirmations at
 * block `tip`, and applies them to their charges. Returns the charges that changed.
 */
export async function confirmChainMoney(prisma: Prisma, settings: PaymentSettings, chainId: number, tip: bigint, now = new Date()): Promise<Charge[]> {
  const due = await prisma.$queryRaw<{ chargeId: string }[]>`
    SELECT p.charge_id AS "chargeId" FROM payments p JOIN charges c ON c.id = p.charge_id
    WHERE p.chain_id = ${chainId} AND p.status = 'SEEN' AND p.block_number + c.confirmations - 1 <= ${tip}
    UNION
    SELECT s.charge_id FROM settlements s JOIN charges c ON c.id = s.charge_id
    WHERE s.chain_id = ${chainId} AND s.status = 'SEEN' AND s.block_number + c.confirmations - 1 <= ${tip}`;
  const changed: Charge[] = [];
  for (const { chargeId } of due) {
    const charge = await confirmChargeMoney(prisma, settings, chargeId, tip, now);
    if (charge) changed.push(charge);
  }
  return changed;
}

async function confirmChargeMoney(prisma: Prisma, settings: PaymentSettings, chargeId: string, tip: bigint, now: Date): Promise<Charge | null> {
  const confirmed = await prisma.$transaction(async (tx) => {
    // The row lock orders this against cancel, expiry and the payout of the same charge.
    const [charge] = await tx.$queryRaw<Charge[]>`SELECT ${CHARGE_COLUMNS} FROM charges WHERE id = ${chargeId} FOR UPDATE`;
    if (!charge) return null;
    const depth = charge.confirmations ?? 1;
    const payments = await tx.$queryRaw<PaymentRow[]>`
      UPDATE payments SET status = 'CONFIRMED', confirmed_at = ${now}, late = ${FINAL.includes(charge.status)}
      WHERE charge_id = ${chargeId} AND status = 'SEEN' AND block_number + ${depth} - 1 <= ${tip}
      RETURNING tx_hash AS "txHash", log_index AS "logIndex", block_number AS "blockNumber", from_address AS "fromAddress", amount, status::text AS status`;
    const settlements = await tx.$queryRaw<SettlementRow[]>`
      UPDATE settlements SET status = 'CONFIRMED', confirmed_at = ${now}
      WHERE charge_id = ${chargeId} AND status = 'SEEN' AND block_number + ${depth} - 1 <= ${tip}
      RETURNING tx_hash AS "txHash", log_index AS "logIndex", block_number AS "blockNumber", net_amount AS "netAmount", fee_amount AS "feeAmount"`;
    if (payments.length === 0 && settlements.length === 0) return null;
    const change = applyChainMoney(charge, payments.sort(byPosition), settlements.sort(byPosition), settings, now);
    const updated = await tx.charge.update({ where: { id: chargeId }, data: change.data });
    // The invoice it pays counts the money in the same transaction (its row after the charge's).
    if (updated.invoiceId !== null && payments.length > 0) {
      const amount = payments.reduce((sum, p) => sum + toUnits(p.amount), 0n);
      change.events.push(await invoicePaymentEvent(tx, updated.invoiceId, amount, settings, now));
    }
    return { updated, events: await recordEvents(tx, change.events) };
  });
  if (!confirmed) return null;
  settings.feed?.changed([confirmed.updated], confirmed.events);
  return confirmed.updated;
}

/**
 * The charge after newly confirmed `payments` then `settlements` (each in chain order): the update
 * to write and the events to record, each carrying the charge as it was right after its step.
 */
function applyChainMoney(
  charge: Charge,
  payments: PaymentRow[],
  settlements: SettlementRow[],
  settings: PaymentSettings,
  now: Date,
): { data: P.ChargeUpdateInput; events: NewEvent[] } {
  const c: ChargeView = { ...charge };
  const data: P.ChargeUpdateInput = {};
  const events: NewEvent[] = [];
  const event = (type: NewEvent["type"], extra: object = {}) => events.push({ scope: c, type, data: { ...chargeResource(c, settings), ...extra } });

  if (payments.length > 0) {
    const amounts = payments.map((p) => toUnits(p.amount));
    const received = (c.amountReceived === null ? 0n : toUnits(c.amountReceived)) + amounts.reduce((a, b) => a + b, 0n);
    c.amountReceived = received;
    data.amountReceived = received.toString();
    const paid = { payments: payments.map((p) => paymentResource({ ...p, status: "CONFIRMED" })) };
    if (FINAL.includes(c.status)) {
      event("charge.late_payment", paid);
    } else if (c.status === "PENDING" && received >= acceptedAmount(c)) {
      c.status = data.status = nextStatus(c, "receive", now);
      event("charge.received", { ...paid, ...underpaid(c, received) });
    } else if (c.status === "PENDING") {
      // The buyer is mid-payment: give them time to send the rest, unless this is dust.
      const minutes = partialExtensionMinutes(c, amounts, settings.partialExtensionMinutes);
      if (minutes > 0) {
        c.expiresAt = data.expiresAt = new Date(Math.max(c.expiresAt.getTime(), now.getTime()) + minutes * MINUTE_MS);
        c.expiryExtendedMinutes = data.expiryExtendedMinutes = c.expiryExtendedMinutes + minutes;
      }
      event("charge.partial", paid);
    }
  }

  if (settlements.length > 0) {
    const net = settlements.reduce((sum, s) => sum + toUnits(s.netAmount), 0n);
    const fee = settlements.reduce((sum, s) => sum + toUnits(s.feeAmount), 0n);
    const settled = toUnits(c.settledAmount) + net + fee;
    c.settledAmount = settled;
    c.netAmount = (c.netAmount === null ? 0n : toUnits(c.netAmount)) + net;
    c.feeAmount = (c.feeAmount === null ? 0n : toUnits(c.feeAmount)) + fee;
    const list: StoredSettlement[] = [
      ...storedSettlements(c),
      ...settlements.map((s) => ({
        txHash: s.txHash,
        logIndex: s.logIndex,
        blockNumber: Number(s.blockNumber),
        netAmount: toUnits(s.netAmount).toString(),
        feeAmount: toUnits(s.feeAmount).toString(),
        confirmedAt: now.toISOString(),
      })),
    ];
    c.settlements = list as unknown as P.JsonValue;
    Object.assign(data, { settledAmount: settled.toString(), netAmount: c.netAmount.toString(), feeAmount: c.feeAmount.toString(), settlements: list });
    const received = c.amountReceived === null ? 0n : toUnits(c.amountReceived);
    if (settled >= received) {
      // Everything is out of the clone: whatever held the payout up is over.
      c.payoutBlockedReason = data.payoutBlockedReason = null;
      c.payoutBlockedAt = data.payoutBlockedAt = null;
      c.flushFailures = data.flushFailures = 0;
      c.flushRetryAt = data.flushRetryAt = null;
    }
    const last = settlements[settlements.length - 1]!;
    if (c.status === "RECEIVED" && settled >= received) {
      c.status = data.status = nextStatus(c, "complete", now);
      c.completedAt = data.completedAt = now;
      c.flushTxHash = data.flushTxHash = last.txHash;
      const overpaid = received - c.amount;
      event("charge.completed", { overpaidAmount: formatAmount(overpaid > 0n ? overpaid : 0n), ...underpaid(c, received) });
    } else {
      // A completed charge keeps the settlement that completed it; any other keeps its first.
      if (c.flushTxHash === null) c.flushTxHash = data.flushTxHash = settlements[0]!.txHash;
      event("charge.payout_confirmed");
    }
  }
  return { data, events };
}

/** `underpaidAmount` for a charge paid within its underpayment tolerance (and nothing when paid in full). */
function underpaid(c: { amount: bigint }, received: bigint): { underpaidAmount?: string } {
  return received < c.amount ? { underpaidAmount: formatAmount(c.amount - received) } : {};
}

/** Money the indexer saw move into (a payment) or out of (a settlement) a charge's clone, not yet confirmed. */
export interface SeenChainMoney {
  payments: P.PaymentCreateManyInput[];
  settlements: P.SettlementCreateManyInput[];
}

/** Records money seen on chain, inside the indexer's transaction for its range (a log seen twice is recorded once). */
export async function recordSeenChainMoney(tx: P.TransactionClient, seen: SeenChainMoney): Promise<void> {
  await tx.payment.createMany({ data: seen.payments, skipDuplicates: true });
  await tx.settlement.createMany({ data: seen.settlements, skipDuplicates: true });
}

/**
 * Forgets the unconfirmed money seen above `blockNumber` on `chainId` (a reorg replaced those
 * blocks), inside the indexer's rollback. Returns how many confirmed records lie above it: a reorg
 * deeper than the confirmations, which nothing can undo safely.
 */
export async function forgetSeenChainMoneyAbove(tx: P.TransactionClient, chainId: number, blockNumber: bigint): Promise<number> {
  const above = { chainId, blockNumber: { gt: blockNumber } };
  await tx.payment.deleteMany({ where: { ...above, status: "SEEN" } });
  await tx.settlement.deleteMany({ where: { ...above, status: "SEEN" } });
  const [payments, settlements] = await Promise.all([
    tx.payment.count({ where: { ...above, status: "CONFIRMED" } }),
    tx.settlement.count({ where: { ...above, status: "CONFIRMED" } }),
  ]);
  return payments + settlements;
}

/** The charges on `chainId` with a payment waiting for confirmations: their progress moves with every block. */
export async function chargesAwaitingConfirmations(prisma: Prisma, chainId: number): Promise<ChargeRef[]> {
  return prisma.$queryRaw`
    SELECT DISTINCT c.id, c.merchant_id AS "merchantId", c.livemode FROM payments p JOIN charges c ON c.id = p.charge_id
    WHERE p.chain_id = ${chainId} AND p.status = 'SEEN'`;
}
