// Reconciliation (.docs/ledger.md): the ledger compared with the chain, at the newest block whose
// money is confirmed (chain_cursors.confirmed_block, B):
//
//   every clone in scope   its USDC balance at B = its ledger rows up to B (payments less payouts and
//                          fees, with reversals; a row counts from the block its transfer is in now,
//                          which a reorg's re-check may have moved past the row's); in scope: the clones of open charges, of charges
//                          that changed in the last week, holding money, or needing review, and the
//                          address of every open charge of the chain's mode (money may come on any chain)
//   every recent transfer  a confirmed transfer in the last blocks is still in the chain's block of
//                          that number (else its receipt must show it, moved); a transaction gone is
//                          one difference per charge, however many of its transfers the ledger holds
//
// A difference is never corrected here: its charge needs review (domain/review.ts), the worker counts
// it in a metric and logs it. Other tokens and the native coin found at the addresses are stored on the
// charge (strayAssets), to be swept. The chain side (balances, headers, receipts) is jobs/reconcile.ts.
import type { Prisma } from "../db/client.js";
import { Prisma as P } from "../generated/prisma/client.js";
import type { ChangeSettings } from "./charges/settings.js";
import { type StoredStrayAsset, storedStrayAssets } from "./stray-assets.js";
import { formatAmount } from "./money.js";
import { flagChargesForReview } from "./review.js";

/** A charge's address to compare: what the ledger says it held at the block. */
export interface ReconcileTarget {
  chargeId: string;
  address: string;
  /** Base units, by the ledger's rows up to the block. */
  expected: bigint;
  /** When the charge was made: no transfer into its address can be older. */
  since: Date;
}

/** A confirmed transfer recent enough to check that its block still stands. */
export interface RecentTransfer {
  id: string;
  chargeId: string;
  txHash: string;
  blockNumber: bigint;
  blockHash: string;
  factKey: string;
}

/** What the chain is compared with on one chain. */
export interface ReconcileInputs {
  /** The confirmed block (null: the chain has not been indexed and confirmed yet). */
  block: bigint | null;
  /** Its hash as the indexer stored it: read at another block of that number, the ledger would not be comparable. */
  blockHash: string | null;
  targets: ReconcileTarget[];
  recent: RecentTransfer[];
}

/** How far back a charge still counts as recently settled. */
const RECENT_DAYS = 7;

/**
 * What to compare on `chain`: its confirmed block, the addresses in scope with their ledger balance
 * there, and the recent transfers; `only` narrows it to those charges' addresses (no transfers).
 */
