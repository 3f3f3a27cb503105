// SubscriptionsV1's events as chain facts, read by the indexer in the same eth_getLogs as USDC's:
//
//   Pulled(hash, payer, merchant, token, periodIndex, net, fee, feeTo), for a permission we know
//       PAYMENT  payer → the contract, net + fee   (the pull as a whole: what the buyer paid)
//       PAYOUT   the contract → merchant, net      (the money went straight to the merchant wallet)
//       FEE      the contract → feeTo, fee         (none when the fee is 0)
//     on the charge of the subscription's invoice for that period; confirmed into the ledger like a
//     charge's transfers (domain/payments.ts): payment, payout, fee; the charge COMPLETED, the invoice PAID
//   Revoked(hash, by) by the payer  the subscription CANCELED revoked_by_payer, as soon as it is seen
//
// Invariants:
// - each fact's key names the transaction, the permission and the kind ("<tx>:pull:<hash>:<kind>"):
//   a pull moves money once per transaction, so a re-read or a reorg's re-inclusion is the same fact;
// - a Pulled of a permission we do not know, or of a period we never invoiced, is not ours: ignored;
// - permission hashes are compared as stored: lower-case hex, as chain/subscriptions.ts permissionHash
//   gives them and events carry them (so the unique index finds them);
// - a revoke is not undone by a reorg: if it vanished, the payer can revoke again, and until then
//   nothing is pulled for an ended subscription.
import { getAddress, type Log } from "ethers";
import { subscriptionsInterface } from "../chain/subscriptions.js";
import type { Prisma } from "../db/client.js";
import type { Prisma as P } from "../generated/prisma/client.js";
import type { Observation } from "./chain-transfers.js";
import { newId } from "./ids.js";
import { endSubscription } from "./subscription-endings.js";
import type { SubscriptionSettings } from "./subscriptions.js";

/** Pulled's topic. */
export const PULLED_TOPIC = subscriptionsInterface.getEvent("Pulled")!.topicHash;
/** Revoked's topic. */
export const REVOKED_TOPIC = subscriptionsInterface.getEvent("Revoked")!.topicHash;

/** A Pulled log as read. */
export interface SeenPull {
  txHash: string;
  logIndex: number;
  blockNumber: bigint;
  blockHash: string;
  hash: string;
  payer: string;
  merchant: string;
  periodIndex: number;
  net: bigint;
  fee: bigint;
  feeTo: string;
}

/** A Revoked log as read. */
export interface SeenRevoke {
  txHash: string;
  hash: string;
  by: string;
}

/** The contract's Pulled and Revoked among `logs` (the caller keeps only the contract's own), in log order. */
export function parseSubscriptionLogs(logs: readonly Log[]): { pulls: SeenPull[]; revokes: SeenRevoke[] } {
  const pulls: SeenPull[] = [];
  const revokes: SeenRevoke[] = [];
  const ordered = [...logs].sort((a, b) => a.blockNumber - b.blockNumber || a.index - b.index);
  for (const l of ordered) {
    const parsed = subscriptionsInterface.parseLog({ topics: [...l.topics], data: l.data });
    if (parsed?.name === "Pulled") {
      pulls.push({
        txHash: l.transactionHash,
        logIndex: l.index,
        blockNumber: BigInt(l.blockNumber),
        blockHash: l.blockHash,
        hash: String(parsed.args.hash).toLowerCase(),
        payer: getAddress(parsed.args.payer as string),
        merchant: getAddress(parsed.args.merchant as string),
        periodIndex: Number(parsed.args.periodIndex),
        net: parsed.args.net as bigint,
        fee: parsed.args.fee as bigint,
        feeTo: getAddress(parsed.args.feeTo as string),
      });
    } else if (parsed?.name === "Revoked") {
      revokes.push({ txHash: l.transactionHash, hash: String(parsed.args.hash).toLowerCase(), by: getAddress(parsed.args.by as string) });
    }
  }
  return { pulls, revokes };
}

/** The fact key of one part of a pull. */
export function pullFactKey(txHash: string, hash: string, kind: "payment" | "payout" | "fee"): string {
  return `${txHash.toLowerCase()}:pull:${hash.toLowerCase()}:${kind}`;
}

/** The fact keys a receipt's pulls make, with the log each sits at (a reorg's re-check asks). */
export function pullFactsOf(logs: readonly Log[]): { key: string; log: SeenPull }[] {
  return parseSubscriptionLogs(logs).pulls.flatMap((p) =>
    (["payment", "payout", "fee"] as const).filter((k) => k !== "fee" || p.fee > 0n).map((k) => ({ key: pullFactKey(p.txHash, p.hash, k), log: p })),
  );
}

