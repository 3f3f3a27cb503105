// Refunds without custody (.docs/refunds.md): money the merchant's settlement wallet sends back to a
// buyer. The service prepares the refund (amount, address, chain), and the indexer completes it when
// the chain shows the transfer; it never holds or sends the money itself.
//
//   AWAITING_ADDRESS ──address given (claim page)──▶ AWAITING_PAYMENT ──transfer confirmed──▶ COMPLETED
//          └──────────────cancel──────────────┴──────────cancel──────────▶ CANCELLED
//
// Invariants:
// - a refund is made on a chain where the charge's confirmed money arrived (the one asked for, or the
//   only one with money left), whatever chain was picked, or none; what a charge's refunds ask for on
//   a chain never exceeds the confirmed money it received there, nor in all: refunds are made under
//   the charge's row lock, counting every refund that is not CANCELLED;
// - a refund's address is one its buyer can spend from (domain/destinations.ts): never a charge's
//   deposit address, our contracts, a token, the zero address or the charge's settlement wallet;
// - a refund is completed only by a USDC transfer of exactly its amount, from the charge's settlement
//   wallet to its address, on its chain, in a block after the chain's head when it was made: the one in
//   the transaction that spent its authorization's nonce, else the oldest waiting refund first; one
//   transfer completes one refund (domain/chain-transfers.ts), and its ledger row is the charge's
//   amountRefunded;
// - a refund with money on its way cannot be cancelled (409 refund_payment_on_its_way): its transfer
//   seen on chain, or an authorization accepted and not yet spent or expired on chain, even one whose
//   relay failed (anyone may still send it);
// - a transfer seen but not yet confirmed is forgotten when a reorg removes its block.
import { timingSafeEqual } from "node:crypto";
import { z } from "zod";
import type { ChainSet } from "../chain/chains.js";
import { knownChain } from "../chain/registry.js";
import type { Prisma } from "../db/client.js";
import type { Authorization, Prisma as P, Refund } from "../generated/prisma/client.js";
import { buyerSender, chargeBuyer, enqueueRefundClaim } from "./buyer-emails.js";
import { refuseDestination } from "./destinations.js";
import { AppError, notFound, unknownReference } from "./errors.js";
import { type NewEvent, recordEvents } from "./events.js";
import { validUntil } from "./authorizations.js";
import { newId, randomBase62 } from "./ids.js";
import { formatAmount, parseAmount } from "./money.js";
import { REFUND_STATUSES, type RefundClaim, type RefundFilters, type RefundListQuery, type RefundRequest } from "./refund-requests.js";
import { keysetPage, type Page, type PageEnd } from "./paging.js";
import { inScope, type Scope } from "./scope.js";

export type { Refund };

/** A refund with its latest authorization (what its resource shows). */
export type RefundRow = Refund & { authorizations?: Pick<Authorization, "status" | "error" | "endedAt" | "endReason" | "validBefore">[] };

/** Reads a refund with what `refundResource` shows of its authorizations. */
export const REFUND_INCLUDE = { authorizations: { orderBy: { createdAt: "desc" as const }, take: 1 } };

// Defined with the requests that filter by them; the GraphQL door finds them here with the rest of the refund.
export { REFUND_STATUSES };

/** Where the claim page lives: `{paymentBaseUrl}/refunds/<id>?token=…`. */
export interface RefundSettings {
  paymentBaseUrl: string;
}