export async function reconcileInputs(
  prisma: Prisma,
  chain: { chainId: number; testnet: boolean },
  recentBlocks: number,
  now = new Date(),
  only?: readonly string[],
): Promise<ReconcileInputs> {
  const cursor = await prisma.chainCursor.findUnique({ where: { chainId: chain.chainId }, select: { confirmedBlock: true } });
  const block = cursor?.confirmedBlock ?? null;
  if (block === null) return { block, blockHash: null, targets: [], recent: [] };
  const stored = await prisma.chainBlock.findUnique({ where: { chainId_number: { chainId: chain.chainId, number: block } }, select: { hash: true } });
  const changedSince = new Date(now.getTime() - RECENT_DAYS * 86_400_000);
  const narrow = only === undefined ? P.sql`TRUE` : P.sql`charge_id = ANY(${[...only]})`;
  const rows = await prisma.$queryRaw<{ chargeId: string; address: string; expected: string; since: Date }[]>`
    WITH scope AS (SELECT * FROM (
      SELECT k.charge_id, k.address FROM clones k JOIN charges c ON c.id = k.charge_id
      WHERE k.chain_id = ${chain.chainId}
        AND (c.status IN ('PENDING', 'RECEIVED') OR k.held <> 0 OR c.updated_at >= ${changedSince} OR c.review_reason IS NOT NULL)
      UNION
      SELECT id, deposit_address FROM charges
      WHERE status = 'PENDING' AND livemode = ${!chain.testnet} AND contract_version = 2 AND deposit_address IS NOT NULL
    ) s WHERE ${narrow}), held AS (
      SELECT b.charge_id, sum(b.amount) AS amount FROM balance_transactions b LEFT JOIN balance_transactions o ON o.id = b.reverses_id
        LEFT JOIN chain_transfers t ON t.id = b.transfer_id
      WHERE b.charge_id IN (SELECT charge_id FROM scope) AND b.chain_id = ${chain.chainId}
        AND coalesce(t.block_number, b.block_number) <= ${block}
        AND coalesce(o.type, b.type) <> 'refund'
      GROUP BY b.charge_id
    )
    SELECT s.charge_id AS "chargeId", s.address, coalesce(h.amount, 0)::text AS expected, c.created_at AS since
    FROM scope s JOIN charges c ON c.id = s.charge_id LEFT JOIN held h ON h.charge_id = s.charge_id ORDER BY s.charge_id`;
  const recent =
    only === undefined && recentBlocks > 0
      ? await prisma.chainTransfer.findMany({
          where: { chainId: chain.chainId, status: "CONFIRMED", blockNumber: { gt: block - BigInt(recentBlocks), lte: block } },
          select: { id: true, chargeId: true, txHash: true, blockNumber: true, blockHash: true, factKey: true },
        })
      : [];
  return {
    block,
    blockHash: stored?.hash ?? null,
    targets: rows.map((r) => ({ chargeId: r.chargeId, address: r.address, expected: BigInt(r.expected), since: r.since })),
    recent,
  };
}

/** A difference between the ledger and the chain. */
export interface Difference {
  chainId: number;
  chargeId: string;
  kind: "balance" | "transfer_missing";
  address: string | null;
  /** What the ledger says, and what the chain says (USDC, or null where it is not an amount). */
  ledger: string | null;
  chain: string | null;
  txHash: string | null;
  /** In words, for people (the log line, the charge's review reason). */
  message: string;
}

/**
 * The clones whose balance differs from the ledger's (a balance the token would not tell is skipped).
 * The message names no block: the same finding on the next run is the same review reason.
 */
export function balanceDifferences(
  chainId: number,
  targets: readonly Pick<ReconcileTarget, "chargeId" | "address" | "expected">[],
  balances: readonly (bigint | null)[],
): Difference[] {
  return targets.flatMap((t, i) => {
    const actual = balances[i];
    if (actual === null || actual === undefined || actual === t.expected) return [];
    const message =
      `chain ${chainId}: ${t.address} holds ${formatAmount(actual)} USDC, the ledger says ${formatAmount(t.expected)} ` +
      `(${actual > t.expected ? "money the ledger does not know" : "money the ledger counts that is not there"})`;
    return [
      {
        chainId,
        chargeId: t.chargeId,
        kind: "balance" as const,
        address: t.address,
        ledger: formatAmount(t.expected),
        chain: formatAmount(actual),
        txHash: null,
        message,
      },
    ];
  });
}

/** A difference for a confirmed transfer whose transaction the chain no longer has. */
export function missingTransfer(chainId: number, t: RecentTransfer): Difference {
  return {
    chainId,
    chargeId: t.chargeId,
    kind: "transfer_missing",
    address: null,
    ledger: null,
    chain: null,
    txHash: t.txHash,
    message: `chain ${chainId}: the confirmed transfer in ${t.txHash} (block ${t.blockNumber}) is no longer on chain`,
  };
}

/** Another token, or the native coin, found at a charge's address. */
export interface StrayAsset {
  chargeId: string;
  token: string;
  amount: bigint;
}

/**
 * Records what a reconciliation of `chainId` found: each charge of a difference needs review (one
 * `charge.needs_review` per new finding), and the charges checked show the stray assets found at
 * their address on this chain (and no longer those gone). Returns the charges newly flagged.
 */
