// The subscriptions' engine on one chain, in the process holding its lock (chain-runner.ts). Each tick:
// - checkouts: INCOMPLETE subscriptions the buyer authorized (a permission stored, nextPullAt due)
//   are simulated (eth_estimateGas from the relayer: a refusal costs no gas) and relayed as one
//   subscribe() (permit, permission, first pull; no pull with a trial) of kind PULL; a refusal clears
//   the permission and keeps why on a FAILED pull, for the checkout page to show;
// - renewals and retries: TRIALING, ACTIVE and PAST_DUE subscriptions whose nextPullAt the chain's
//   clock (its latest block's time) has reached; cancelAtPeriodEnd at the period's end ends them
//   instead; each due one has its period's invoice opened, is simulated (one call, all of them in one
//   JSON-RPC batch) and pulled; a refusal is a failed pull (domain/subscription-billing.ts);
// - invoice.upcoming three days before a renewal, once per period (periods longer than three days);
// - INCOMPLETE subscriptions past their checkout window: INCOMPLETE_EXPIRED.
//
// Invariants, whatever crashes where:
// - a pull is claimed (its SubscriptionPull row, SENT with its relayer transaction) in the database
//   transaction that stores the signed transaction, before it is broadcast; at most one pull per
//   subscription is on its way (a unique index), and the contract refuses a second in a window;
// - the relayer never sends a pull its simulation refused;
// - only the current window can be pulled: a renewal late by more than a period bills the window the
//   chain is in (the missed one is never charged); a retry whose window closed ends the subscription.
import { isError } from "ethers";
import type { Logger } from "pino";
import type { EnabledChain } from "../chain/chains.js";
import { Relayer } from "../chain/relayer.js";
import { withRpcRetry } from "../chain/rpc.js";
import { periodIndexAt, type Permission, pullCalldata, subscribeCalldata, subscriptionsInterface } from "../chain/subscriptions.js";
import { usdcInterface } from "../chain/usdc.js";
import type { Prisma } from "../db/client.js";
import type { Subscription } from "../generated/prisma/client.js";
import {
  announceUpcoming,
  type BillingSettings,
  claimPull,
  expireCheckouts,
  checkoutFailed,
  type FailedPull,
  openPeriodInvoice,
  periodAlreadyPulled,
  reopenReversedPulls,
  type Period,
  periodAt,
  type PullFailure,
  postponeRenewal,
  pullLost,
  pullSucceeded,
  renewalFailed,
} from "../domain/subscription-billing.js";
import { toUnits } from "../domain/money.js";
import { endSubscription, lockSubscription } from "../domain/subscription-endings.js";
import { storedPermission, storedPermit } from "../domain/subscription-permission.js";
import { recordSubscriptionEvent } from "../domain/subscriptions.js";
import { sendRelayerTx, type TxHandlers } from "./relayer-txs.js";

export interface SubscriptionJobOptions {
  /** SUBSCRIPTION_RETRY_SCHEDULE in milliseconds: the delay before each retry after a failed pull. */
  retrySchedule: readonly number[];
  /** Subscriptions per batch (renewals are simulated together). */
  batchSize?: number;
  now: () => Date;
  /** Only this subscription (the test helper's advance). */
  only?: string;
}

/** Runs what is due for the subscriptions of the relayer's chain. */
export async function runSubscriptions(
  prisma: Prisma,
  relayer: Relayer,
  settings: BillingSettings,
  logger: Logger,
  options: SubscriptionJobOptions,
): Promise<void> {
  const log = logger.child({ job: "subscriptions" });
  await expireCheckouts(prisma, relayer.chain.chainId, settings, options.now(), options.batchSize);
  await runCheckouts(prisma, relayer, settings, log, options);
  const latest = await withRpcRetry(() => relayer.provider.getBlock("latest"));
  if (!latest) return;
  const chainTime = new Date(latest.timestamp * 1000);
  const reopened = await reopenReversedPulls(prisma, relayer.chain.chainId, settings, chainTime);
  if (reopened.length > 0)
    log.error({ subscriptions: reopened }, "a deep reorg took subscription pulls away: PAST_DUE, pulled again while their window is open");
  await runRenewals(prisma, relayer, settings, log, options, chainTime);
  await announceUpcoming(prisma, relayer.chain.chainId, settings, chainTime, options.only, options.batchSize);
}

/** The subscriptions due on `chainId` in `status` (none with a pull on its way), oldest due first. */
function due(prisma: Prisma, chainId: number, status: Subscription["status"][], before: Date, options: SubscriptionJobOptions): Promise<Subscription[]> {
  return prisma.subscription.findMany({
    where: {
      chainId,
      status: { in: status },
      nextPullAt: { lte: before },
      pulls: { none: { status: { in: ["SENDING", "SENT"] } } },
      ...(options.only && { id: options.only }),
    },
    orderBy: { nextPullAt: "asc" },
    take: options.batchSize ?? 100,
  });
}