/**
 * The observations of a range's pulls on `chainId`: for each pull of a permission of ours, its
 * payment, payout and fee on the charge of the period's invoice. `contract` is the recorded counterparty.
 */
export async function matchPulls(db: Prisma | P.TransactionClient, chainId: number, contract: string, pulls: readonly SeenPull[]): Promise<Observation[]> {
  if (pulls.length === 0) return [];
  const hashes = [...new Set(pulls.map((p) => p.hash))];
  const rows = await db.$queryRaw<{ hash: string; periodIndex: number; chargeId: string }[]>`
    SELECT s.permission_hash AS hash, i.period_index AS "periodIndex", c.id AS "chargeId"
    FROM subscriptions s JOIN invoices i ON i.subscription_id = s.id JOIN charges c ON c.invoice_id = i.id
    WHERE s.chain_id = ${chainId} AND s.permission_hash = ANY(${hashes})
    ORDER BY c.created_at DESC`;
  const chargeOf = new Map<string, string>();
  for (const r of rows) if (!chargeOf.has(`${r.hash.toLowerCase()}:${r.periodIndex}`)) chargeOf.set(`${r.hash.toLowerCase()}:${r.periodIndex}`, r.chargeId);
  // Our own pull pays the invoice it was sent for, whichever window it was mined in: a retry or a
  // fee-bumped pull mined after its period ended still pays that period's invoice (the contract
  // counts it in the later window), and the ledger never misses money that moved.
  const txHashes = [...new Set(pulls.map((p) => p.txHash))];
  const sent = await db.$queryRaw<{ txHash: string; chargeId: string }[]>`
    SELECT h AS "txHash", c.id AS "chargeId"
    FROM subscription_pulls sp JOIN relayer_transactions rt ON rt.id = sp.tx_id
      CROSS JOIN LATERAL unnest(rt.tx_hashes) AS h
      JOIN charges c ON c.invoice_id = sp.invoice_id
    WHERE sp.chain_id = ${chainId} AND h = ANY(${txHashes})
    ORDER BY c.created_at DESC`;
  const chargeOfTx = new Map<string, string>();
  for (const r of sent) if (!chargeOfTx.has(r.txHash.toLowerCase())) chargeOfTx.set(r.txHash.toLowerCase(), r.chargeId);
  const out: Observation[] = [];
  for (const p of pulls) {
    const chargeId = chargeOfTx.get(p.txHash.toLowerCase()) ?? chargeOf.get(`${p.hash}:${p.periodIndex}`);
    if (!chargeId) continue;
    const at = {
      chainId,
      txHash: p.txHash,
      logIndex: p.logIndex,
      blockNumber: p.blockNumber,
      blockHash: p.blockHash,
      blockTime: null,
      chargeId,
      refundId: null,
    };
    const row = (kind: Observation["kind"], from: string, to: string, amount: bigint, key: "payment" | "payout" | "fee"): Observation => ({
      id: newId("xfer"),
      ...at,
      fromAddress: from,
      toAddress: to,
      amount: amount.toString(),
      factKey: pullFactKey(p.txHash, p.hash, key),
      kind,
    });
    out.push(row("PAYMENT", p.payer, getAddress(contract), p.net + p.fee, "payment"));
    out.push(row("PAYOUT", getAddress(contract), p.merchant, p.net, "payout"));
    if (p.fee > 0n) out.push(row("FEE", getAddress(contract), p.feeTo, p.fee, "fee"));
  }
  return out;
}

/**
 * Ends, in the indexer's transaction, the subscriptions whose permission its payer revoked on chain
 * (a revoke by our spender is the merchant's cancel, already recorded).
 */
export async function applyRevokes(
  tx: P.TransactionClient,
  chainId: number,
  revokes: readonly SeenRevoke[],
  settings: SubscriptionSettings,
  now: Date,
): Promise<void> {
  for (const r of revokes) {
    const [row] = await tx.$queryRaw<{ id: string }[]>`
      SELECT id FROM subscriptions WHERE chain_id = ${chainId} AND permission_hash = ${r.hash}
        AND status NOT IN ('CANCELED', 'INCOMPLETE_EXPIRED') AND lower(payer) = ${r.by.toLowerCase()} FOR UPDATE`;
    if (!row) continue;
    const sub = await tx.subscription.findUniqueOrThrow({ where: { id: row.id } });
    await endSubscription(tx, sub, "revoked_by_payer", settings, now);
  }
}
