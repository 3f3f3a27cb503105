// The buyer's side of a subscription (.docs/subscriptions.md): the checkout, where the payer signs a
// spend permission (and a USDC permit) once, and the manage page, where they follow and cancel it.
// The subscription id is the checkout's capability, the manageToken the manage page's: no API key.
//
// Invariants:
// - the server builds what the payer signs and accepts nothing else: every field of a posted
//   permission must equal the one built here (the merchant's settlement wallet of the mode now, the
//   chain's USDC and relayer, the subscription's amount, fee, period and salt, until revoked), its
//   start within the last 10 minutes of the chain's clock (or that plus the trial);
// - signatures are checked before anything is stored (EOA recovered, contract wallets by ERC-1271);
// - only an INCOMPLETE, unexpired subscription without a permission takes one; the status does not
//   change here (the engine relays it and moves it on), so no event is recorded;
// - a refusal is a 400 naming the field, and changes nothing.
import { timingSafeEqual } from "node:crypto";
import { getAddress, MaxUint256, Wallet } from "ethers";
import type { EnabledChain, ChainSet } from "../chain/chains.js";
import { type CheckoutReads, PERMIT_TYPES } from "../chain/permits.js";
import {
  type Permission,
  PERMISSION_TYPES,
  permissionHash,
  permissionTypedData,
  storePermission,
  subscriptionSalt,
  subscriptionsDomain,
  UNTIL_REVOKED,
} from "../chain/subscriptions.js";
import type { Prisma } from "../db/client.js";
import { jsonOrNull } from "../db/json.js";
import type { Invoice, Plan, Subscription, SubscriptionPull } from "../generated/prisma/client.js";
import { AppError, notFound } from "./errors.js";
import { formatAmount, toUnits } from "./money.js";
import { settlementWalletMissing } from "./settlement-wallets.js";
import { cancelSubscription, lockSubscription } from "./subscription-endings.js";
import type { AuthorizationQuery, ManageCancelForm, SignedAuthorization } from "./subscription-requests.js";
import type { PlanInterval, SubscriptionSettings } from "./subscriptions.js";
import { storedPermission } from "./subscription-permission.js";

/** How far behind the chain's clock a posted permission's start may be: time to sign both messages. */
export const START_TOLERANCE_SECONDS = 600n;
/** How long the permit the page asks for stays valid. */
const PERMIT_SECONDS = 3_600n;

/** Each chain's checkout reads (chain/permits.ts); null for a chain not enabled. */
export type CheckoutReaders = (chainId: number) => CheckoutReads | null;

/** A chain a checkout offers. */
export interface CheckoutChain {
  chainId: number;
  name: string;
}

/** What the checkout and manage pages show of a subscription. */
export interface SubscriptionView {
  subscription: Subscription;
  plan: Plan;
  merchantName: string;
  /** "25.00 USDC every month (30 days)". */
  priceWords: string;
  /** The chains of the subscription's mode it may be authorized on. */
  chains: CheckoutChain[];
  /** Why the last relay of the buyer's authorization failed, while the checkout is open again. */
  failure: string | null;
}

/** The period in words: "month (30 days)", "3 weeks (21 days)", "2 days"; a month and a year are fixed lengths on chain, so they say so. */
export function periodWords(interval: PlanInterval, count: number, seconds: number): string {
  const unit = count === 1 ? interval : `${count} ${interval}s`;
  return interval === "day" ? unit : `${unit} (${seconds / 86_400} days)`;
}

/** The price in words: "25.00 USDC every month (30 days)". */
export function priceWords(sub: Pick<Subscription, "amount" | "periodSeconds">, plan: Pick<Plan, "interval" | "intervalCount">): string {
  return `${formatAmount(sub.amount)} USDC every ${periodWords(plan.interval as PlanInterval, plan.intervalCount, sub.periodSeconds)}`;
}

/** What the buyer allows, in words, before signing: the trial, the price, until when. */
export function allowanceWords(view: Pick<SubscriptionView, "subscription" | "priceWords">): string {
  const trial = view.subscription.trialDays;
  const price = `up to ${view.priceWords}, until you cancel`;
  return trial > 0 ? `Free for ${trial} day${trial === 1 ? "" : "s"}, then ${price}` : price.replace(/^u/, "U");
}

/** A chain a subscription can be authorized on, with its relayer: the permission's spender. */
interface SpendingChain {
  chain: EnabledChain;
  spender: string;
}

/**
 * The chains of its mode a subscription can be authorized on: those whose payout minimum its amount
 * reaches, not found without SubscriptionsV1,
 * whose relayer is known, from its key where this process holds it, else as the worker last recorded
 * it (an API process of a split deployment has no key).
 */
