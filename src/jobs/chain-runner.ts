// One runner per enabled chain and worker process. Only the process holding the chain's advisory
// lock works on it (one indexer and one relayer nonce sequence per chain). On PostgreSQL the workers
// share the chains (chain-share.ts): a runner asks for the lock only while its worker holds fewer
// than its share, and lets it go, between two ticks, when its worker holds more; when a holder dies
// its database session ends with its lock and another worker takes the chain. Each tick, in
// order: the indexer (new blocks, reorgs, catching up), confirming transfers into the ledger and
// ending authorizations, the relayer's open transactions (nonce gaps healed, stuck ones reported),
// the delegation of old relayer keys' subscription permissions (RELAYER_PREVIOUS_KEYS), payouts,
// relayed authorizations, subscriptions' checkouts and renewals (jobs/subscriptions.ts), sweeps, the first check of just-picked addresses, and now and then
// the reconciliation and the relayer's gas.
import { formatEther } from "ethers";
import type { Logger } from "pino";
import { DEVNET_CHAIN_ID } from "../chain/anvil.js";
import type { EnabledChain } from "../chain/chains.js";
import { ChainIndexer } from "./indexer.js";
import { Relayer } from "../chain/relayer.js";
import { subscriptionsDeployed } from "../chain/subscriptions.js";
import type { Database, HeldLock, Prisma } from "../db/client.js";
import { endAuthorizations } from "../domain/authorizations.js";
import { chargesAwaitingConfirmations } from "../domain/chain-transfers.js";
import { recordRelayerBalance, stuckRelayerTxs } from "../domain/chain-status.js";
import { alertRelayerLow } from "../domain/relayer-alert.js";
import type { ChargeRef } from "../domain/live.js";
import { confirmChainMoney, type PaymentSettings } from "../domain/payments.js";
import { payoutHandlers, runPayouts } from "./payouts.js";
import { every, type Periodic } from "../lib/periodic.js";
import type { ProcessMetrics } from "../lib/process-metrics.js";
import { authorizationHandlers, runAuthorizations } from "./authorizations.js";
import { checkPickedClones, runReconciliation } from "./reconcile.js";
import { IGNORED, resendStored, trackRelayerTxs, type TxHandlers } from "./relayer-txs.js";
import { runSweeps, sweepHandlers } from "./sweeps.js";
import { delegationHandlers, runDelegations } from "./delegations.js";
import { pullHandlers, runSubscriptions } from "./subscriptions.js";
import { DEFAULT_RETRY_SCHEDULE, parseRetrySchedule } from "../domain/subscription-billing.js";
import type { RelayerTxKind } from "../generated/prisma/client.js";
import { type ChainShare, newWorkerId } from "./chain-share.js";

/** Advisory-lock keys for chains: a fixed base plus the chain id. */
const CHAIN_LOCK_BASE = 7_300_000_000;
/** Index steps per tick when far behind, before settling what they found. */
const CATCH_UP_STEPS = 10;

export interface ChainRunnerOptions {
  intervalMs: number;
  settings: PaymentSettings;
  /** How long a deployment or flush may stay unmined before it is replaced with higher fees. */
  bumpAfterMs: number;
  /** How often the relayer's gas balance is checked (default: every minute). */
  balanceCheckMs?: number;
  /** How long a payout the token refuses waits before it is simulated again (default: a minute). */
  blockedRecheckMs?: number;
  /** How often the ledger is reconciled with the chain (default: RECONCILE_INTERVAL_MS's, ten minutes). */
  reconcileMs?: number;
  /** RELAYER_GAS_BUDGET_PER_MERCHANT: a merchant's relayer gas per chain and UTC day for sweeps and payments without gas (default where unset). */
  relayerGasBudget?: bigint;
  /** SUBSCRIPTION_RETRY_SCHEDULE in ms (default: 1 h, 1 day, 3 days, 5 days). */
  subscriptionRetrySchedule?: readonly number[];
  /** Where the reconciliation's differences and the chain locks this worker holds are counted. */
  metrics?: Pick<ProcessMetrics, "reconcileDifferences" | "chainLocks">;
  /** This worker's id, as /metrics names it (default: a new one). */
  workerId?: string;
  /** This worker's share of the chains (PostgreSQL); absent, the runner asks for the lock every tick (the embedded database's lock is its own). */
  share?: ChainShare;
  /** RELAYER_PREVIOUS_KEYS: keys the relayer used before, whose subscription permissions the current key takes over. */
  previousRelayerKeys?: readonly string[];
  /** ALERT_EMAIL: told by email, at most once a day, while the relayer is low on gas money. */
  alertTo?: string;
  now?: () => Date;
}

