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
/** Each share's log lines, by worker id. */
const logs = new Map<string, ReturnType<typeof recordingLogger>>();

beforeAll(async () => {
  ({ db, drop } = await freshDatabase());
}, 60_000);
afterAll(async () => {
  for (const s of shares) await s.stop();
  await drop?.();
});

function share(id: string): ChainShare {
  const log = recordingLogger();
  logs.set(id, log);
  const s = startChainShare(db.prisma, id, CHAINS, log.logger);
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
/** The views of who is live that worker `id` changed to, in order (its "workers changed" lines). */
const views = (id: string) =>
  logs
    .get(id)!
    .lines()
    .filter((l) => l.msg.startsWith("workers changed"))
    .map((l) => (l.workers as string[]).join());

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
  await db.prisma.$executeRaw`INSERT INTO workers (id, last_seen) VALUES ('worker-gone', now())`;
  // Holding exactly its share (2 of ceil(4/3)), nobody lets go while it counts, nor once it is dead: no
  // chain moves back and forth.
  const [three, two] = ["worker-1,worker-2,worker-gone", "worker-1,worker-2"];
  await waitFor("both workers counting the third", async () => ["worker-1", "worker-2"].every((id) => views(id).at(-1) === three));
  expect([toRelease(first), toRelease(second)]).toEqual([[], []]);
  // Its last beat now lies further back than the timeout.
  await db.prisma.$executeRaw`UPDATE workers SET last_seen = now() - ${WORKER_TIMEOUT_MS + 1000}::int * interval '1 millisecond' WHERE id = 'worker-gone'`;
  await waitFor("both workers seeing the third dead", async () => ["worker-1", "worker-2"].every((id) => views(id).slice(-2).join(" ") === `${three} ${two}`));
  expect([toRelease(first), toRelease(second)]).toEqual([[], []]);

  // The second leaves cleanly: its row goes, and the first may take what it held.
  await second.stop();
  expect((await db.prisma.worker.findMany()).map((w) => w.id).sort()).toEqual(["worker-1", "worker-gone"]);
  await waitFor("the first worker's share back to four", async () => {
    return takeWhatIsAllowed(first, handed).length === 2;
  });
}, 60_000);