export async function recordReconciliation(
  prisma: Prisma,
  chainId: number,
  checked: readonly string[],
  differences: readonly Difference[],
  strays: readonly StrayAsset[],
  settings: ChangeSettings,
  now = new Date(),
): Promise<string[]> {
  const reasons = new Map<string, string>();
  for (const d of differences) reasons.set(d.chargeId, reasons.has(d.chargeId) ? `${reasons.get(d.chargeId)}; ${d.message}` : d.message);
  const flagged = await flagChargesForReview(prisma, reasons, settings, now);
  const found = new Map<string, StoredStrayAsset[]>();
  for (const s of strays) found.set(s.chargeId, [...(found.get(s.chargeId) ?? []), { chainId, token: s.token, amount: s.amount.toString() }]);
  // Only charges whose list changes are written: most have none, before and after.
  const ids = [...new Set([...checked])];
  const current = await prisma.charge.findMany({ where: { id: { in: ids }, NOT: { strayAssets: { equals: [] } } }, select: { id: true, strayAssets: true } });
  const before = new Map(current.map((c) => [c.id, storedStrayAssets(c.strayAssets)]));
  for (const id of new Set([...before.keys(), ...found.keys()])) {
    const others = (before.get(id) ?? []).filter((a) => a.chainId !== chainId);
    const next = [...others, ...(found.get(id) ?? [])];
    if (JSON.stringify(next) === JSON.stringify(before.get(id) ?? [])) continue;
    await prisma.charge.update({ where: { id }, data: { strayAssets: next } });
  }
  await prisma.clone.updateMany({ where: { chainId, chargeId: { in: ids } }, data: { balanceCheckedAt: now } });
  return flagged.map((c) => c.id);
}

/** The clones of `chainId` picked and never compared with the chain yet: money may have reached them before the pick. */
export async function uncheckedClones(prisma: Prisma, chainId: number): Promise<{ chargeId: string; address: string; createdAt: Date }[]> {
  return prisma.$queryRaw`
    SELECT k.charge_id AS "chargeId", k.address, c.created_at AS "createdAt" FROM clones k JOIN charges c ON c.id = k.charge_id
    WHERE k.chain_id = ${chainId} AND k.balance_checked_at IS NULL ORDER BY k.created_at LIMIT 100`;
}

/**
 * Money of a charge the database does not know: a payout through our factory out of an address no
 * charge has, to a merchant's settlement wallet. After a restore these are the charges made after
 * the backup (they answer 404), paid and paid out while the database was lost.
 */
export interface UnknownDeposit {
  chainId: number;
  address: string;
  merchantId: string;
  /** Base units paid out of it to the merchant's wallet. */
  amount: bigint;
  txHashes: string[];
}

/** The settlement wallets (lower-case) of `livemode` merchants, now and at any charge's creation, each with its merchant. */
export async function settlementWallets(prisma: Prisma, livemode: boolean): Promise<Map<string, string>> {
  const rows = await prisma.$queryRaw<{ wallet: string; merchantId: string }[]>`
    SELECT DISTINCT lower(w.wallet) AS wallet, w.merchant_id AS "merchantId" FROM (
      SELECT id AS merchant_id, CASE WHEN ${livemode} THEN live_wallet ELSE test_wallet END AS wallet FROM merchants
      UNION SELECT merchant_id, settlement_wallet FROM charges WHERE livemode = ${livemode}) w
    WHERE w.wallet IS NOT NULL`;
  return new Map(rows.map((r) => [r.wallet, r.merchantId]));
}

/** Of `addresses` (lower-case), those that are no charge's address on any chain. */
export async function unknownAddresses(prisma: Prisma, addresses: readonly string[]): Promise<Set<string>> {
  const known = await prisma.$queryRaw<{ address: string }[]>`
    SELECT lower(address) AS address FROM clones WHERE lower(address) = ANY(${[...addresses]})
    UNION SELECT lower(deposit_address) FROM charges WHERE lower(deposit_address) = ANY(${[...addresses]})`;
  const seen = new Set(known.map((k) => k.address));
  return new Set(addresses.filter((a) => !seen.has(a)));
}