/** A running chain runner, and how far its work has got. */
export interface ChainRunner extends Periodic {
  /**
   * Ticks this runner completed with the chain in hand (every job of the tick run), and the block the
   * last one's indexing reached: what "it has looked at block B and acted on it" is read from.
   */
  readonly progress: { passes: number; tip: bigint | null };
}

/** Starts the chain's background work every `intervalMs`. */
export function startChainRunner(db: Database, chain: EnabledChain, logger: Logger, options: ChainRunnerOptions): ChainRunner {
  const { now = () => new Date(), settings, balanceCheckMs = 60_000, reconcileMs = 600_000 } = options;
  const log = logger.child({ chainId: chain.chainId });
  const relayer = new Relayer(chain, {
    onHealthChange: (h) =>
      h.healthy
        ? log.info({ endpoint: h.endpoint }, "RPC endpoint answering again")
        : log.warn({ endpoint: h.endpoint, problem: h.lastProblem }, "RPC endpoint failing; using the next one while it cools down"),
  });
  const indexer = new ChainIndexer(db.prisma, relayer.provider, chain, log, settings);
  const retrySchedule = options.subscriptionRetrySchedule ?? parseRetrySchedule(DEFAULT_RETRY_SCHEDULE);
  const handlers = relayerTxHandlers(db.prisma, relayer, settings, log, now, retrySchedule);
  const { share, metrics, workerId = newWorkerId() } = options;
  let lock: HeldLock | null = null;
  const hold = (next: HeldLock | null) => {
    lock = next;
    share?.holds(chain.chainId, next !== null);
    metrics?.chainLocks.set({ chain_id: chain.chainId, worker: workerId }, next ? 1 : 0);
  };
  hold(null);
  let balanceCheckedAt = 0;
  let reconciledAt = 0;
  // Read from the chain again whenever this process takes the chain: another may have rotated meanwhile.
  let delegated = false;
  const stuck = new Set<string>();
  const { feed } = settings;
  const progress = feed ? new PaymentProgress(db.prisma, chain.chainId) : null;
  const done: ChainRunner["progress"] = { passes: 0, tip: null };
  const periodic = every(
    options.intervalMs,
    async () => {
      if (lock && !(await lock.alive())) {
        // The server dropped our session and with it the lock: another worker may hold it now.
        log.warn("lost the chain lock (database connection closed); standing by");
        hold(null);
        relayer.resetNonce();
      }
      if (lock && share?.shouldRelease(chain.chainId)) {
        // Between two ticks: the last step has ended, nothing of it is in flight. Another worker's
        // relayer continues the nonces, so ours is read again if this one takes the chain back.
        await lock.release();
        hold(null);
        relayer.resetNonce();
        log.info({ worker: workerId }, "chain runner released: this worker held more than its share of the chains");
        return;
      }
      if (!lock) {
        if (share && !share.mayTake(chain.chainId)) return;
        let taken: HeldLock | null = null;
        try {
          taken = await db.sql.tryLock(CHAIN_LOCK_BASE + chain.chainId);
        } finally {
          hold(taken);
        }
        if (!taken) return;
        log.info({ relayer: relayer.address, worker: workerId }, "chain runner active");
        delegated = false;
        await resendStored(db.prisma, relayer);
      }
      let step = await indexer.step();
      // After a reorg the chain may have dropped transactions of ours: ask the node for the nonce again,
      // and hand it those still waiting at once rather than when they would be bumped.
      if (step.reorged) {
        relayer.resetNonce();
        await resendStored(db.prisma, relayer);
      }
      for (let i = 1; step.behind && i < CATCH_UP_STEPS; i++) step = await indexer.step();
      await confirmChainMoney(db.prisma, settings, chain, step.tip, now());
      await endAuthorizations(db.prisma, chain, step.tip, now());
      // Announcing progress is best effort: a failure here must not hold back settlement.
      if (feed && progress) feed.progressed(await progress.moved(step.tip).catch(() => []));
      await trackRelayerTxs(db.prisma, relayer, step.tip, handlers, { bumpAfterMs: options.bumpAfterMs, now }, log);
      await reportStuck(db.prisma, chain, stuck, log, now());
      if (!delegated) {
        // A rotation is not urgent (an old key's renewals wait for it): its trouble must not hold back payouts.
        delegated = await runDelegations(db.prisma, relayer, options.previousRelayerKeys ?? [], log).catch((err) => {
          log.warn({ err: (err as Error).message }, "delegating old relayer keys failed; trying again next tick");
          return false;
        });
      }
      await runPayouts(db.prisma, relayer, settings, log, { now, blockedRecheckMs: options.blockedRecheckMs, payoutMinAmount: chain.payoutMinAmount });
      await runAuthorizations(db.prisma, relayer, log);
      await runSubscriptions(db.prisma, relayer, settings, log, { retrySchedule, now });
      await runSweeps(db.prisma, relayer, log, { relayerGasBudget: options.relayerGasBudget, feed });
      await checkPickedClones(db.prisma, relayer.provider, chain, settings, log, now());
      if (chain.chainId === DEVNET_CHAIN_ID) await keepDevnetClock(db.prisma, relayer, now());
      if (Date.now() - reconciledAt >= reconcileMs) {
        reconciledAt = Date.now();
        await runReconciliation(db.prisma, relayer.provider, chain, settings, log, { metrics }, now()).catch((err) =>
          log.error({ err: (err as Error).message }, "reconciliation failed; trying again next interval"),
        );
      }
      if (Date.now() - balanceCheckedAt >= balanceCheckMs) {
        balanceCheckedAt = Date.now();
        await checkRelayerBalance(db.prisma, relayer, log, now(), options.alertTo).catch((err) =>
          log.warn({ err: (err as Error).message }, "relayer balance check failed"),
        );
      }
      done.tip = step.tip;
      done.passes++;
    },
    (err) => log.warn({ err: (err as Error).message }, "chain runner tick failed; retrying next tick"),
  );
  return {
    progress: done,
    async stop() {
      await periodic.stop();
      await lock?.release();
      hold(null);
      relayer.close();
    },
  };
}

