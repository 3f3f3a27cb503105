// The ledger (.docs/ledger.md): one immutable balance transaction per movement of a charge's money,
// posted when the chain transfer behind it is confirmed (domain/chain-transfers.ts), and a `reversal`
// of the opposite sign when a reorg deeper than the confirmations takes that transfer away.
//
//   transfer kind   row        sign   whose money field
//   PAYMENT         payment     +     charge.amountReceived, clone.held, invoice.amountPaid (on-time money only)
//   PAYOUT          payout      -     charge.netAmount, clone.held
//   FEE             fee         -     charge.feeAmount, clone.held
//   REFUND          refund      -     charge.amountRefunded (the merchant's wallet paid it, not the clone)
//
// Invariants:
// - rows are never updated or deleted (a database trigger refuses it); a transfer is posted once (a
//   unique index) and reversed at most once (another);
// - every money field above is a sum of rows, recomputed by `deriveMoney` in the same transaction as
//   the rows it sums: nothing else writes them;
// - a reversal carries what it reverses (charge, refund, invoice, chain, transaction, block), so any
//   sum filtered by those counts a transfer and its undoing together.
import type { Prisma as P } from "../generated/prisma/client.js";
import { newId } from "./ids.js";

/** What a confirmed chain transfer posts: its kind decides the row's type and sign. */
export interface ConfirmedTransfer {
  id: string;
  kind: "PAYMENT" | "PAYOUT" | "FEE" | "REFUND";
  chainId: number;
  txHash: string;
  blockNumber: bigint;
  amount: bigint;
  chargeId: string;
  refundId: string | null;
}

const TYPE_OF = { PAYMENT: "payment", PAYOUT: "payout", FEE: "fee", REFUND: "refund" } as const;

/** A confirmed transfer as the ledger posts it: whose money (`scope`) and which invoice a payment pays (null: none, or money too late for it). */
export interface PostedTransfer extends ConfirmedTransfer {
  scope: { merchantId: string; livemode: boolean };
  invoiceId: string | null;
  /** The x402 settlement a payment to an x402 address records, if settle relayed it. */
  x402PaymentId?: string | null;
}

/** Posts a row for each of `transfers` (of any charges), inside the caller's transaction. */
export async function postTransfers(tx: P.TransactionClient, transfers: readonly PostedTransfer[], now: Date): Promise<void> {
  if (transfers.length === 0) return;
  await tx.balanceTransaction.createMany({
    data: transfers.map((t) => ({
      id: newId("btx"),
      merchantId: t.scope.merchantId,
      livemode: t.scope.livemode,
      type: TYPE_OF[t.kind],
      amount: (t.kind === "PAYMENT" ? t.amount : -t.amount).toString(),
      chargeId: t.chargeId,
      refundId: t.refundId,
      invoiceId: t.kind === "PAYMENT" ? t.invoiceId : null,
      chainId: t.chainId,
      txHash: t.txHash,
      blockNumber: t.blockNumber,
      transferId: t.id,
      x402PaymentId: t.x402PaymentId ?? null,
      createdAt: now,
    })),
    // A transfer already posted (a confirmation run twice) posts nothing.
    skipDuplicates: true,
  });
}

/** Posts a reversal of every row that records one of `transferIds` and is not reversed yet; returns how many. */
export async function postReversals(tx: P.TransactionClient, transferIds: readonly string[], now: Date): Promise<number> {
  if (transferIds.length === 0) return 0;
  const rows = await tx.balanceTransaction.findMany({
    where: { transferId: { in: [...transferIds] }, type: { not: "reversal" } },
    select: {
      id: true,
      merchantId: true,
      livemode: true,
      amount: true,
      chargeId: true,
      refundId: true,
      invoiceId: true,
      chainId: true,
      txHash: true,
      blockNumber: true,
      transferId: true,
    },
  });
  const { count } = await tx.balanceTransaction.createMany({
    data: rows.map((r) => ({
      ...r,
      id: newId("btx"),
      type: "reversal" as const,
      amount: r.amount.negated(),
      reversesId: r.id,
      createdAt: now,
    })),
    skipDuplicates: true,
  });
  return count;
}

/**
 * Recomputes, from the ledger, every money field of `chargeIds`: the charges' amountReceived,
 * feeAmount, netAmount, settledAmount, amountRefunded and settlements, their clones' held amounts
 * (a clone row per charge and chain the ledger names; a subscription period's charge has no clone: its
 * pull moves the money straight from the payer), and the amountPaid of the invoices they pay.
 * Runs inside the transaction that posted the rows.
 */
