// Chain transfers: the USDC Transfers that moved a charge's money, as the indexer reads them,
// whoever sent them (a buyer, our relayer, a bot calling a clone's public functions, the merchant's
// wallet paying a refund by any means). They are the observations the ledger is derived from:
//
//   into a charge's address                      PAYMENT   (on every chain of the charge's mode)
//   out of it to the charge's settlement wallet  PAYOUT
//   out of it to anywhere else (the fee)         FEE       (a clone can send nowhere but those two)
//   settlement wallet → a waiting refund's address, exactly its amount, after it was made
//                                                REFUND    (by the authorization's nonce when one was
//                                                           used in that transaction, else oldest first)
//
//   SEEN ──confirmations──▶ CONFIRMED (a ledger row, domain/payments.ts) ──deep reorg──▶ REVERSED
//     └── shallow reorg: forgotten
//
// Invariants:
// - a transfer is identified by what it is, not where it sat: chain, kind, transaction, parties,
//   amount, and its place among identical transfers of that transaction (`factKey`); one that a reorg
//   re-includes at another log index is the same transfer, recorded once;
// - a SEEN transfer above a fork is forgotten with the blocks that held it; a CONFIRMED one is only
//   ever REVERSED (with a reversal in the ledger), after the node's receipts show it gone;
// - the authorizations a transaction used (AuthorizationUsed) are recorded with it: money on its way
//   ends once that is confirmed (domain/authorizations.ts); one its signer cancelled
//   (AuthorizationCanceled) ends as soon as it is seen, and is never relayed.
import type { Prisma } from "../db/client.js";
import { getAddress } from "ethers";
import type { Prisma as P } from "../generated/prisma/client.js";
import { newId } from "./ids.js";
import { toUnits } from "./money.js";

/** A USDC Transfer log as the indexer read it (addresses checksummed). */
export interface SeenTransfer {
  txHash: string;
  logIndex: number;
  blockNumber: bigint;
  blockHash: string;
  blockTime: Date | null;
  from: string;
  to: string;
  amount: bigint;
}

/** An AuthorizationUsed log: `authorizer`'s EIP-3009 nonce was spent in `txHash`. */
export interface SeenAuthorizationUse {
  txHash: string;
  blockNumber: bigint;
  authorizer: string;
  nonce: string;
}

/** A transfer matched to a charge (and a refund), ready to record. */
export type Observation = P.ChainTransferCreateManyInput;

/**
 * What a transfer is, whatever its log index: its transaction, parties and amount, and `occurrence`,
 * its place among the identical transfers of that transaction (0 for the first).
 */
export function factKey(t: { txHash: string; from: string; to: string; amount: bigint }, occurrence: number): string {
  return `${t.txHash.toLowerCase()}:${t.from.toLowerCase()}:${t.to.toLowerCase()}:${t.amount}:${occurrence}`;
}

/** The fact keys of a range's transfers, in log order (identical transfers of a transaction numbered 0, 1, …). */
export function factKeys(transfers: readonly SeenTransfer[]): string[] {
  const seen = new Map<string, number>();
  return transfers.map((t) => {
    const base = factKey(t, 0).slice(0, -2);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    return `${base}:${n}`;
  });
}

interface ChargeAt {
  id: string;
  depositAddress: string;
  settlementWallet: string;
}

interface WaitingRefund {
  id: string;
  chargeId: string;
  fromAddress: string;
  address: string;
  amount: bigint;
  afterBlock: bigint;
}

/**
 * The observations among a range's transfers on `chain`: payments into, and payouts and fees out of,
 * the charges' addresses (those of the chain's mode; a version 1 charge only on its own chain), and
 * the transfers that pay waiting refunds. `transfers` are in log order.
 */
export async function matchTransfers(
  db: Prisma | P.TransactionClient,
  chain: { chainId: number; testnet: boolean },
  transfers: readonly SeenTransfer[],
  uses: readonly SeenAuthorizationUse[],
): Promise<Observation[]> {
  if (transfers.length === 0) return [];
  const keys = factKeys(transfers);
  const addresses = [...new Set(transfers.flatMap((t) => [t.to, t.from]))];
  const charges = await db.$queryRaw<ChargeAt[]>`
    SELECT id, deposit_address AS "depositAddress", settlement_wallet AS "settlementWallet" FROM charges
    WHERE deposit_address = ANY(${addresses}) AND livemode = ${!chain.testnet} AND (contract_version = 2 OR chain_id = ${chain.chainId})`;
  const byAddress = new Map(charges.map((c) => [c.depositAddress, c]));
  const observations: Observation[] = [];
  const observe = (t: SeenTransfer, i: number, kind: Observation["kind"], chargeId: string, refundId: string | null = null) =>
    observations.push({
      id: newId("xfer"),
      chainId: chain.chainId,
      txHash: t.txHash,
      logIndex: t.logIndex,
      blockNumber: t.blockNumber,
      blockHash: t.blockHash,
      blockTime: t.blockTime,
      fromAddress: t.from,
      toAddress: t.to,
      amount: t.amount.toString(),
      factKey: keys[i]!,
      kind,
      chargeId,
      refundId,
    });
  transfers.forEach((t, i) => {
    const into = byAddress.get(t.to);
    if (into) observe(t, i, "PAYMENT", into.id);
    const out = byAddress.get(t.from);
    if (out) observe(t, i, getAddress(t.to) === getAddress(out.settlementWallet) ? "PAYOUT" : "FEE", out.id);
  });
  for (const { transfer, index, refund } of await matchRefunds(db, chain.chainId, transfers, uses)) {
    observe(transfer, index, "REFUND", refund.chargeId, refund.id);
  }
  return observations;
}

