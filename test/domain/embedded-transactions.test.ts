// The embedded database's one connection: a transaction that queues behind a long one waits its
// turn instead of failing, and the long one is not rolled back for taking longer than Prisma's
// default 5 s (both held the deep-reorg test hostage once on a loaded CI machine).
import { setTimeout as sleep } from "node:timers/promises";
import { expect, it } from "vitest";
import { openDatabase } from "../../src/db/client.js";

it("a transaction queued behind a 6 s one on the embedded database starts after it, and both commit", async () => {
  const db = await openDatabase({ dataDir: null });
  try {
    const order: string[] = [];
    const long = db.prisma.$transaction(async (tx) => {
      await tx.$queryRaw`SELECT 1`;
      await sleep(6_000);
      order.push("long");
      return "long committed";
    });
    // Asked once the long one holds the connection: Prisma's default would give up after 2 s.
    await sleep(200);
    const queued = db.prisma.$transaction(async (tx) => {
      await tx.$queryRaw`SELECT 1`;
      order.push("queued");
      return "queued committed";
    });
    expect(await Promise.all([long, queued])).toEqual(["long committed", "queued committed"]);
    expect(order).toEqual(["long", "queued"]);
  } finally {
    await db.close();
  }
}, 30_000);