export async function deriveMoney(tx: P.TransactionClient, chargeIds: readonly string[]): Promise<void> {
  if (chargeIds.length === 0) return;
  const ids = [...new Set(chargeIds)];
  // A row's kind of money is its own type, or for a reversal the type of the row it reverses.
  await tx.$executeRaw`
    WITH rows AS (
      SELECT b.charge_id, b.chain_id, b.amount, coalesce(o.type, b.type) AS kind, b.type = 'reversal' AS undo
      FROM balance_transactions b LEFT JOIN balance_transactions o ON o.id = b.reverses_id
      WHERE b.charge_id = ANY(${ids})
    ), sums AS (
      SELECT charge_id,
        bool_or(kind = 'payment' AND NOT undo) AS paid,
        bool_or(kind IN ('payout', 'fee') AND NOT undo) AS settled,
        coalesce(sum(amount) FILTER (WHERE kind = 'payment'), 0) AS received,
        -coalesce(sum(amount) FILTER (WHERE kind = 'fee'), 0) AS fees,
        -coalesce(sum(amount) FILTER (WHERE kind = 'payout'), 0) AS payouts,
        -coalesce(sum(amount) FILTER (WHERE kind = 'refund'), 0) AS refunded
      FROM rows GROUP BY charge_id
    ), payouts AS (
      -- The payouts that stand (not reversed), one per transaction and chain, oldest first.
      SELECT b.charge_id, json_agg(json_build_object(
          'txHash', b.tx_hash, 'chainId', b.chain_id, 'blockNumber', b.block_number,
          'netAmount', b.net::text, 'feeAmount', b.fee::text, 'confirmedAt', to_char(b.at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))
        ORDER BY b.at, b.block_number) AS list
      FROM (
        SELECT charge_id, chain_id, tx_hash, min(block_number) AS block_number, min(created_at) AS at,
          -coalesce(sum(amount) FILTER (WHERE type = 'payout'), 0) AS net, -coalesce(sum(amount) FILTER (WHERE type = 'fee'), 0) AS fee
        FROM balance_transactions x
        WHERE x.charge_id = ANY(${ids}) AND x.type IN ('payout', 'fee') AND NOT EXISTS (SELECT 1 FROM balance_transactions r WHERE r.reverses_id = x.id)
        GROUP BY charge_id, chain_id, tx_hash
      ) b GROUP BY b.charge_id
    )
    UPDATE charges c SET
      amount_received = CASE WHEN s.paid OR s.received <> 0 THEN s.received END,
      fee_amount = CASE WHEN s.settled OR s.fees <> 0 THEN s.fees END,
      net_amount = CASE WHEN s.settled OR s.payouts <> 0 THEN s.payouts END,
      settled_amount = s.fees + s.payouts,
      amount_refunded = s.refunded,
      settlements = coalesce((SELECT list FROM payouts p WHERE p.charge_id = c.id), '[]'::json)::jsonb,
      updated_at = now()
    FROM sums s WHERE s.charge_id = c.id`;
  await tx.$executeRaw`
    INSERT INTO clones (charge_id, chain_id, address, version, held)
    SELECT b.charge_id, b.chain_id, coalesce(c.deposit_address, c.clone_address), c.contract_version, sum(b.amount) FILTER (WHERE coalesce(o.type, b.type) <> 'refund')
    FROM balance_transactions b JOIN charges c ON c.id = b.charge_id LEFT JOIN balance_transactions o ON o.id = b.reverses_id
    WHERE b.charge_id = ANY(${ids}) AND coalesce(c.deposit_address, c.clone_address) IS NOT NULL
    GROUP BY b.charge_id, b.chain_id, c.deposit_address, c.clone_address, c.contract_version
    HAVING count(*) FILTER (WHERE coalesce(o.type, b.type) <> 'refund') > 0
    ON CONFLICT (charge_id, chain_id) DO UPDATE SET held = EXCLUDED.held, updated_at = now()`;
  await tx.$executeRaw`
    UPDATE invoices i SET amount_paid = coalesce((SELECT sum(b.amount) FROM balance_transactions b WHERE b.invoice_id = i.id), 0), updated_at = now()
    WHERE i.id IN (SELECT DISTINCT invoice_id FROM balance_transactions WHERE charge_id = ANY(${ids}) AND invoice_id IS NOT NULL)`;
}
