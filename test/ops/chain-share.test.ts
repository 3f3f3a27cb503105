// Worker membership and each worker's share of the chains (jobs/chain-share.ts), on the database
// alone (embedded or PostgreSQL): nothing is taken before a worker knows who is live; alone it takes
// every chain; when a second worker beats, the first gives up exactly its excess, the chains the
// second ranks higher, and neither may take more than ceil(M/N); holding its share it never lets go;
// a worker that leaves or stops beating gives its share back to the others.
import { afterAll, beforeAll, expect, it } from "vitest";
import type { Database } from "../../src/db/client.js";
import { type ChainShare, WORKER_TIMEOUT_MS, startChainShare } from "../../src/jobs/chain-share.js";
import { waitFor } from "../helpers/chain.js";
import { freshDatabase } from "../helpers/harness.js";
import { recordingLogger } from "../helpers/logs.js";

const CHAINS = [1, 10, 137, 8453];
let db: Database;
let drop: () => Promise<void>;
const shares: ChainShare[] = [];

beforeAll(async () => {
  ({ db, drop } = await freshDatabase());
}, 60_000);
afterAll(async () => {
  for (const s of shares) await s.stop();
  await drop?.();
});

function share(id: string): ChainShare {
  const s = startChainShare(db.prisma, id, CHAINS, recordingLogger().logger);
  shares.push(s);
  return s;
}
/** Takes every chain `s` may take now, in order: the ones it got. */
function takeWhatIsAllowed(s: ChainShare, among = CHAINS): number[] {
  const got = among.filter((c) => s.mayTake(c));
  for (const c of got) s.holds(c, true);
  return got;
}
const toRelease = (s: ChainShare) => CHAINS.filter((c) => s.shouldRelease(c));

it("shares four chains two and two, moves only the excess, and gives a leaving worker's share back", async () => {
  const first = share("worker-1");
  // Before its first beat it does not know how many workers there are: it takes nothing.
  expect(first.mayTake(CHAINS[0]!)).toBe(false);
  await waitFor("the first beat", async () => (await db.prisma.worker.count()) === 1);
  // Alone, it may take all four.
  expect(await waitFor("the first worker's view", async () => takeWhatIsAllowed(first).length || undefined)).toBe(4);
  expect(toRelease(first)).toEqual([]);

  const second = share("worker-2");
  await waitFor("the first worker sees the second", async () => toRelease(first).length === 2);
  const handed = toRelease(first);
  // Released (first those the second ranks higher), the first does not take them back, and the second takes them.
  for (const c of handed) first.holds(c, false);
  expect(toRelease(first)).toEqual([]);
  expect(CHAINS.filter((c) => first.mayTake(c))).toEqual([]);
  expect(takeWhatIsAllowed(second, handed)).toEqual(handed);
  expect(CHAINS.filter((c) => second.mayTake(c))).toEqual([]);

  // A third worker that stops beating: the share falls to ceil(4/3) = 2 while it counts, then it is dead.
  await db.prisma.$executeRaw`INSERT INTO workers (id, last_seen) VALUES ('worker-gone', now() - ${WORKER_TIMEOUT_MS - 2000}::int * interval '1 millisecond')`;
  // Holding exactly its share (2 of ceil(4/3)), nobody lets go: no chain moves back and forth.
  await new Promise((r) => setTimeout(r, 2500));
  expect([toRelease(first), toRelease(second)]).toEqual([[], []]);

  // The second leaves cleanly: its row goes, and the first may take what it held.
  await second.stop();
  expect((await db.prisma.worker.findMany()).map((w) => w.id).sort()).toEqual(["worker-1", "worker-gone"]);
  await waitFor("the first worker's share back to four", async () => {
    return takeWhatIsAllowed(first, handed).length === 2;
  });
}, 60_000);
