// Payouts, the database side: which clones hold confirmed money to pay out, claiming them for one of
// our payout transactions, and what happens when a payout cannot go through. The chain side
// (simulating, signing, sending, tracking) is jobs/payouts.ts; the money itself is only ever counted
// from the chain's transfers out of the clones (domain/chain-transfers.ts), whoever sent the payout.
//
// A clone (one charge's address on one chain) is due when its charge is past PENDING (RECEIVED, an
// underpaid EXPIRED or CANCELLED, or late money on a final charge), the ledger says it holds at least
// the payout minimum (less waits for more money: paying out dust costs more gas than it is worth), no
// payout of ours is in flight for it, none of anyone's is waiting for confirmations, and its payout
// has not been stopped.
//
// Invariants: a clone is in at most one payout of ours at a time (`flushId`); a payout that does not
// pay a clone counts against it only when nothing else paid it (a race with another payer is no
// failure) and the clone was alone in it or skipped by the contract on its own: a batch that reverts
// as a whole counts against none of its clones, which are tried again at once in batches of half its
// size (`flushBatchMax`), until a clone that fails alone is found; after MAX_FLUSH_FAILURES its payout
// stops (`flush_failing`) instead of paying gas forever; `charge.payout_blocked` is recorded once each time a charge's payout becomes blocked; a
// charge shows the first blocked reason among its clones.
import type { Logger } from "pino";
import type { Prisma } from "../db/client.js";
import type { Prisma as P } from "../generated/prisma/client.js";
import type { ChangeSettings } from "./charges/settings.js";
import { type Charge, CHARGE_COLUMNS } from "./charges/read.js";
import { chargeResource } from "./charges/resource.js";
import { notFound } from "./errors.js";
import { recordEvents } from "./events.js";
import { toUnits } from "./money.js";
import { alertTeam } from "./team-emails.js";

/** Why money in a clone cannot be paid out now, as a charge shows it. */
export const PAYOUT_BLOCK_REASONS = [
  /** The token's issuer blacklisted the merchant's settlement wallet: it can receive nothing. */
  "wallet_blacklisted",
  /** The clone itself is blacklisted: it can send nothing. */
  "clone_blacklisted",
  /** The fee recipient is blacklisted (version 1 clones only: version 2 pays the merchant regardless). */
  "fee_recipient_blacklisted",
  /** The token is paused: no transfer moves until it is unpaused. */
  "token_paused",
  /** The token refuses the payout for another reason (checked without sending anything). */
  "flush_reverting",
  /** Our payouts kept failing on chain; payouts of this clone stopped until an operator retries. */
  "flush_failing",
  /** A version 1 clone that was never deployed, on a chain without CHAIN_<id>_FACTORY_V1. */
  "contract_unavailable",
] as const;

export type PayoutBlockReason = (typeof PAYOUT_BLOCK_REASONS)[number];

/** Payouts of ours in a row that may fail to pay a clone before its payout stops and alerts. */
export const MAX_FLUSH_FAILURES = 5;
/** A failed payout is tried again after this, doubled with each failure in a row. */
const FAILURE_RETRY_MS = 60_000;

/** A clone that holds confirmed money to pay out. */
export interface DueClone {
  chargeId: string;
  address: string;
  /** 1 or 2: which contracts pay it out. */
  version: number;
  /** What the ledger says it holds (base units): what the payout moves. */
  held: bigint;
  /** Whether a payout already moved money out of it (so it has code). */
  deployed: boolean;
  /** Where the clone pays the merchant, and the fee it takes (fixed in its address). */
  wallet: string;
  feeBps: number;
  payoutBlockedReason: string | null;
  /** The most clones its payout may share a transaction with (a batch with it reverted); null: any. */
  batchMax: number | null;
}

/** How long an x402 address holding less than the payout minimum waits for more before it is paid out anyway. */
const X402_QUIET_MS = 24 * 60 * 60 * 1000;

/**
 * Up to `limit` clones of `chainId` due for a payout, oldest charge first: those holding the chain's
 * `payoutMinAmount` or more and, below it, any holding money of a RECEIVED charge whose money left in
 * all its clones is `dust` or more. That is exactly when the charge cannot complete (charges/lifecycle's
 * `complete` guard), so a minimum above a charge's amount, or a stranger's crumbs sent to its address
 * on several chains, never strand a sale. An x402 address takes many small payments: it is paid out
 * once it holds the minimum, or, below it, once a day has passed without a payment (nothing strands).
 */