/** The public JSON form of a refund; also its events' data. */
export const RefundResource = z.object({
  id: z.string(),
  object: z.literal("refund"),
  livemode: z.boolean().describe("True in live mode, false in test mode."),
  chargeId: z.string(),
  amount: z.string().describe('USDC, e.g. "5.00".'),
  reason: z.string().nullable().describe("Your reason, if given."),
  status: z.enum(REFUND_STATUSES).describe("Where the refund is."),
  address: z.string().nullable().describe("Where the money goes; null until the buyer gives one at claimUrl."),
  fromAddress: z.string().describe("The settlement wallet that must send it."),
  chainId: z.number().int().describe("The chain it is paid on: one where the charge's money arrived."),
  txHash: z.string().nullable().describe("The transfer that pays it, once seen on chain; the refund completes when it is confirmed."),
  claimUrl: z.string().nullable().describe("The page where the buyer gives an address (a capability: share it with the buyer only)."),
  authorization: z
    .object({
      status: z.enum(["relaying", "sent", "mined", "failed"]).describe("Our relay of it: waiting, sent, mined, or failed (see error)."),
      error: z.string().nullable(),
      onItsWay: z
        .boolean()
        .describe(
          "Money on its way: until the chain spends its nonce or validBefore passes, it may still pay (anyone may send it). Meanwhile the refund cannot be cancelled or given another.",
        ),
      validBefore: z.string().describe("When it stops being valid (ISO 8601)."),
    })
    .nullable()
    .describe("The latest EIP-3009 authorization given for it, if any."),
  createdAt: z.string().describe("When it was created."),
  completedAt: z.string().nullable().describe("When the transfer was confirmed."),
  cancelledAt: z.string().nullable().describe("When you cancelled it."),
});
export type RefundResource = z.infer<typeof RefundResource>;

/** Shapes a stored refund as the API shows it. */
export function refundResource(r: RefundRow, settings: RefundSettings): RefundResource {
  const a = r.authorizations?.[0];
  return {
    id: r.id,
    object: "refund",
    livemode: r.livemode,
    chargeId: r.chargeId,
    amount: formatAmount(r.amount),
    reason: r.reason,
    status: r.status,
    address: r.address,
    fromAddress: r.fromAddress,
    chainId: r.chainId,
    txHash: r.status === "CANCELLED" ? null : r.txHash,
    claimUrl: r.status === "AWAITING_ADDRESS" && r.claimToken ? claimUrl(r, settings) : null,
    authorization: a
      ? { status: a.status.toLowerCase() as "relaying" | "sent" | "mined" | "failed", error: a.error, onItsWay: a.endedAt === null, validBefore: validUntil(a) }
      : null,
    createdAt: r.createdAt.toISOString(),
    completedAt: r.completedAt?.toISOString() ?? null,
    cancelledAt: r.cancelledAt?.toISOString() ?? null,
  };
}

function claimUrl(r: Pick<Refund, "id" | "claimToken">, settings: RefundSettings): string {
  return `${settings.paymentBaseUrl}/refunds/${r.id}?token=${r.claimToken}`;
}

/** A charge's confirmed money on one chain: received there, and asked there by its refunds that are not CANCELLED (base units). */
export interface ChainMoney {
  chainId: number;
  received: bigint;
  asked: bigint;
}

/** Per chain where a charge received confirmed money or has refunds: what it received there and what its refunds ask. */
export async function refundableByChain(db: Prisma | P.TransactionClient, chargeId: string): Promise<ChainMoney[]> {
  // A reversal carries the chain of the row it undoes: a reversed payment counts with it.
  const rows = await db.$queryRaw<{ chainId: number; received: string; asked: string }[]>`
    WITH received AS (
      SELECT b.chain_id, sum(b.amount) AS amount FROM balance_transactions b LEFT JOIN balance_transactions o ON o.id = b.reverses_id
      WHERE b.charge_id = ${chargeId} AND coalesce(o.type, b.type) = 'payment' GROUP BY b.chain_id
    ), asked AS (
      SELECT chain_id, sum(amount) AS amount FROM refunds WHERE charge_id = ${chargeId} AND status <> 'CANCELLED' GROUP BY chain_id
    )
    SELECT coalesce(r.chain_id, a.chain_id) AS "chainId", coalesce(r.amount, 0)::text AS received, coalesce(a.amount, 0)::text AS asked
    FROM received r FULL JOIN asked a ON a.chain_id = r.chain_id ORDER BY 1`;
  return rows.map((r) => ({ chainId: r.chainId, received: BigInt(r.received), asked: BigInt(r.asked) }));
}

/** What is left to refund of a chain's money: never below zero (refunds made before they followed the money may ask more of the picked chain than arrived there). */
const leftToRefund = (m: ChainMoney): bigint => (m.received > m.asked ? m.received - m.asked : 0n);

/** What is left to refund of a charge's money in all: what it received less what its refunds ask, never below zero. */
export function refundableInAll(money: readonly ChainMoney[]): bigint {
  const total = money.reduce((sum, m) => sum + m.received - m.asked, 0n);
  return total > 0n ? total : 0n;
}