export async function checkoutChains(prisma: Prisma, chains: ChainSet, sub: Pick<Subscription, "livemode" | "amount">): Promise<SpendingChain[]> {
  // The relayer pays every renewal's gas: a chain whose payout minimum is above the amount (5.00 on
  // Ethereum) would spend more on gas than the pull is worth, so it is not offered.
  const amount = toUnits(sub.amount);
  const offered = chains.forMode(sub.livemode).filter((c) => amount >= c.payoutMinAmount);
  const statuses = await prisma.chainStatus.findMany({
    where: { chainId: { in: offered.map((c) => c.chainId) } },
    select: { chainId: true, relayerAddress: true, subscriptionsDeployed: true },
  });
  return offered.flatMap((chain) => {
    const status = statuses.find((r) => r.chainId === chain.chainId);
    // A chain the worker found without SubscriptionsV1 is not offered; one not checked yet (a fresh
    // start) is: a relay there fails its simulation, costing nothing, and the buyer may try again.
    if (status?.subscriptionsDeployed === false) return [];
    const spender = chain.relayerKey ? new Wallet(chain.relayerKey).address : status?.relayerAddress;
    return spender ? [{ chain, spender: getAddress(spender) }] : [];
  });
}

/** The checkout's view of a subscription, or 404. */
export async function subscriptionView(prisma: Prisma, chains: ChainSet, id: string): Promise<SubscriptionView> {
  const sub = await prisma.subscription.findUnique({ where: { id }, include: { plan: true, merchant: { select: { name: true } } } });
  if (!sub) throw notFound("subscription", id);
  const { plan, merchant, ...subscription } = sub;
  return {
    subscription,
    plan,
    merchantName: merchant.name,
    priceWords: priceWords(subscription, plan),
    chains: (await checkoutChains(prisma, chains, sub)).map(({ chain: c }) => ({ chainId: c.chainId, name: c.name })),
    failure: subscription.status === "INCOMPLETE" && !subscription.permission ? await lastRelayFailure(prisma, id) : null,
  };
}

async function lastRelayFailure(prisma: Prisma, id: string): Promise<string | null> {
  const pull: SubscriptionPull | null = await prisma.subscriptionPull.findFirst({
    where: { subscriptionId: id, checkout: true },
    orderBy: { createdAt: "desc" },
  });
  if (pull?.status !== "FAILED") return null;
  // The engine's `error` is written for the operator; the buyer reads the reason's own words.
  return RELAY_FAILURES[pull.reason ?? "other"] ?? RELAY_FAILURES.other!;
}

const RELAY_FAILURES: Record<string, string> = {
  insufficient_balance: "Your wallet did not hold enough USDC for the first payment. Top it up, then authorize again.",
  insufficient_allowance: "The USDC allowance for the subscription contract was missing. Authorize again and sign the permit too.",
  revoked: "The permission was revoked before it could be used. Authorize again.",
  blacklisted: "USDC refuses transfers from this wallet. Use another wallet.",
  paused: "USDC transfers are paused on this network right now. Try again later.",
  other: "The authorization could not be completed on chain. Nothing was taken; authorize again.",
};

/** What the page asks the buyer's wallet to sign, both as eth_signTypedData_v4 payloads (numbers as decimal strings). */
export interface SubscriptionAuthorizationRequest {
  chainId: number;
  contract: string;
  /** The USDC permit for the contract: sign first. */
  permit: { domain: object; types: typeof PERMIT_TYPES; primaryType: "Permit"; message: Record<string, string> };
  /** The spend permission. */
  permission: ReturnType<typeof permissionTypedData>;
  /** What each signature allows, in the buyer's words. */
  words: { permit: string; permission: string };
}

/** The permission and permit the payer `payer` signs on `chainId` for subscription `id`. */
export async function subscriptionAuthorization(
  prisma: Prisma,
  chains: ChainSet,
  readers: CheckoutReaders,
  id: string,
  { chainId, payer }: AuthorizationQuery,
): Promise<SubscriptionAuthorizationRequest> {
  const sub = await openCheckout(prisma, id, new Date());
  const { chain, spender, reads } = await checkoutChain(prisma, chains, readers, sub, chainId);
  const now = await reads.chainTime();
  const start = now + trialSeconds(sub);
  const permission = await expectedPermission(prisma, sub, chain, spender, payer, start);
  const [domain, nonce] = await Promise.all([reads.tokenDomain(), reads.permitNonce(payer)]);
  const price = `${formatAmount(sub.amount)} USDC`;
  return {
    chainId,
    contract: chain.subscriptions,
    permit: {
      domain,
      types: PERMIT_TYPES,
      primaryType: "Permit",
      message: {
        owner: payer,
        spender: chain.subscriptions,
        value: MaxUint256.toString(),
        nonce: nonce.toString(),
        deadline: (now + PERMIT_SECONDS).toString(),
      },
    },
    permission: permissionTypedData(chainId, chain.subscriptions, permission),
    words: {
      permit: `1 of 2: lets the subscription contract (${chain.subscriptions}) move your USDC on ${chain.name}, but only as your next signature allows. Nothing moves with this one alone.`,
      permission:
        `2 of 2: allows ${price} per period to be taken from this wallet to ${getAddress(permission.merchant)}, at most once every period` +
        `${sub.trialDays > 0 ? `, starting when the trial ends` : ", starting now"}, until you cancel or revoke it.`,
    },
  };
}