export async function dueClones(
  prisma: Prisma,
  chainId: number,
  limit: number,
  { payoutMinAmount, dust }: { payoutMinAmount: bigint; dust: bigint },
  now = new Date(),
): Promise<DueClone[]> {
  // The predicate matches the partial index over clones holding money.
  const rows = await prisma.$queryRaw<(Omit<DueClone, "held"> & { held: P.Decimal })[]>`
    SELECT k.charge_id AS "chargeId", k.address, k.version, k.held, k.deployed_at IS NOT NULL AS deployed,
      c.settlement_wallet AS wallet, c.fee_bps AS "feeBps", k.payout_blocked_reason AS "payoutBlockedReason",
      k.flush_batch_max AS "batchMax"
    FROM clones k JOIN charges c ON c.id = k.charge_id
    WHERE k.chain_id = ${chainId} AND k.held > 0 AND c.status <> 'PENDING'
      AND (k.held >= ${payoutMinAmount}
        OR (c.kind = 'charge' AND c.status = 'RECEIVED' AND COALESCE(c.amount_received, 0) - c.settled_amount >= ${dust})
        OR (c.kind = 'x402' AND k.held >= ${dust} AND k.updated_at <= ${new Date(now.getTime() - X402_QUIET_MS)}))
      AND k.flush_id IS NULL AND (k.flush_retry_at IS NULL OR k.flush_retry_at <= ${now}) AND k.flush_failures < ${MAX_FLUSH_FAILURES}
      AND NOT EXISTS (SELECT 1 FROM chain_transfers t WHERE t.charge_id = k.charge_id AND t.chain_id = k.chain_id AND t.kind IN ('PAYOUT', 'FEE') AND t.status = 'SEEN')
    ORDER BY c.created_at LIMIT ${limit}`;
  return rows.map((r) => ({ ...r, held: toUnits(r.held) }));
}

/** Claims the clones of `chargeIds` on `chainId` for our payout `txId` (inside its recording); false if one is already in a payout. */
export async function claimForFlush(tx: P.TransactionClient, txId: string, chainId: number, chargeIds: string[]): Promise<boolean> {
  const claimed = await tx.clone.updateMany({ where: { chainId, chargeId: { in: chargeIds }, flushId: null }, data: { flushId: txId } });
  return claimed.count === chargeIds.length;
}

/** How one of our payout transactions ended. */
export type FlushOutcome =
  /** Mined with success and confirmed: these clones (addresses) sent money in it. */
  | { kind: "confirmed"; paid: ReadonlySet<string> }
  /** Mined and reverted as a whole: it paid no clone. */
  | { kind: "reverted" }
  /** Never mined (its nonce went to another transaction): nothing happened on chain. */
  | { kind: "dropped" };

interface ClaimedClone {
  chargeId: string;
  chainId: number;
  address: string;
  flushFailures: number;
  payoutBlockedAt: Date | null;
  /** Someone else's payout of it is waiting for confirmations, or the ledger says it is empty already. */
  settlingElsewhere: boolean;
}

/**
 * Releases the clones of our payout `txId` after `outcome`. A batch that reverted splits: its clones
 * are due again at once, each in batches of at most half its size, and none counts a failure. A clone
 * it did not pay otherwise (alone, or skipped by the contract) counts a failure, unless money already
 * left it by someone else's payout; at MAX_FLUSH_FAILURES its payout stops (`flush_failing`, logged at
 * error, `charge.payout_blocked`). Returns the charges whose payout stopped.
 */