/** Logs once, at error, each relayer transaction of `chain` unmined past its limit (/readyz and /metrics report them too). */
async function reportStuck(prisma: Prisma, chain: EnabledChain, reported: Set<string>, log: Logger, at: Date): Promise<void> {
  const stuck = await stuckRelayerTxs(prisma, [chain], at);
  for (const t of stuck.filter((s) => !reported.has(s.id))) {
    reported.add(t.id);
    log.error(
      { tx: t.id, nonce: t.nonce, since: t.createdAt, ceiling: chain.maxFeePerGas.toString() },
      "relayer transaction stuck: unmined past the chain's limit; later payouts wait behind it (is the node up? is the fee ceiling too low?)",
    );
  }
  for (const id of reported) if (!stuck.some((s) => s.id === id)) reported.delete(id);
}

/**
 * The local devnet mines only when sent a transaction, so its clock stands still while idle and no
 * picked charge would expire (they expire by the chain's clock): when one is due by the wall clock
 * and the chain's clock is behind, an empty block moves it on.
 */
async function keepDevnetClock(prisma: Prisma, relayer: Relayer, at: Date): Promise<void> {
  const [due] = await prisma.$queryRaw<{ n: bigint }[]>`
    SELECT count(*) AS n FROM charges c JOIN chain_cursors cc ON cc.chain_id = c.chain_id
    WHERE c.status = 'PENDING' AND c.chain_id = ${relayer.chain.chainId} AND c.expires_at <= ${at}
      AND (cc.confirmed_time IS NULL OR cc.confirmed_time < c.expires_at)`;
  if (Number(due?.n ?? 0) > 0) await relayer.provider.send("evm_mine", []);
}