/** Stores the payer's signed permission (and permit) on an open checkout, for the engine to relay; the subscription as it now is. */
export async function authorizeSubscription(
  prisma: Prisma,
  chains: ChainSet,
  readers: CheckoutReaders,
  id: string,
  input: SignedAuthorization,
  now = new Date(),
): Promise<Subscription> {
  const sub = await openCheckout(prisma, id, now);
  const { chain, spender, reads } = await checkoutChain(prisma, chains, readers, sub, input.chainId);
  const posted: Permission = input.permission;
  const chainNow = await reads.chainTime();
  const trial = trialSeconds(sub);
  const latest = chainNow + trial;
  if (posted.start > latest || posted.start < latest - START_TOLERANCE_SECONDS) {
    throw new AppError(
      "parameter_invalid",
      `permission.start must be the chain's time when you authorize${trial > 0n ? " plus the trial" : ""} (${latest}, at most ${START_TOLERANCE_SECONDS} s earlier): ask for a new authorization and sign again`,
      "permission.start",
    );
  }
  const expected = await expectedPermission(prisma, sub, chain, spender, input.payer, posted.start);
  for (const field of Object.keys(expected) as (keyof Permission)[]) {
    const same = typeof expected[field] === "string" ? getAddress(String(posted[field])) === expected[field] : posted[field] === expected[field];
    if (!same) throw new AppError("parameter_invalid", `permission.${field} must be ${String(expected[field])} for this subscription`, `permission.${field}`);
  }
  const domain = subscriptionsDomain(chain.chainId, chain.subscriptions);
  const signature = await reads.signedBy(input.payer, domain, PERMISSION_TYPES, expected as unknown as Record<string, unknown>, input.signature);
  if (!signature) {
    throw new AppError("parameter_invalid", "signature is not the payer's signature of this permission (wrong wallet, chain or field)", "signature");
  }
  let permit: { value: string; deadline: string; signature: string } | null = null;
  if (input.permit) {
    const p = input.permit;
    const amount = toUnits(sub.amount);
    if (p.value < amount) throw new AppError("parameter_invalid", `permit.value must be at least the amount per period (${amount})`, "permit.value");
    if (p.deadline <= chainNow + 60n)
      throw new AppError("parameter_invalid", "permit.deadline must be at least a minute ahead of the chain's time", "permit.deadline");
    const message = { owner: input.payer, spender: chain.subscriptions, value: p.value, nonce: await reads.permitNonce(input.payer), deadline: p.deadline };
    const permitSignature = await reads.signedBy(input.payer, await reads.tokenDomain(), PERMIT_TYPES, message, p.signature);
    if (!permitSignature) {
      throw new AppError(
        "parameter_invalid",
        "permit.signature is not the payer's permit for the subscription contract (wrong wallet, nonce, value or deadline)",
        "permit.signature",
      );
    }
    permit = { value: p.value.toString(), deadline: p.deadline.toString(), signature: permitSignature };
  }
  return prisma.$transaction(async (tx) => {
    const locked = await lockSubscription(tx, id, null);
    assertOpen(locked, now);
    return tx.subscription.update({
      where: { id },
      data: {
        chainId: chain.chainId,
        payer: expected.payer,
        settlementWallet: expected.merchant,
        spender: expected.spender,
        contractAddress: getAddress(chain.subscriptions),
        permission: storePermission(expected),
        permissionHash: permissionHash(expected),
        permissionSignature: signature,
        // Cleared when none is given: a retry after a failed relay must not carry the last attempt's permit.
        permit: jsonOrNull(permit),
        trialEnd: trial > 0n ? new Date(Number(expected.start) * 1000) : null,
        nextPullAt: now,
      },
    });
  });
}