/** The most one refund on `m`'s chain may ask (createRefund's limit): what is left there, never more than what is left in all. */
export function refundLimit(m: ChainMoney, money: readonly ChainMoney[]): bigint {
  const all = refundableInAll(money);
  return leftToRefund(m) < all ? leftToRefund(m) : all;
}

/** A chain a charge's confirmed money arrived on, with the most one refund there may ask (`limit`). */
export interface RefundableMoney extends ChainMoney {
  limit: bigint;
}

/**
 * Per chain where a charge's confirmed money arrived, what is left to refund there (Charge.refundable):
 * a chain where nothing arrived is left out, since no refund may be made on it, even one its refunds ask of.
 */
export async function refundableMoney(db: Prisma | P.TransactionClient, chargeId: string): Promise<RefundableMoney[]> {
  const money = await refundableByChain(db, chargeId);
  return money.filter((m) => m.received > 0n).map((m) => ({ ...m, limit: refundLimit(m, money) }));
}

/** What the refunds of a charge may still take back in all (Charge.amountRefundable), by the rule createRefund enforces. */
export async function amountRefundable(db: Prisma | P.TransactionClient, chargeId: string): Promise<bigint> {
  return refundableInAll(await refundableByChain(db, chargeId));
}

const chainName = (chainId: number) => `${knownChain(chainId)?.name ?? "chain"} (${chainId})`;
const listed = (money: readonly ChainMoney[]) => money.map((m) => `${chainName(m.chainId)} ${formatAmount(leftToRefund(m))} USDC left`).join(", ");

/**
 * The chain a refund of `chargeId` is made on, and what is left to refund there (never more than
 * what is left in all): `chainId` when the charge's money arrived there, else the only chain with
 * money left. 409 `charge_not_refundable` with nothing left; 400 `parameter_invalid` (`chainId`) for
 * a chain the money did not arrive on, or none named while money is left on several.
 */
function refundChain(chargeId: string, money: readonly ChainMoney[], chainId: number | undefined): { chainId: number; left: bigint } {
  const paid = money.filter((m) => m.received > 0n);
  if (paid.length === 0) throw new AppError("charge_not_refundable", `Charge ${chargeId} has no confirmed money to refund.`, "id");
  if (refundableInAll(money) === 0n) {
    throw new AppError("charge_not_refundable", `Charge ${chargeId} has nothing left to refund: its refunds already ask for all it received.`, "id");
  }
  const bounded = (m: ChainMoney) => ({ chainId: m.chainId, left: refundLimit(m, money) });
  if (chainId !== undefined) {
    const on = paid.find((m) => m.chainId === chainId);
    if (!on) {
      throw new AppError(
        "parameter_invalid",
        `Invalid chainId: charge ${chargeId} received no confirmed money on chain ${chainId}; it arrived on ${listed(paid)}.`,
        "chainId",
      );
    }
    if (leftToRefund(on) <= 0n) {
      throw new AppError("charge_not_refundable", `Charge ${chargeId} has nothing left to refund on ${chainName(chainId)}: ${listed(paid)}.`, "chainId");
    }
    return bounded(on);
  }
  const withLeft = paid.filter((m) => leftToRefund(m) > 0n);
  if (withLeft.length > 1) {
    throw new AppError(
      "parameter_invalid",
      `Missing chainId: charge ${chargeId}'s money arrived on several chains; name the one to refund on: ${listed(withLeft)}.`,
      "chainId",
    );
  }
  // Money is left in all, so on some chain.
  return bounded(withLeft[0]!);
}

/**
 * Creates a refund of a charge with confirmed money, on a chain where it arrived (`chainId`, or the
 * only one with money left): by default all that is still refundable there. 409
 * `charge_not_refundable` without confirmed money left; 400 `refund_exceeds_refundable` for more than
 * is left on that chain; 400 `parameter_invalid` for a chain without the charge's money, or an
 * address the money could not reach the buyer at (domain/destinations.ts). Without an address, the
 * buyer gives one at `claimUrl`.
 */
