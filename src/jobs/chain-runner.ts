// One runner per enabled chain and worker process. Only the process holding the chain's advisory
// lock works on it (one indexer and one relayer nonce sequence per chain); the others keep asking,
// and take over within a tick when the holder dies and its database session ends. Each tick, in
// order: the indexer (new blocks, reorgs, catching up), confirming payments and settlements, the
// relayer's open transactions, new clone deployments, payouts, and now and then the relayer's gas.
import { formatEther } from "ethers";
import type { Logger } from "pino";
import type { EnabledChain } from "../chain/chains.js";
import { ChainIndexer } from "./indexer.js";
import { Relayer } from "../chain/relayer.js";
import type { Database, HeldLock, Prisma } from "../db/client.js";
import { recordRelayerBalance } from "../domain/chain-status.js";
import type { ChargeRef } from "../domain/live.js";
import { chargesAwaitingConfirmations, confirmChainMoney, type PaymentSettings } from "../domain/payments.js";
import { confirmRefunds } from "../domain/refunds.js";
import { deploymentHandlers, runDeployments } from "./deployments.js";
import { flushHandlers, runPayouts } from "./flushes.js";
import { every, type Periodic } from "../lib/periodic.js";
import { authorizationHandlers } from "./authorizations.js";
import { runChargeAuthorizations } from "./charge-authorizations.js";
import { runRefundAuthorizations } from "./refund-authorizations.js";
import { resendStored, trackRelayerTxs, type TxHandlers } from "./relayer-txs.js";
import type { RelayerTxKind } from "../generated/prisma/client.js";

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
  now?: () => Date;
}

/** Starts the chain's background work every `intervalMs`. */
export function startChainRunner(db: Database, chain: EnabledChain, logger: Logger, options: ChainRunnerOptions): Periodic {
  const { now = () => new Date(), settings, balanceCheckMs = 60_000 } = options;
  const log = logger.child({ chainId: chain.chainId });
  const relayer = new Relayer(chain, {
    onHealthChange: (h) =>
      h.healthy
        ? log.info({ endpoint: h.endpoint }, "RPC endpoint answering again")
        : log.warn({ endpoint: h.endpoint, problem: h.lastProblem }, "RPC endpoint failing; using the next one while it cools down"),
  });
  const indexer = new ChainIndexer(db.prisma, relayer.provider, chain, log);
  const handlers = relayerTxHandlers(db.prisma, settings, log, now);
  let lock: HeldLock | null = null;
  let balanceCheckedAt = 0;
  const { feed } = settings;
  const progress = feed ? new PaymentProgress(db.prisma, chain.chainId) : null;
  const periodic = every(
    options.intervalMs,
    async () => {
      if (lock && !(await lock.alive())) {
        // The server dropped our session and with it the lock: another worker may hold it now.
        log.warn("lost the chain lock (database connection closed); standing by");
        lock = null;
        relayer.resetNonce();
      }
      if (!lock) {
        lock = await db.sql.tryLock(CHAIN_LOCK_BASE + chain.chainId);
        if (!lock) return;
        log.info({ relayer: relayer.address }, "chain runner active");
        await resendStored(db.prisma, relayer);
      }
      let step = await indexer.step();
      for (let i = 1; step.behind && i < CATCH_UP_STEPS; i++) step = await indexer.step();
      await confirmChainMoney(db.prisma, settings, chain.chainId, step.tip, now());
      await confirmRefunds(db.prisma, chain.chainId, step.tip, settings, now());
      // Announcing progress is best effort: a failure here must not hold back settlement.
      if (feed && progress) feed.progressed(await progress.moved(step.tip).catch(() => []));
      await trackRelayerTxs(db.prisma, relayer, step.tip, handlers, { bumpAfterMs: options.bumpAfterMs, now }, log);
      await runDeployments(db.prisma, relayer, log, now());
      await runPayouts(db.prisma, relayer, settings, log, { now, blockedRecheckMs: options.blockedRecheckMs });
      await runRefundAuthorizations(db.prisma, relayer, log);
      await runChargeAuthorizations(db.prisma, relayer, log);
      if (Date.now() - balanceCheckedAt >= balanceCheckMs) {
        balanceCheckedAt = Date.now();
        await checkRelayerBalance(db.prisma, relayer, log, now()).catch((err) => log.warn({ err: (err as Error).message }, "relayer balance check failed"));
      }
    },
    (err) => log.warn({ err: (err as Error).message }, "chain runner tick failed; retrying next tick"),
  );
  return {
    async stop() {
      await periodic.stop();
      await lock?.release();
      relayer.close();
    },
  };
}

/** Records the relayer's gas balance; below the chain's minimum that is an error for the operator. */
async function checkRelayerBalance(prisma: Prisma, relayer: Relayer, log: Logger, at: Date): Promise<void> {
  const { chain } = relayer;
  const balance = await relayer.balance();
  await recordRelayerBalance(prisma, { chainId: chain.chainId, relayerAddress: relayer.address, balance, minBalance: chain.relayerMinBalance, checkedAt: at });
  if (balance < chain.relayerMinBalance) {
    log.error(
      { relayer: relayer.address, balance: formatEther(balance), minimum: formatEther(chain.relayerMinBalance), unit: chain.nativeSymbol },
      "relayer is low on gas money: fund it, or deployments and payouts on this chain will stop",
    );
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
export function relayerTxHandlers(prisma: Prisma, settings: PaymentSettings, logger: Logger, now: () => Date): Record<RelayerTxKind, TxHandlers> {
  return {
    DEPLOY: deploymentHandlers(prisma, logger),
    FLUSH: flushHandlers(prisma, settings, logger, now),
    AUTHORIZATION: authorizationHandlers(prisma, logger),
  };
}