export async function releaseFlush(
  prisma: Prisma,
  settings: ChangeSettings,
  txId: string,
  outcome: FlushOutcome,
  logger: Logger,
  now = new Date(),
): Promise<Charge[]> {
  const changed = await prisma.$transaction(async (tx) => {
    const clones = await tx.$queryRaw<ClaimedClone[]>`
      SELECT k.charge_id AS "chargeId", k.chain_id AS "chainId", k.address, k.flush_failures AS "flushFailures", k.payout_blocked_at AS "payoutBlockedAt",
        (k.held <= 0 OR EXISTS (SELECT 1 FROM chain_transfers t WHERE t.charge_id = k.charge_id AND t.chain_id = k.chain_id
          AND t.kind IN ('PAYOUT', 'FEE') AND t.status = 'SEEN')) AS "settlingElsewhere"
      FROM clones k WHERE k.flush_id = ${txId} ORDER BY k.charge_id FOR UPDATE`;
    const stopped: string[] = [];
    // One revert for a whole batch says nothing about which clone caused it: halve it and look again.
    const split = outcome.kind === "reverted" && clones.length > 1 ? Math.ceil(clones.length / 2) : null;
    if (split !== null)
      logger.warn({ tx: txId, clones: clones.length, next: split }, "payout batch reverted; its clones are tried again at once in smaller batches");
    for (const clone of clones) {
      const where = { chargeId_chainId: { chargeId: clone.chargeId, chainId: clone.chainId } };
      const paid = outcome.kind === "confirmed" && outcome.paid.has(clone.address.toLowerCase());
      if (paid || clone.settlingElsewhere) {
        // Its money left: whatever reverted a batch with it, this clone was not the one.
        await tx.clone.update({ where, data: { flushId: null, flushBatchMax: null } });
        continue;
      }
      if (outcome.kind === "dropped") {
        await tx.clone.update({ where, data: { flushId: null } });
        continue;
      }
      if (split !== null) {
        await tx.clone.update({ where, data: { flushId: null, flushRetryAt: null, flushBatchMax: split } });
        continue;
      }
      const failures = clone.flushFailures + 1;
      if (failures < MAX_FLUSH_FAILURES) {
        const retryAt = new Date(now.getTime() + FAILURE_RETRY_MS * 2 ** (failures - 1));
        await tx.clone.update({ where, data: { flushId: null, flushFailures: failures, flushRetryAt: retryAt } });
        continue;
      }
      await tx.clone.update({
        where,
        data: {
          flushId: null,
          flushFailures: failures,
          flushRetryAt: null,
          payoutBlockedReason: "flush_failing",
          payoutBlockedAt: clone.payoutBlockedAt ?? now,
        },
      });
      stopped.push(clone.chargeId);
      logger.error(
        { chargeId: clone.chargeId, chainId: clone.chainId, clone: clone.address, failures },
        "payout stopped: our payouts of this clone kept failing; the money is safe in the clone (retry with: stablegate payouts retry <chargeId>)",
      );
    }
    return summarizeBlocks(tx, stopped, settings);
  });
  settings.feed?.changed(changed);
  return changed;
}

/**
 * Marks the payouts of `chargeIds`' clones on `chainId` blocked for `reason` (the token refuses them
 * now, found without sending anything) and looks again at `retryAt`. A charge that was not blocked yet
 * records `charge.payout_blocked`. Returns the charges whose shown reason changed.
 */
export async function blockPayouts(
  prisma: Prisma,
  settings: ChangeSettings,
  chainId: number,
  chargeIds: string[],
  reason: PayoutBlockReason,
  retryAt: Date,
  now = new Date(),
): Promise<Charge[]> {
  if (chargeIds.length === 0) return [];
  const changed = await prisma.$transaction(async (tx) => {
    await tx.$executeRaw`
      UPDATE clones SET flush_retry_at = ${retryAt}, payout_blocked_reason = ${reason}, payout_blocked_at = coalesce(payout_blocked_at, ${now}), updated_at = ${now}
      WHERE chain_id = ${chainId} AND charge_id = ANY(${chargeIds}) AND flush_id IS NULL`;
    return summarizeBlocks(tx, chargeIds, settings);
  });
  settings.feed?.changed(changed);
  return changed;
}

/**
 * Brings `chargeIds`' shown payout block up to date with their clones (the first clone's reason, by
 * chain) under their row locks; records `charge.payout_blocked` for each newly blocked. Returns the
 * charges whose reason changed.
 */
export async function summarizeBlocks(tx: P.TransactionClient, chargeIds: readonly string[], settings: ChangeSettings): Promise<Charge[]> {
  if (chargeIds.length === 0) return [];
  const before = await tx.$queryRaw<{ id: string; reason: string | null; next: string | null; at: Date | null }[]>`
    SELECT c.id, c.payout_blocked_reason AS reason,
      (SELECT k.payout_blocked_reason FROM clones k WHERE k.charge_id = c.id AND k.payout_blocked_reason IS NOT NULL ORDER BY k.chain_id LIMIT 1) AS next,
      (SELECT min(k.payout_blocked_at) FROM clones k WHERE k.charge_id = c.id) AS at
    FROM charges c WHERE c.id = ANY(${[...chargeIds]}) ORDER BY c.id FOR UPDATE OF c`;
  const changed: Charge[] = [];
  for (const b of before.filter((r) => r.reason !== r.next)) {
    const [updated] = await tx.$queryRaw<Charge[]>`
      UPDATE charges SET payout_blocked_reason = ${b.next}, payout_blocked_at = ${b.next === null ? null : b.at}, updated_at = now()
      WHERE id = ${b.id} RETURNING ${CHARGE_COLUMNS}`;
    changed.push(updated!);
  }
  // The team hears of each charge's block once per reason, the charges blocked together in one email (domain/team-emails.ts alertTeam).
  await alertTeam(
    tx,
    changed.flatMap((c) => (c.payoutBlockedReason === null ? [] : [{ charge: c, kind: "payout_blocked" as const, reason: c.payoutBlockedReason }])),
    settings.publicUrl,
  );
  const was = new Map(before.map((b) => [b.id, b.reason]));
  await recordEvents(
    tx,
    changed
      .filter((c) => c.payoutBlockedReason !== null && was.get(c.id) == null)
      .map((c) => ({ scope: c, type: "charge.payout_blocked" as const, data: chargeResource(c, settings) })),
  );
  return changed;
}