export async function createRefund(
  prisma: Prisma,
  scope: Scope,
  chargeId: string,
  data: RefundRequest,
  settings: RefundSettings,
  chains: ChainSet,
  now = new Date(),
): Promise<RefundRow> {
  const asked = data.amount === undefined ? null : parseAmount(data.amount);
  if (data.amount !== undefined && (asked === null || asked <= 0n)) {
    throw new AppError("parameter_invalid", 'Invalid amount: must be a positive decimal string with at most 6 decimals, such as "5.00"', "amount");
  }
  return prisma.$transaction(async (tx) => {
    // The charge's row lock orders concurrent refunds: their sum never passes what was received.
    const [charge] = await tx.$queryRaw<{ id: string; settlementWallet: string }[]>`
      SELECT id, settlement_wallet AS "settlementWallet"
      FROM charges WHERE id = ${chargeId} AND merchant_id = ${scope.merchantId} AND livemode = ${scope.livemode} AND kind = 'charge' FOR UPDATE`;
    if (!charge) throw notFound("charge", chargeId);
    const { chainId, left } = refundChain(chargeId, await refundableByChain(tx, chargeId), data.chainId);
    const amount = asked ?? left;
    if (amount > left) {
      throw new AppError(
        "refund_exceeds_refundable",
        `Invalid amount: at most ${formatAmount(left)} USDC of this charge is left to refund on ${chainName(chainId)}.`,
        "amount",
      );
    }
    if (data.address) {
      await refuseDestination(tx, data.address, {
        kind: "refund address",
        param: "address",
        chains,
        refund: { chargeId, settlementWallet: charge.settlementWallet },
      });
    }
    const cursor = await tx.chainCursor.findUnique({ where: { chainId }, select: { blockNumber: true, headBlock: true } });
    const refund = await tx.refund.create({
      data: {
        id: newId("ref"),
        ...inScope(scope),
        chargeId,
        amount: amount.toString(),
        reason: data.reason ?? null,
        status: data.address ? "AWAITING_PAYMENT" : "AWAITING_ADDRESS",
        chainId,
        fromAddress: charge.settlementWallet,
        address: data.address ?? null,
        claimToken: data.address ? null : randomBase62(32),
        // Transfers the indexer already passed, or that the chain had before now, are not this refund's.
        afterBlock: cursor?.headBlock ?? cursor?.blockNumber ?? 0n,
        createdAt: now,
        updatedAt: now,
      },
    });
    await recordEvents(tx, [refundEvent(refund, "refund.created", settings)]);
    if (refund.status === "AWAITING_ADDRESS") await emailClaim(tx, refund, settings, "automatic");
    return refund;
  });
}

/**
 * Writes the claim link's email to the charge's buyer: `automatic` (at creation) only when the merchant
 * turned refund emails on and the buyer has an address; `asked` (POST /v1/refunds/:id/send) always, or
 * 409 `refund_not_sendable` without an address to write to.
 */
async function emailClaim(tx: P.TransactionClient, refund: Refund, settings: RefundSettings, why: "automatic" | "asked"): Promise<void> {
  const sender = await buyerSender(tx, refund.merchantId);
  if (why === "automatic" && !sender.emailRefunds) return;
  const buyer = await chargeBuyer(tx, refund.chargeId);
  if (buyer.email === null) {
    if (why === "automatic") return;
    throw new AppError("refund_not_sendable", `Refund ${refund.id} cannot be sent: its charge has no customer email to send the claim link to.`, "id");
  }
  await enqueueRefundClaim(tx, sender, refund, { email: buyer.email, orderId: buyer.orderId }, claimUrl(refund, settings));
}

/**
 * Emails the claim link of a refund waiting for its address to its charge's buyer (the customer's
 * email, else the one the buyer gave); 409 `refund_not_sendable` for any other refund or a charge
 * without an email.
 */
export async function sendRefundClaim(prisma: Prisma, scope: Scope, id: string, settings: RefundSettings): Promise<RefundRow> {
  await prisma.$transaction(async (tx) => {
    const [row] = await tx.$queryRaw<{ id: string }[]>`
      SELECT id FROM refunds WHERE id = ${id} AND merchant_id = ${scope.merchantId} AND livemode = ${scope.livemode} FOR UPDATE`;
    if (!row) throw notFound("refund", id);
    const refund = await tx.refund.findUniqueOrThrow({ where: { id } });
    if (refund.status !== "AWAITING_ADDRESS" || !refund.claimToken) {
      throw new AppError("refund_not_sendable", `Refund ${id} is ${refund.status}: only a refund waiting for its address has a claim link to send.`, "id");
    }
    await emailClaim(tx, refund, settings, "asked");
  });
  return getRefund(prisma, scope, id);
}