/**
 * Records the relayer's gas balance and whether SubscriptionsV1 has code on the chain; a balance below
 * the chain's minimum is an error for the operator, and an email to `alertTo`.
 */
async function checkRelayerBalance(prisma: Prisma, relayer: Relayer, log: Logger, at: Date, alertTo: string | undefined): Promise<void> {
  const { chain } = relayer;
  const [balance, deployed] = await Promise.all([relayer.balance(), subscriptionsDeployed(relayer.provider, chain)]);
  await recordRelayerBalance(prisma, {
    chainId: chain.chainId,
    relayerAddress: relayer.address,
    balance,
    minBalance: chain.relayerMinBalance,
    checkedAt: at,
    subscriptionsDeployed: deployed,
  });
  if (balance < chain.relayerMinBalance) {
    log.error(
      { relayer: relayer.address, balance: formatEther(balance), minimum: formatEther(chain.relayerMinBalance), unit: chain.nativeSymbol },
      "relayer is low on gas money: fund it, or payouts on this chain will stop",
    );
    if (alertTo) {
      const low = {
        chainId: chain.chainId,
        chainName: chain.name,
        nativeSymbol: chain.nativeSymbol,
        livemode: !chain.testnet,
        relayerAddress: relayer.address,
      };
      await alertRelayerLow(prisma, { ...low, balance, minBalance: chain.relayerMinBalance }, alertTo, at);
    }
  }
}

/**
 * Which charges' payments moved on chain since the last look: with every new block, each payment
 * waiting for confirmations gains one, and one that left the waiting set was confirmed (announced
 * with its change) or rolled back by a reorg (announced here).
 */
class PaymentProgress {
  private tip: bigint | null = null;
  private waiting = new Map<string, ChargeRef>();

  constructor(
    private readonly prisma: Prisma,
    private readonly chainId: number,
  ) {}

  /** The charges to announce after the chain reached `tip` (none while it stands still). */
  async moved(tip: bigint): Promise<ChargeRef[]> {
    if (tip === this.tip) return [];
    const waiting = new Map((await chargesAwaitingConfirmations(this.prisma, this.chainId)).map((c) => [c.id, c]));
    const moved = [...new Map([...this.waiting, ...waiting]).values()];
    [this.tip, this.waiting] = [tip, waiting];
    return moved;
  }
}

/** What each kind of relayer transaction does when it is mined, confirmed or fails. */
export function relayerTxHandlers(
  prisma: Prisma,
  relayer: Relayer,
  settings: PaymentSettings,
  logger: Logger,
  now: () => Date,
  retrySchedule: readonly number[] = parseRetrySchedule(DEFAULT_RETRY_SCHEDULE),
): Record<RelayerTxKind, TxHandlers> {
  return {
    // Version 1's deployment batches, from before clones were deployed by their payout: only followed.
    DEPLOY: IGNORED,
    FLUSH: payoutHandlers(prisma, settings, logger, now),
    AUTHORIZATION: authorizationHandlers(prisma, logger),
    SWEEP: sweepHandlers(prisma, relayer, now, settings),
    FILL: IGNORED,
    PULL: pullHandlers(prisma, relayer, settings, logger, { retrySchedule, now }),
    DELEGATE: delegationHandlers(logger),
  };
}
