// One runner per enabled chain and worker process. Only the process holding the chain's advisory
// lock sends transactions for it (one relayer nonce sequence per chain); the others keep asking, and
// take over within a tick when the holder dies and its database session ends.
import type { Logger } from "pino";
import type { EnabledChain } from "../chain/chains.js";
import { Relayer } from "../chain/relayer.js";
import type { Database, HeldLock } from "../db/client.js";
import { runDeployments } from "./deployments.js";
import { every, type Periodic } from "./periodic.js";

/** Advisory-lock keys for chains: a fixed base plus the chain id. */
const CHAIN_LOCK_BASE = 7_300_000_000;

/** Starts the chain's background work (clone deployments) every `intervalMs`. */
export function startChainRunner(db: Database, chain: EnabledChain, logger: Logger, intervalMs: number): Periodic {
  const relayer = new Relayer(chain);
  const log = logger.child({ chainId: chain.chainId });
  let lock: HeldLock | null = null;
  const periodic = every(
    intervalMs,
    async () => {
      if (!lock) {
        lock = await db.sql.tryLock(CHAIN_LOCK_BASE + chain.chainId);
        if (!lock) return;
        log.info({ relayer: relayer.address }, "chain runner active");
      }
      await runDeployments(db.prisma, relayer, log);
    },
    (err) => log.error({ err }, "chain runner tick failed"),
  );
  return {
    async stop() {
      await periodic.stop();
      await lock?.release();
      relayer.close();
    },
  };
}