/** A refund of `scope`, or 404; `query` reads the relations a GraphQL selection asks for with it. */
export async function getRefund(prisma: Prisma, scope: Scope, id: string, query: { include?: P.RefundInclude } = {}): Promise<RefundRow> {
  const refund = await prisma.refund.findFirst({ where: { id, ...inScope(scope) }, include: { ...query.include, ...REFUND_INCLUDE } });
  if (!refund) throw notFound("refund", id);
  return refund;
}

/** The where-clause of a refund list: this merchant and mode, optionally one charge or status. */
function refundFilter(scope: Scope, filters: RefundFilters): P.RefundWhereInput {
  return { ...inScope(scope), ...(filters.chargeId && { chargeId: filters.chargeId }), ...(filters.status && { status: filters.status }) };
}

/** How many refunds match the list's filters (GraphQL's `totalCount`). */
export function countRefunds(prisma: Prisma, scope: Scope, filters: RefundFilters): Promise<number> {
  return prisma.refund.count({ where: refundFilter(scope, filters) });
}

/** One page of refunds, newest first, optionally of one charge or status. */
export async function listRefunds(prisma: Prisma, scope: Scope, query: RefundListQuery, end: PageEnd = "newest"): Promise<Page<RefundRow>> {
  const { chargeId, status, ...page } = query;
  const where = refundFilter(scope, { chargeId, status });
  if (chargeId && !(await prisma.charge.findFirst({ where: { id: chargeId, ...inScope(scope) }, select: { id: true } }))) {
    throw unknownReference("charge", chargeId, "chargeId");
  }
  return keysetPage(
    "refund",
    page,
    (id) => prisma.refund.findFirst({ where: { id, ...inScope(scope) }, select: { id: true, createdAt: true } }),
    (q) => prisma.refund.findMany({ where: { AND: [where, q.where] }, orderBy: q.orderBy, take: q.take, include: REFUND_INCLUDE }),
    end,
  );
}

/**
 * Cancels a waiting refund (a cancelled one is returned as is). 409 `refund_not_cancellable` once
 * COMPLETED; 409 `refund_payment_on_its_way` while its transfer is on chain waiting for confirmations,
 * or an authorization given for it may still be spent: cancelling then would free the amount for a
 * second refund while the first one still pays.
 */
export async function cancelRefund(prisma: Prisma, scope: Scope, id: string, settings: RefundSettings, now = new Date()): Promise<RefundRow> {
  return prisma.$transaction(async (tx) => {
    // The row lock orders this against an authorization being accepted for it.
    const [locked] = await tx.$queryRaw<{ id: string }[]>`
      SELECT id FROM refunds WHERE id = ${id} AND merchant_id = ${scope.merchantId} AND livemode = ${scope.livemode} FOR UPDATE`;
    if (!locked) throw notFound("refund", id);
    const refund = await tx.refund.findUniqueOrThrow({ where: { id }, include: REFUND_INCLUDE });
    if (refund.status === "CANCELLED") return refund;
    if (refund.status === "COMPLETED") throw new AppError("refund_not_cancellable", `Refund ${id} cannot be cancelled: the money has been paid back.`, "id");
    const pending = await tx.authorization.findFirst({ where: { refundId: id, endedAt: null } });
    if (refund.txHash !== null || pending) {
      const why = refund.txHash
        ? `its transfer ${refund.txHash} is on chain, waiting for confirmations`
        : `an authorization given for it can still be spent until ${validUntil(pending!)} (or until the chain spends it)`;
      throw new AppError("refund_payment_on_its_way", `Refund ${id} cannot be cancelled: ${why}; try again once it has settled.`, "id");
    }
    // The claim link stays: it now tells the buyer the refund was cancelled.
    const cancelled = await tx.refund.update({ where: { id }, data: { status: "CANCELLED", cancelledAt: now }, include: REFUND_INCLUDE });
    await recordEvents(tx, [refundEvent(cancelled, "refund.cancelled", settings)]);
    return cancelled;
  });
}

/**
 * The refund a claim page shows, only with its token: the form while it waits for an address, its
 * status after. 404 for anything else, a wrong token the same as no refund (the link is the buyer's
 * only credential).
 */
