// One runner per enabled chain and worker process. Only the process holding the chain's advisory
// lock works on it (one indexer and one relayer nonce sequence per chain); the others keep asking,
// and take over within a tick when the holder dies and its database session ends. Each tick, in
// order: clone deployments, the indexer (new blocks, reorgs), payment confirmations, settlement.
import { Transaction } from "ethers";
import type { Logger } from "pino";
import type { EnabledChain } from "../chain/chains.js";
import { indexStep } from "../chain/indexer.js";
import { Relayer } from "../chain/relayer.js";
import type { Database, HeldLock, Prisma } from "../db/client.js";
import { chargesAwaitingConfirmations, confirmPayments, type PaymentSettings } from "../domain/payments.js";
import type { ChargeRef } from "../domain/live.js";
import { runDeployments } from "./deployments.js";
import { runFlushes } from "./flushes.js";
import { every, type Periodic } from "./periodic.js";

/** Advisory-lock keys for chains: a fixed base plus the chain id. */
const CHAIN_LOCK_BASE = 7_300_000_000;
/** Index steps per tick when far behind, before settling what they found. */
const CATCH_UP_STEPS = 10;

export interface ChainRunnerOptions {
  intervalMs: number;
  settings: PaymentSettings;
  /** How long a deployment or flush may stay unmined before it is replaced with higher fees. */
  bumpAfterMs: number;
  now?: () => Date;
}

/** Starts the chain's background work every `intervalMs`. */
export function startChainRunner(db: Database, chain: EnabledChain, logger: Logger, options: ChainRunnerOptions): Periodic {
  const { now = () => new Date(), settings } = options;
  const relayer = new Relayer(chain);
  const log = logger.child({ chainId: chain.chainId });
  let lock: HeldLock | null = null;
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
        await resendStored(db, relayer);
      }
      await runDeployments(db.prisma, relayer, log, { bumpAfterMs: options.bumpAfterMs });
      let step = await indexStep(db.prisma, relayer.provider, chain, log);
      for (let i = 1; step.behind && i < CATCH_UP_STEPS; i++) step = await indexStep(db.prisma, relayer.provider, chain, log);
      await confirmPayments(db.prisma, settings, chain.chainId, step.tip, now());
      // Announcing progress is best effort: a failure here must not hold back settlement.
      if (feed && progress) feed.progressed(await progress.moved(step.tip).catch(() => []));
      await runFlushes(db.prisma, relayer, settings, step.tip, log, { bumpAfterMs: options.bumpAfterMs, now });
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

/**
 * Sends again, in nonce order, every transaction a previous holder stored but may not have
 * broadcast (it may have died in between), so new transactions do not wait behind a nonce gap.
 */
async function resendStored(db: Database, relayer: Relayer): Promise<void> {
  const chainId = relayer.chain.chainId;
  const [deployments, flushes] = await Promise.all([
    db.prisma.cloneDeployment.findMany({ where: { chainId, status: "SENT" }, select: { rawTx: true } }),
    db.prisma.flush.findMany({ where: { chainId, status: "SENT" }, select: { rawTx: true } }),
  ]);
  const raws = [...deployments, ...flushes].flatMap((r) => (r.rawTx ? [r.rawTx] : []));
  raws.sort((a, b) => Transaction.from(a).nonce - Transaction.from(b).nonce);
  // Failures are fine here: each job re-sends or replaces its own transaction when it runs.
  for (const raw of raws) await relayer.broadcast(raw).catch(() => false);
}