/** What simulating a call said: the gas it needs, or why it would revert. */
type Simulation = { gasNeeded: bigint } | { refusal: string; data: string | null };

async function simulate(relayer: Pick<Relayer, "provider" | "address">, call: { to: string; data: string }): Promise<Simulation> {
  try {
    return { gasNeeded: await relayer.provider.estimateGas({ ...call, from: relayer.address }) };
  } catch (e) {
    // Transport trouble is not a verdict: the tick fails and is tried again.
    if (!isError(e, "CALL_EXCEPTION")) throw e;
    return { refusal: e.shortMessage ?? e.message, data: e.data ?? null };
  }
}

const ERROR_REASONS: Record<string, PullFailure> = { AlreadyRevoked: "revoked" };
/**
 * Refusals that are the service's, not the buyer's: the relayer is not the controller of the
 * permission's spender (a key rotation not delegated yet), or the permission is not approved on
 * chain (a deep reorg took the checkout away). They make nothing PAST_DUE and send no email.
 */
const SERVICE_FAULTS = new Set(["NotSpender", "NotApproved", "BadSignature"]);
/** How long a renewal the service could not make waits before it is tried again. */
const SERVICE_FAULT_WAIT_MS = 3_600_000;
const TOKEN_MESSAGES: [RegExp, PullFailure][] = [
  [/exceeds balance/i, "insufficient_balance"],
  [/exceeds allowance/i, "insufficient_allowance"],
  [/blacklisted/i, "blacklisted"],
  [/paused/i, "paused"],
];

/**
 * Why a pull of `amount` under `p` was refused. The contract's own errors say it directly; a token
 * refusal shows only as TransferFailed (the contract swallows the token's message), so the token is
 * asked: paused? a party blacklisted? the payer's balance, its allowance to the contract.
 */
async function classify(
  relayer: Pick<Relayer, "provider" | "chain">,
  p: Permission,
  amount: bigint,
  refusal: { refusal: string; data: string | null },
): Promise<Omit<FailedPull, "at">> {
  const parsed = refusal.data ? safeParseError(refusal.data) : null;
  if (parsed && parsed !== "TransferFailed") return { reason: ERROR_REASONS[parsed] ?? "other", error: `${parsed}: ${refusal.refusal}` };
  for (const [re, reason] of TOKEN_MESSAGES) if (re.test(refusal.refusal)) return { reason, error: refusal.refusal };
  const read = async (fn: string, args: unknown[]) => {
    const out = await relayer.provider.call({ to: p.token, data: usdcInterface.encodeFunctionData(fn, args) });
    return usdcInterface.decodeFunctionResult(fn, out)[0] as unknown;
  };
  const [paused, payerBlocked, merchantBlocked, balance, allowance] = await withRpcRetry(() =>
    Promise.all([
      read("paused", []).catch(() => false),
      read("isBlacklisted", [p.payer]).catch(() => false),
      read("isBlacklisted", [p.merchant]).catch(() => false),
      read("balanceOf", [p.payer]),
      read("allowance", [p.payer, relayer.chain.subscriptions]),
    ]),
  );
  if (paused) return { reason: "paused", error: "the token is paused" };
  if (payerBlocked || merchantBlocked) return { reason: "blacklisted", error: `the token blacklisted the ${payerBlocked ? "payer" : "merchant wallet"}` };
  if ((balance as bigint) < amount) return { reason: "insufficient_balance", error: `the payer holds ${balance as bigint} base units, ${amount} needed` };
  if ((allowance as bigint) < amount)
    return { reason: "insufficient_allowance", error: `the payer's allowance to the contract is ${allowance as bigint} base units, ${amount} needed` };
  return { reason: "other", error: refusal.refusal };
}

function safeParseError(data: string): string | null {
  try {
    return subscriptionsInterface.parseError(data)?.name ?? null;
  } catch {
    return null;
  }
}