/**
 * The transfers among `transfers` that pay refunds waiting on `chainId`. A transfer in a transaction
 * that used a refund's authorization (its nonce) pays that refund; any other pays the oldest waiting
 * refund it matches exactly (wallet, address, amount, after the refund was made). A transfer already
 * recorded for a refund (a range read again) pays no other.
 */
async function matchRefunds(
  db: Prisma | P.TransactionClient,
  chainId: number,
  transfers: readonly SeenTransfer[],
  uses: readonly SeenAuthorizationUse[],
): Promise<{ transfer: SeenTransfer; index: number; refund: WaitingRefund }[]> {
  const rows = await db.refund.findMany({
    where: { chainId, status: "AWAITING_PAYMENT", txHash: null },
    orderBy: [{ createdAt: "asc" }, { id: "asc" }],
    select: { id: true, chargeId: true, fromAddress: true, address: true, amount: true, afterBlock: true },
  });
  if (rows.length === 0) return [];
  const waiting: WaitingRefund[] = rows.map((r) => ({ ...r, address: r.address!, amount: toUnits(r.amount) }));
  const key = (from: string, to: string, units: bigint) => `${from.toLowerCase()}|${to.toLowerCase()}|${units}`;
  // Refunds by what pays them, oldest first: one lookup per transfer, however many wait.
  const byKey = new Map<string, WaitingRefund[]>();
  for (const r of waiting) byKey.set(key(r.fromAddress, r.address, r.amount), [...(byKey.get(key(r.fromAddress, r.address, r.amount)) ?? []), r]);
  const candidates = transfers.map((t, index) => ({ t, index })).filter(({ t }) => byKey.has(key(t.from, t.to, t.amount)));
  if (candidates.length === 0) return [];
  // The refunds whose authorization a transaction of this range used: that transaction pays them.
  const byNonce = new Map<string, string>();
  if (uses.length > 0) {
    const used = await db.authorization.findMany({
      where: { chainId, purpose: "REFUND", OR: uses.map((u) => ({ fromAddress: u.authorizer, nonce: u.nonce.toLowerCase() })) },
      select: { refundId: true, fromAddress: true, nonce: true },
    });
    const refundOf = new Map(used.map((a) => [`${a.fromAddress.toLowerCase()}|${a.nonce}`, a.refundId!]));
    for (const u of uses) {
      const refundId = refundOf.get(`${u.authorizer.toLowerCase()}|${u.nonce.toLowerCase()}`);
      if (refundId) byNonce.set(`${u.txHash.toLowerCase()}|${u.authorizer.toLowerCase()}`, refundId);
    }
  }
  const keys = factKeys(transfers);
  const taken = new Set(
    (
      await db.chainTransfer.findMany({
        where: { chainId, kind: "REFUND", status: { not: "REVERSED" }, factKey: { in: candidates.map(({ index }) => keys[index]!) } },
        select: { factKey: true },
      })
    ).map((r) => r.factKey),
  );
  const matched: { transfer: SeenTransfer; index: number; refund: WaitingRefund }[] = [];
  for (const { t, index } of candidates) {
    if (taken.has(keys[index]!)) continue;
    const queue = byKey.get(key(t.from, t.to, t.amount))!;
    const own = byNonce.get(`${t.txHash.toLowerCase()}|${t.from.toLowerCase()}`);
    const i = own !== undefined ? queue.findIndex((r) => r.id === own) : queue.findIndex((r) => t.blockNumber > r.afterBlock);
    if (i < 0) continue;
    const [refund] = queue.splice(i, 1);
    matched.push({ transfer: t, index, refund: refund! });
  }
  return matched;
}

