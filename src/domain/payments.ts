// Payments: USDC transfers to a charge's clone, as the indexer records them. A payment is SEEN once
// its block is read and CONFIRMED once it has the charge's confirmations; only confirmed money
// counts. Confirming is where money changes a charge (API.md "Charge lifecycle"):
//
//   PENDING, total < amount        stays PENDING, charge.partial, expiry pushed back
//   PENDING, total ≥ amount        RECEIVED, charge.received; the clone is then flushed
//   RECEIVED                       counted; the flush in flight or the next one takes it
//   EXPIRED, CANCELLED, COMPLETED  late: counted, charge.late_payment, flushed to the merchant
//
// Invariants: a payment is confirmed once (status predicate under the charge's row lock), so money
// is never counted twice; a reorg deletes only SEEN payments, so nothing counted is taken back.
import type { Prisma } from "../db/client.js";
import { Prisma as P } from "../generated/prisma/client.js";
import { type ChargeStatus, nextStatus } from "./charge-lifecycle.js";
import { type ChangeSettings, type Charge, CHARGE_COLUMNS, chargeResource } from "./charges.js";
import { type NewEvent, recordEvents } from "./events.js";
import type { ChargeRef } from "./live.js";
import { formatAmount } from "./money.js";

const MINUTE_MS = 60_000;

/** What confirming payments needs from the service settings. */
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
  amount: bigint;
  status: "SEEN" | "CONFIRMED";
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

const FINAL: readonly ChargeStatus[] = ["EXPIRED", "CANCELLED", "COMPLETED"];

/**
 * Confirms every SEEN payment on `chainId` that has its charge's confirmations at block `tip`, and
 * applies it to its charge. Returns the charges that changed.
 */
export async function confirmPayments(prisma: Prisma, settings: PaymentSettings, chainId: number, tip: bigint, now = new Date()): Promise<Charge[]> {
  const due = await prisma.$queryRaw<{ chargeId: string }[]>`
    SELECT DISTINCT p.charge_id AS "chargeId" FROM payments p JOIN charges c ON c.id = p.charge_id
    WHERE p.chain_id = ${chainId} AND p.status = 'SEEN' AND p.block_number + c.confirmations - 1 <= ${tip}`;
  const changed: Charge[] = [];
  for (const { chargeId } of due) {
    const charge = await confirmChargePayments(prisma, settings, chargeId, tip, now);
    if (charge) changed.push(charge);
  }
  return changed;
}

async function confirmChargePayments(prisma: Prisma, settings: PaymentSettings, chargeId: string, tip: bigint, now: Date): Promise<Charge | null> {
  const confirmed = await prisma.$transaction(async (tx) => {
    // The row lock orders this against cancel, expiry and the settlement of the same charge.
    const [charge] = await tx.$queryRaw<Charge[]>`SELECT ${CHARGE_COLUMNS} FROM charges WHERE id = ${chargeId} FOR UPDATE`;
    if (!charge) return null;
    const late = FINAL.includes(charge.status);
    const confirmed = await tx.$queryRaw<PaymentRow[]>`
      UPDATE payments SET status = 'CONFIRMED', confirmed_at = ${now}, late = ${late}
      WHERE charge_id = ${chargeId} AND status = 'SEEN' AND block_number + ${charge.confirmations ?? 1} - 1 <= ${tip}
      RETURNING tx_hash AS "txHash", log_index AS "logIndex", block_number AS "blockNumber", from_address AS "fromAddress", amount, status::text AS status`;
    if (confirmed.length === 0) return null;
    confirmed.sort((a, b) => Number(a.blockNumber - b.blockNumber) || a.logIndex - b.logIndex);
    const amountReceived = (charge.amountReceived ?? 0n) + confirmed.reduce((sum, p) => sum + p.amount, 0n);

    const data: P.ChargeUpdateInput = { amountReceived };
    let type: NewEvent["type"] | null = null;
    if (late) {
      type = "charge.late_payment";
    } else if (charge.status === "PENDING") {
      if (amountReceived >= charge.amount) {
        data.status = nextStatus({ ...charge, amountReceived }, "receive", now);
        type = "charge.received";
      } else {
        // The buyer is mid-payment: give them time to send the rest.
        const from = Math.max(charge.expiresAt.getTime(), now.getTime());
        data.expiresAt = new Date(from + settings.partialExtensionMinutes * MINUTE_MS);
        type = "charge.partial";
      }
    }
    const updated = await tx.charge.update({ where: { id: chargeId }, data });
    const payments = confirmed.map(paymentResource);
    const events = type ? await recordEvents(tx, [{ scope: updated, type, data: { ...chargeResource(updated, settings), payments } }]) : [];
    return { updated, events };
  });
  if (!confirmed) return null;
  settings.feed?.changed([confirmed.updated], confirmed.events);
  return confirmed.updated;
}

/** The charges on `chainId` with a payment waiting for confirmations: their progress moves with every block. */
export async function chargesAwaitingConfirmations(prisma: Prisma, chainId: number): Promise<ChargeRef[]> {
  return prisma.$queryRaw`
    SELECT DISTINCT c.id, c.merchant_id AS "merchantId", c.livemode FROM payments p JOIN charges c ON c.id = p.charge_id
    WHERE p.chain_id = ${chainId} AND p.status = 'SEEN'`;
}