async function runCheckouts(prisma: Prisma, relayer: Relayer, settings: BillingSettings, log: Logger, options: SubscriptionJobOptions): Promise<void> {
  const chainId = relayer.chain.chainId;
  const waiting = (await due(prisma, chainId, ["INCOMPLETE"], options.now(), options)).filter((s) => s.permission !== null && s.permissionSignature !== null);
  for (const sub of waiting) {
    const p = storedPermission(sub.permission);
    const amount = sub.trialEnd ? 0n : toUnits(sub.amount);
    const call = { to: relayer.chain.subscriptions, data: checkoutCalldata(sub, p, amount) };
    const simulated = await simulate(relayer, call);
    if ("refusal" in simulated) {
      const failure = await classify(relayer, p, amount, simulated);
      await checkoutFailed(prisma, sub.id, null, { ...failure, at: options.now() }, settings);
      log.warn({ subscription: sub.id, ...failure }, "checkout refused by the chain: nothing sent; the buyer can authorize again");
      continue;
    }
    const period = periodAt(p.start, sub.periodSeconds, 0);
    const sent = await sendRelayerTx(
      prisma,
      relayer,
      "PULL",
      call,
      (tx, txId) =>
        claimPull(
          tx,
          sub.id,
          txId,
          { checkout: true, amount, period: amount === 0n ? null : period, permissionHash: sub.permissionHash },
          settings,
          options.now(),
        ),
      { gasNeeded: simulated.gasNeeded },
    );
    if (sent) log.info({ subscription: sub.id, relayerTx: sent, trial: amount === 0n }, "subscription checkout relayed");
  }
}

/** The checkout's subscribe(): the permit when the buyer gave one, the permission, the first pull of `amount`. */
function checkoutCalldata(sub: Subscription, p: Permission, amount: bigint): string {
  return subscribeCalldata(p, sub.permissionSignature!, storedPermit(sub.permit), amount);
}

async function runRenewals(
  prisma: Prisma,
  relayer: Relayer,
  settings: BillingSettings,
  log: Logger,
  options: SubscriptionJobOptions,
  chainTime: Date,
): Promise<void> {
  const subs = await due(prisma, relayer.chain.chainId, ["TRIALING", "ACTIVE", "PAST_DUE"], chainTime, options);
  const seconds = BigInt(Math.floor(chainTime.getTime() / 1000));
  const pulls: { sub: Subscription; p: Permission; period: Period; call: { to: string; data: string } }[] = [];
  for (const sub of subs) {
    const p = storedPermission(sub.permission);
    if (sub.cancelAtPeriodEnd && sub.currentPeriodEnd && sub.currentPeriodEnd <= chainTime) {
      await prisma.$transaction(async (tx) => endSubscription(tx, await lockSubscription(tx, sub.id, null), "period_end", settings, chainTime));
      continue;
    }
    const index = periodIndexAt(p, seconds);
    if (index === null) continue;
    const period = periodAt(p.start, sub.periodSeconds, Number(index));
    // A retry belongs to its period: once the chain's window moved on, that period can never be pulled.
    if (sub.status === "PAST_DUE" && sub.periodIndex !== null && period.index !== sub.periodIndex) {
      const closed = periodAt(p.start, sub.periodSeconds, sub.periodIndex);
      await renewalFailed(
        prisma,
        sub.id,
        null,
        closed,
        { reason: "other", error: "the period's window closed before a retry succeeded", at: chainTime },
        [],
        settings,
      );
      continue;
    }
    // Open the invoice before simulating: a failure leaves it OPEN, which is what the merchant sees.
    await prisma.$transaction(async (tx) => openPeriodInvoice(tx, await lockSubscription(tx, sub.id, null), period, settings, options.now()));
    pulls.push({ sub, p, period, call: { to: relayer.chain.subscriptions, data: pullCalldata(p, toUnits(sub.amount)) } });
  }
  // All the simulations at once: the provider sends them as one JSON-RPC batch.
  const simulations = await Promise.all(pulls.map((x) => simulate(relayer, x.call)));
  for (const [i, { sub, p, period, call }] of pulls.entries()) {
    const simulated = simulations[i]!;
    const refused = "refusal" in simulated && simulated.data ? safeParseError(simulated.data) : null;
    if (refused === "AlreadyPulled") {
      await periodAlreadyPulled(prisma, sub.id, period, settings);
      continue;
    }
    if (refused && SERVICE_FAULTS.has(refused)) {
      await postponeRenewal(prisma, sub.id, new Date(chainTime.getTime() + SERVICE_FAULT_WAIT_MS));
      log.error(
        { subscription: sub.id, period: period.index, refused },
        "the service cannot pull this renewal (not the buyer's doing): tried again in an hour",
      );
      continue;
    }
    if ("refusal" in simulated) {
      const failure = await classify(relayer, p, toUnits(sub.amount), simulated);
      await renewalFailed(prisma, sub.id, null, period, { ...failure, at: chainTime }, options.retrySchedule, settings);
      log.warn({ subscription: sub.id, period: period.index, ...failure }, "renewal refused by the chain: nothing sent");
      continue;
    }
    const sent = await sendRelayerTx(
      prisma,
      relayer,
      "PULL",
      call,
      (tx, txId) =>
        claimPull(tx, sub.id, txId, { checkout: false, amount: toUnits(sub.amount), period, permissionHash: sub.permissionHash }, settings, options.now()),
      { gasNeeded: simulated.gasNeeded },
    );
    if (sent) log.info({ subscription: sub.id, period: period.index, relayerTx: sent }, "renewal pull sent");
  }
}

