// Worker membership, and each worker's fair share of the chains. Workers coordinate through
// PostgreSQL only: every worker beats in the `workers` table every HEARTBEAT_MS; those seen within
// WORKER_TIMEOUT_MS (by the database's clock, so hosts' clocks do not matter) are live.
//
// Invariants:
// - Safety never rests on membership: a chain is worked only under its session advisory lock
//   (chain-runner.ts), so a stale or wrong view of who is live can unbalance the chains, never make
//   two workers run one.
// - With N live workers and M chains, a worker tries locks only while it holds (or is trying) fewer
//   than ceil(M/N), and lets go of the excess, after the chain's current step, only while it holds
//   more: holding exactly its share it does nothing, whichever chains they are (no flapping).
// - Which chains it lets go of is decided by rendezvous hashing of (chain, worker): first those
//   another live worker ranks higher, so every worker agrees where a released chain should go.
// - A dead worker's locks end with its database connections; its chains go to the others once its
//   heartbeat is WORKER_TIMEOUT_MS old (before that their share is still counted with it). A worker
//   that stops cleanly deletes its row, so the others take its chains at their next poll.
import { createHash, randomBytes } from "node:crypto";
import { hostname } from "node:os";
import type { Logger } from "pino";
import type { Prisma } from "../db/client.js";
import { workerHeartbeat, workerLeft } from "../domain/workers.js";
import { every, type Periodic } from "../lib/periodic.js";

/** How often a worker beats and re-reads who is live. */
export const HEARTBEAT_MS = 2_000;
/** A worker unseen this long is dead: three missed beats. */
export const WORKER_TIMEOUT_MS = 3 * HEARTBEAT_MS;
/** Rows of workers gone this long are deleted (nothing reads them; they only show recent restarts). */
const FORGET_AFTER_MS = 3_600_000;

/** This worker's view of its share of the chains, consulted by each chain's runner. */
export interface ChainShare {
  /** This worker's id in the `workers` table and in /metrics (`host-pid-random`: new at each start). */
  readonly workerId: string;
  /** Reserves a try at `chainId`'s lock: false while this worker holds (or tries) its share, or before it knows who is live. */
  mayTake(chainId: number): boolean;
  /** Ends a try or a hold: `held` is whether this worker holds `chainId`'s lock now. */
  holds(chainId: number, held: boolean): void;
  /** Whether this worker holds more than its share and `chainId` is one it should give up. */
  shouldRelease(chainId: number): boolean;
  /** Stops beating and deletes this worker's row, so the others take its chains at once. */
  stop(): Promise<void>;
}

/** A fresh worker id: the host and process, and a random part so a reused pid is a new worker. */
export function newWorkerId(): string {
  return `${hostname()}-${process.pid}-${randomBytes(3).toString("hex")}`;
}

/** Starts beating for `workerId` and keeps its share of `chainIds` up to date. */
export function startChainShare(prisma: Prisma, workerId: string, chainIds: readonly number[], logger: Logger): ChainShare {
  const log = logger.child({ worker: workerId });
  let live: string[] | null = null;
  const held = new Set<number>();
  const trying = new Set<number>();
  const share = () => (live ? Math.ceil(chainIds.length / Math.max(live.length, 1)) : 0);
  const periodic: Periodic = every(
    HEARTBEAT_MS,
    async () => {
      const seen = await workerHeartbeat(prisma, workerId, { timeoutMs: WORKER_TIMEOUT_MS, forgetAfterMs: FORGET_AFTER_MS });
      // This worker is live whatever a slow beat says: it is the one asking.
      const next = seen.includes(workerId) ? seen : [...seen, workerId].sort();
      if (live && next.join() !== live.join())
        log.info({ workers: next, share: Math.ceil(chainIds.length / next.length) }, "workers changed; sharing the chains again");
      live = next;
    },
    (err) => log.warn({ err: (err as Error).message }, "worker heartbeat failed; keeping the last view of who is live"),
  );
  return {
    workerId,
    mayTake(chainId) {
      if (held.has(chainId) || trying.has(chainId) || held.size + trying.size >= share()) return false;
      trying.add(chainId);
      return true;
    },
    holds(chainId, isHeld) {
      trying.delete(chainId);
      if (isHeld) held.add(chainId);
      else held.delete(chainId);
    },
    shouldRelease(chainId) {
      if (!live || !held.has(chainId) || held.size <= share()) return false;
      return releaseOrder([...held], workerId, live)
        .slice(0, held.size - share())
        .includes(chainId);
    },
    async stop() {
      await periodic.stop();
      await workerLeft(prisma, workerId).catch(() => {});
    },
  };
}

/** A worker's rendezvous score for a chain: the highest-scoring live worker is where the chain belongs. */
function score(chainId: number, workerId: string): bigint {
  return createHash("sha256").update(`${chainId}:${workerId}`).digest().readBigUInt64BE(0);
}

/** `held` in the order to give them up: first those another live worker scores higher, then by this worker's score, lowest first. */
function releaseOrder(held: readonly number[], workerId: string, live: readonly string[]): number[] {
  const belongsElsewhere = (c: number) => live.some((w) => w !== workerId && score(c, w) > score(c, workerId));
  const key = (c: number): [number, bigint] => [belongsElsewhere(c) ? 0 : 1, score(c, workerId)];
  return [...held].sort((a, b) => {
    const [ka, kb] = [key(a), key(b)];
    return ka[0] - kb[0] || (ka[1] < kb[1] ? -1 : ka[1] > kb[1] ? 1 : 0);
  });
}