/** The subscription, when its checkout takes an authorization now; a 400 naming `id` otherwise. */
async function openCheckout(prisma: Prisma, id: string, now: Date): Promise<Subscription> {
  const sub = await prisma.subscription.findUnique({ where: { id } });
  if (!sub) throw notFound("subscription", id);
  assertOpen(sub, now);
  // A checkout whose transactions reverted on chain after their simulation passed cost the relayer
  // gas each time: after a few, this link takes no more (a wallet that signs for simulations only).
  const reverted = await prisma.subscriptionPull.count({ where: { subscriptionId: id, checkout: true, status: "FAILED", txId: { not: null } } });
  if (reverted >= MAX_REVERTED_CHECKOUTS)
    throw new AppError("parameter_invalid", `Subscription ${id}'s checkout failed on chain ${reverted} times: ask the seller for a new subscription`, "id");
  return sub;
}

/** Checkout transactions that may revert on chain (relayer gas spent for nothing) before the link takes no more authorizations. */
const MAX_REVERTED_CHECKOUTS = 3;

function assertOpen(sub: Subscription, now: Date): void {
  if (sub.status !== "INCOMPLETE") throw new AppError("parameter_invalid", `Subscription ${sub.id} is ${sub.status}: it takes no authorization`, "id");
  if (sub.expiresAt <= now) throw new AppError("parameter_invalid", `Subscription ${sub.id}'s checkout expired at ${sub.expiresAt.toISOString()}`, "id");
  if (sub.permission !== null) throw new AppError("parameter_invalid", `Subscription ${sub.id} is already authorized and being started`, "id");
}

async function checkoutChain(
  prisma: Prisma,
  chains: ChainSet,
  readers: CheckoutReaders,
  sub: Subscription,
  chainId: number,
): Promise<SpendingChain & { reads: CheckoutReads }> {
  const offered = (await checkoutChains(prisma, chains, sub)).find((c) => c.chain.chainId === chainId);
  const reads = offered ? readers(chainId) : null;
  if (!offered || !reads)
    throw new AppError("chain_unsupported", `Chain ${chainId} does not take this subscription; choose one the checkout offers`, "chainId");
  return { ...offered, reads };
}

function trialSeconds(sub: Subscription): bigint {
  return BigInt(sub.trialDays) * 86_400n;
}

/** The permission the server would build for `payer` starting at `start`. */
async function expectedPermission(prisma: Prisma, sub: Subscription, chain: EnabledChain, spender: string, payer: string, start: bigint): Promise<Permission> {
  const merchant = await prisma.merchant.findUniqueOrThrow({ where: { id: sub.merchantId }, select: { testWallet: true, liveWallet: true } });
  const wallet = sub.livemode ? merchant.liveWallet : merchant.testWallet;
  if (!wallet) throw settlementWalletMissing(sub.livemode);
  return {
    payer: getAddress(payer),
    merchant: getAddress(wallet),
    token: getAddress(chain.usdc),
    spender,
    amount: toUnits(sub.amount),
    feeBps: sub.feeBps,
    period: BigInt(sub.periodSeconds),
    start,
    end: UNTIL_REVOKED,
    salt: subscriptionSalt(sub.id),
  };
}

/** What the manage page shows: the subscription's view and its invoices, newest first. */
export interface ManageView extends SubscriptionView {
  invoices: Invoice[];
  /** The stored permission (for "Revoke on chain"), once authorized. */
  permission: Permission | null;
}

/** The manage page's view of subscription `id`, when `token` is its manageToken; 404 otherwise (as for an unknown id). */
export async function manageView(prisma: Prisma, chains: ChainSet, id: string, token: string): Promise<ManageView> {
  const view = await subscriptionView(prisma, chains, id);
  if (!sameToken(view.subscription.manageToken, token)) throw notFound("subscription", id);
  const invoices = await prisma.invoice.findMany({
    where: { subscriptionId: id, status: { not: "DRAFT" } },
    orderBy: [{ createdAt: "desc" }, { id: "desc" }],
    take: 100,
  });
  const stored = view.subscription.permission;
  return { ...view, invoices, permission: stored ? storedPermission(stored) : null };
}

/** Cancels from the manage page (reason "customer"), now or at the period's end, when the form's token is the subscription's manageToken. */
export async function cancelFromManagePage(
  prisma: Prisma,
  id: string,
  { token, at }: ManageCancelForm,
  settings: SubscriptionSettings,
  now = new Date(),
): Promise<Subscription> {
  const atPeriodEnd = at === "period_end";
  const sub = await prisma.subscription.findUnique({ where: { id }, select: { manageToken: true, merchantId: true, livemode: true } });
  if (!sub || !sameToken(sub.manageToken, token)) throw notFound("subscription", id);
  return cancelSubscription(prisma, { merchantId: sub.merchantId, livemode: sub.livemode }, id, { atPeriodEnd, reason: "customer" }, settings, now);
}

function sameToken(expected: string, given: string): boolean {
  const a = Buffer.from(expected);
  const b = Buffer.from(given);
  return a.length === b.length && timingSafeEqual(a, b);
}