/** What a PULL relayer transaction's end does to its pull and subscription. */
export function pullHandlers(
  prisma: Prisma,
  relayer: Relayer,
  settings: BillingSettings,
  logger: Logger,
  options: Pick<SubscriptionJobOptions, "retrySchedule" | "now">,
): TxHandlers {
  return {
    async mined(tx, receipt) {
      const pull = await prisma.subscriptionPull.findFirst({ where: { txId: tx.id } });
      if (pull) await pullSucceeded(prisma, pull.id, receipt.hash, settings);
    },
    async confirmed() {},
    async failed(tx, receipt) {
      const pull = await prisma.subscriptionPull.findFirst({ where: { txId: tx.id }, include: { subscription: true } });
      if (!pull || (pull.status !== "SENT" && pull.status !== "SENDING")) return;
      const sub = pull.subscription;
      const at = receipt ? new Date(((await relayer.provider.getBlock(receipt.blockNumber))?.timestamp ?? 0) * 1000) : options.now();
      const p = storedPermission(sub.permission);
      let failure: Omit<FailedPull, "at"> = { reason: "other", error: "its transaction was dropped (another used its nonce)" };
      if (receipt) {
        // The receipt has no reason: the same call, simulated now, says why (a reverted call changed nothing).
        const data = pull.checkout ? checkoutCalldata(sub, p, toUnits(pull.amount)) : pullCalldata(p, toUnits(pull.amount));
        const simulated = await simulate(relayer, { to: relayer.chain.subscriptions, data });
        const refused = "refusal" in simulated && simulated.data ? safeParseError(simulated.data) : null;
        // Another pull of ours took the window (a re-sent one, the test helper's): the period is paid.
        if (!pull.checkout && refused === "AlreadyPulled") {
          await pullLost(prisma, pull.id);
          await periodAlreadyPulled(prisma, sub.id, periodAt(p.start, sub.periodSeconds, pull.periodIndex), settings);
          return;
        }
        failure = "refusal" in simulated ? await classify(relayer, p, toUnits(pull.amount), simulated) : { reason: "other", error: "its transaction reverted" };
      }
      if (pull.checkout) await checkoutFailed(prisma, sub.id, pull.id, { ...failure, at }, settings);
      else
        await renewalFailed(
          prisma,
          sub.id,
          pull.id,
          periodAt(p.start, sub.periodSeconds, pull.periodIndex),
          { ...failure, at },
          options.retrySchedule,
          settings,
        );
      logger.warn({ subscription: sub.id, relayerTx: tx.id, ...failure }, "subscription pull failed on chain");
    },
  };
}

/** How long the test helper's advance waits for the devnet to mine the pull it sent. */
const ADVANCE_WAIT_MS = 15_000;

/**
 * Test mode on the devnet: moves the chain's clock to the subscription's next pull (a block at that
 * time) and runs what is due for it now, in this process, waiting for its pull's receipt so the answer
 * shows the outcome. It signs with the relayer's key beside the worker's chain runner: a nonce both
 * take is resolved by the relayer's tracking (the loser's work is tried again), never doubled.
 */
export async function advanceSubscription(
  prisma: Prisma,
  chain: EnabledChain,
  id: string,
  settings: BillingSettings,
  logger: Logger,
  options: Pick<SubscriptionJobOptions, "retrySchedule" | "now">,
): Promise<void> {
  const relayer = new Relayer(chain);
  try {
    const sub = await prisma.subscription.findUniqueOrThrow({ where: { id } });
    const latest = await withRpcRetry(() => relayer.provider.getBlock("latest"));
    const target = sub.status === "INCOMPLETE" || !sub.nextPullAt ? null : Math.ceil(sub.nextPullAt.getTime() / 1000);
    if (target !== null && latest && target > latest.timestamp) await relayer.provider.send("evm_setNextBlockTimestamp", [target]);
    await relayer.provider.send("evm_mine", []);
    await runSubscriptions(prisma, relayer, settings, logger, { ...options, only: id });
    const pull = await prisma.subscriptionPull.findFirst({ where: { subscriptionId: id, status: "SENT" } });
    const tx = pull?.txId ? await prisma.relayerTransaction.findUnique({ where: { id: pull.txId } }) : null;
    if (!tx) return;
    const handlers = pullHandlers(prisma, relayer, settings, logger, options);
    for (const deadline = Date.now() + ADVANCE_WAIT_MS; Date.now() < deadline; await new Promise((r) => setTimeout(r, 100))) {
      const receipt = await relayer.receipt(tx.txHashes[0]!);
      if (!receipt) continue;
      const open = { ...tx, status: "SENT" as const };
      if (receipt.status === 1) await handlers.mined(open, receipt);
      else await handlers.failed(open, receipt);
      return;
    }
  } finally {
    relayer.close();
  }
}