/**
 * Records a range's observations, authorization uses and cancellations inside the indexer's
 * transaction for it: a fact already recorded is not recorded again, a refund shows the transaction
 * that pays it, and an authorization its signer cancelled ends at once (see endCancelled).
 */
export async function recordSeenTransfers(
  tx: P.TransactionClient,
  chainId: number,
  observations: Observation[],
  uses: readonly SeenAuthorizationUse[],
  cancels: readonly SeenAuthorizationUse[] = [],
  now = new Date(),
): Promise<void> {
  await endCancelled(tx, chainId, cancels, now);
  if (observations.length > 0) await tx.chainTransfer.createMany({ data: observations, skipDuplicates: true });
  for (const o of observations) {
    if (o.kind === "REFUND") await tx.refund.updateMany({ where: { id: o.refundId!, status: "AWAITING_PAYMENT", txHash: null }, data: { txHash: o.txHash } });
  }
  for (const u of uses) {
    await tx.authorization.updateMany({
      where: { chainId, fromAddress: getAddress(u.authorizer), nonce: u.nonce.toLowerCase(), endedAt: null },
      data: { usedTxHash: u.txHash, usedBlock: u.blockNumber },
    });
  }
}

/**
 * The authorizations whose nonce the signer cancelled on chain (USDC's cancelAuthorization): no one can
 * send them any more, so each ends at once, `cancelled` (its charge takes another payment, its
 * refund another authorization), and one not sent yet is FAILED: the relayer never spends gas on it.
 * Not undone by a reorg: if the cancellation vanished, whoever sent the authorization then would pay
 * the charge's address like any transfer, and the indexer would see it.
 */
async function endCancelled(tx: P.TransactionClient, chainId: number, cancels: readonly SeenAuthorizationUse[], now: Date): Promise<void> {
  for (const c of cancels) {
    const which = { chainId, fromAddress: getAddress(c.authorizer), nonce: c.nonce.toLowerCase() };
    await tx.authorization.updateMany({
      where: { ...which, status: "RELAYING" },
      data: { status: "FAILED", error: `cancelled on chain by its signer (cancelAuthorization in ${c.txHash})` },
    });
    await tx.authorization.updateMany({
      where: { ...which, endedAt: null },
      data: { endedAt: now, endReason: "cancelled", usedTxHash: c.txHash, usedBlock: c.blockNumber },
    });
  }
}

/**
 * Forgets what was seen above `blockNumber` on `chainId` and not confirmed (a reorg replaced those
 * blocks): the transfers, the refunds' transactions, the authorizations' uses. Inside the indexer's
 * rollback. The confirmed transfers above it (a reorg deeper than the confirmations) are recorded as
 * re-checks in the same transaction, one open re-check per transfer however many reorgs pass over it
 * (domain/reversals.ts works them off). Returns how many were added.
 */
export async function forgetSeenAbove(
  tx: P.TransactionClient,
  chainId: number,
  blockNumber: bigint,
  reorg: { depth: number; reason: string },
): Promise<number> {
  const above = { chainId, blockNumber: { gt: blockNumber } };
  const forgotten = await tx.chainTransfer.findMany({ where: { ...above, status: "SEEN", kind: "REFUND" }, select: { refundId: true } });
  await tx.chainTransfer.deleteMany({ where: { ...above, status: "SEEN" } });
  const refundIds = forgotten.map((f) => f.refundId!).filter(Boolean);
  if (refundIds.length > 0) await tx.refund.updateMany({ where: { id: { in: refundIds }, status: "AWAITING_PAYMENT" }, data: { txHash: null } });
  await tx.authorization.updateMany({ where: { chainId, usedBlock: { gt: blockNumber }, endedAt: null }, data: { usedTxHash: null, usedBlock: null } });
  return tx.$executeRaw`
    INSERT INTO reorg_rechecks (id, chain_id, transfer_id, tx_hash, fact_key, depth, reason)
    SELECT 'rchk_' || replace(gen_random_uuid()::text, '-', ''), chain_id, id, tx_hash, fact_key, ${reorg.depth}, ${reorg.reason}
    FROM chain_transfers WHERE chain_id = ${chainId} AND block_number > ${blockNumber} AND status = 'CONFIRMED'
    ON CONFLICT DO NOTHING`;
}

/** The charges on `chainId` with a payment waiting for confirmations: their progress moves with every block. */
export async function chargesAwaitingConfirmations(prisma: Prisma, chainId: number): Promise<{ id: string; merchantId: string; livemode: boolean }[]> {
  return prisma.$queryRaw`
    SELECT DISTINCT c.id, c.merchant_id AS "merchantId", c.livemode FROM chain_transfers t JOIN charges c ON c.id = t.charge_id
    WHERE t.chain_id = ${chainId} AND t.status = 'SEEN' AND t.kind = 'PAYMENT'`;
}