/** Puts off the payouts of `chargeIds`' clones on `chainId` until `retryAt` (their money is already leaving by someone else's payout). */
export async function deferPayouts(prisma: Prisma, chainId: number, chargeIds: string[], retryAt: Date): Promise<void> {
  if (chargeIds.length === 0) return;
  await prisma.clone.updateMany({ where: { chainId, chargeId: { in: chargeIds }, flushId: null }, data: { flushRetryAt: retryAt } });
}

/**
 * Records that the clone of `chargeId` on `chainId` has code (a sweep of ours deployed it): its next
 * payout does not try to create it again, which would burn the creation's gas for nothing.
 */
export async function markDeployed(prisma: Prisma, chainId: number, chargeId: string, now: Date): Promise<void> {
  const charge = await prisma.charge.findUniqueOrThrow({ where: { id: chargeId }, select: { depositAddress: true, contractVersion: true } });
  await prisma.clone.upsert({
    where: { chargeId_chainId: { chargeId, chainId } },
    create: { chargeId, chainId, address: charge.depositAddress!, version: charge.contractVersion, deployedAt: now },
    update: {},
  });
  await markClonesDeployed(prisma, chainId, [chargeId], now);
}

/**
 * Records that the clones of `chargeIds` on `chainId` have code (a stranger deployed them; anyone may):
 * their payout entries carry the DEPLOYED flag, so the payout does not create them again, which would
 * burn the creation's whole gas allowance for nothing.
 */
export async function markClonesDeployed(prisma: Prisma, chainId: number, chargeIds: readonly string[], now: Date): Promise<void> {
  if (chargeIds.length === 0) return;
  await prisma.$transaction(async (tx) => {
    await tx.clone.updateMany({ where: { chainId, chargeId: { in: [...chargeIds] }, deployedAt: null }, data: { deployedAt: now } });
    await tx.$executeRaw`
      UPDATE charges c SET deployed_at = k.deployed_at FROM clones k
      WHERE c.id = ANY(${[...chargeIds]}) AND k.charge_id = c.id AND k.chain_id = c.chain_id AND k.chain_id = ${chainId} AND c.deployed_at IS NULL`;
  });
}

/**
 * Forgets the deployment of `chargeIds`' clones on `chainId`, which have no code although recorded
 * deployed (a reorg took the transaction that deployed them): their next payout deploys them again.
 */
export async function forgetDeployments(prisma: Prisma, chainId: number, chargeIds: readonly string[]): Promise<void> {
  if (chargeIds.length === 0) return;
  await prisma.clone.updateMany({ where: { chainId, chargeId: { in: [...chargeIds] } }, data: { deployedAt: null } });
  await prisma.charge.updateMany({ where: { chainId, id: { in: [...chargeIds] } }, data: { deployedAt: null } });
}

/** Lets a stopped (`flush_failing`) or waiting payout be tried at once: the operator's `stablegate payouts retry`. */
export async function retryPayout(prisma: Prisma, settings: ChangeSettings, chargeId: string): Promise<Charge> {
  const charge = await prisma.charge.findUnique({ where: { id: chargeId } });
  if (!charge) throw notFound("charge", chargeId);
  return prisma.$transaction(async (tx) => {
    // A token-side block (blacklist, pause) clears itself once a payout goes through; a stop does not.
    await tx.clone.updateMany({ where: { chargeId }, data: { flushFailures: 0, flushRetryAt: null } });
    await tx.clone.updateMany({ where: { chargeId, payoutBlockedReason: "flush_failing" }, data: { payoutBlockedReason: null, payoutBlockedAt: null } });
    await summarizeBlocks(tx, [chargeId], settings);
    return tx.charge.findUniqueOrThrow({ where: { id: chargeId } });
  });
}

/** Blocked payouts per chain and reason (`flush_failing` ones need an operator): what /metrics reports. */
export async function blockedPayouts(prisma: Prisma): Promise<{ chainId: number; reason: string; charges: number }[]> {
  const rows = await prisma.$queryRaw<{ chainId: number; reason: string; charges: bigint }[]>`
    SELECT chain_id AS "chainId", payout_blocked_reason AS reason, count(*) AS charges FROM clones
    WHERE payout_blocked_reason IS NOT NULL GROUP BY chain_id, payout_blocked_reason ORDER BY 1, 2`;
  return rows.map((r) => ({ ...r, charges: Number(r.charges) }));
}