export async function getClaimableRefund(prisma: Prisma, id: string, token: string): Promise<RefundRow> {
  const refund = await prisma.refund.findUnique({ where: { id }, include: REFUND_INCLUDE });
  const expected = Buffer.from(refund?.claimToken ?? "");
  const given = Buffer.from(token);
  if (!refund || expected.length === 0 || expected.length !== given.length || !timingSafeEqual(expected, given)) throw notFound("refund claim", id);
  return refund;
}

/** What a claim page shows: the refund (with its latest authorization) and who pays it. */
export interface ClaimView {
  refund: RefundRow;
  merchantName: string;
}

/** The claim page's view of a refund, only with its token (see getClaimableRefund). */
export async function claimView(prisma: Prisma, id: string, token: string): Promise<ClaimView> {
  const refund = await getClaimableRefund(prisma, id, token);
  return { refund, merchantName: await merchantName(prisma, refund.merchantId) };
}

async function merchantName(prisma: Prisma, merchantId: string): Promise<string> {
  return (await prisma.merchant.findUniqueOrThrow({ where: { id: merchantId }, select: { name: true } })).name;
}

/**
 * The buyer gives the address to refund to, typed twice: a mismatch, a bad checksum or an address the
 * money could not reach them at (domain/destinations.ts: the address they paid to, the shop's wallet,
 * a token contract…) is 400 and changes nothing. The address is given once: afterwards the link shows
 * the refund's status, and a second post (a double click, a reload) changes nothing and returns the
 * refund as it is.
 */
export async function claimRefund(
  prisma: Prisma,
  id: string,
  token: string,
  data: RefundClaim,
  settings: RefundSettings,
  chains: ChainSet,
  now = new Date(),
): Promise<ClaimView> {
  if (data.confirmAddress.trim().toLowerCase() !== data.address.toLowerCase()) {
    throw new AppError("parameter_invalid", "The two addresses differ: type the same address twice.", "confirmAddress");
  }
  const refund = await getClaimableRefund(prisma, id, token);
  if (refund.status === "AWAITING_ADDRESS") {
    const charge = { chargeId: refund.chargeId, settlementWallet: refund.fromAddress };
    await refuseDestination(prisma, data.address, { kind: "refund address", param: "address", chains, refund: charge });
  }
  await prisma.$transaction(async (tx) => {
    const [claimed] = await tx.refund.updateManyAndReturn({
      where: { id, claimToken: token, status: "AWAITING_ADDRESS" },
      data: { address: data.address, status: "AWAITING_PAYMENT", updatedAt: now },
    });
    if (claimed) await recordEvents(tx, [refundEvent(claimed, "refund.updated", settings)]);
  });
  return claimView(prisma, id, token);
}

/**
 * Inside the transaction that confirmed their transfers: the refunds `refundIds` are COMPLETED (the
 * ledger already has their rows). Returns their refund.completed events.
 * The authorization whose nonce the completing transfer spent ends here too, `used`, rather than at the
 * runner's next endAuthorizations: a completed refund (and its event) never shows money still on its way.
 */
export async function refundCompletedEvents(tx: P.TransactionClient, refundIds: readonly string[], settings: RefundSettings, now: Date): Promise<NewEvent[]> {
  const events: NewEvent[] = [];
  for (const id of refundIds) {
    const [done] = await tx.refund.updateManyAndReturn({ where: { id, status: "AWAITING_PAYMENT" }, data: { status: "COMPLETED", completedAt: now } });
    if (!done) continue;
    if (done.txHash !== null)
      await tx.authorization.updateMany({
        where: { refundId: id, endedAt: null, usedTxHash: done.txHash },
        data: { endedAt: now, endReason: "used", updatedAt: now },
      });
    events.push(
      refundEvent(
        { ...done, authorizations: await tx.authorization.findMany({ where: { refundId: id }, orderBy: { createdAt: "desc" }, take: 1 }) },
        "refund.completed",
        settings,
      ),
    );
  }
  return events;
}

function refundEvent(r: RefundRow, type: NewEvent["type"], settings: RefundSettings): NewEvent {
  return { scope: { merchantId: r.merchantId, livemode: r.livemode }, type, data: refundResource(r, settings) };
}
