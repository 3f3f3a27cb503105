// The workers' membership (the `workers` table): each running worker beats here, and those seen
// recently, by the database's clock, share the chains between them (jobs/chain-share.ts).
import type { Prisma } from "../db/client.js";

/**
 * Records `workerId` as seen now and forgets workers gone longer than `forgetAfterMs`; answers the
 * ids of those seen within `timeoutMs`, sorted.
 */
export async function workerHeartbeat(prisma: Prisma, workerId: string, o: { timeoutMs: number; forgetAfterMs: number }): Promise<string[]> {
  await prisma.$executeRaw`
    INSERT INTO workers (id, started_at, last_seen) VALUES (${workerId}, now(), now())
    ON CONFLICT (id) DO UPDATE SET last_seen = now()`;
  await prisma.$executeRaw`DELETE FROM workers WHERE last_seen < now() - ${o.forgetAfterMs}::int * interval '1 millisecond'`;
  const rows = await prisma.$queryRaw<{ id: string }[]>`
    SELECT id FROM workers WHERE last_seen >= now() - ${o.timeoutMs}::int * interval '1 millisecond' ORDER BY id`;
  return rows.map((r) => r.id);
}

/** A worker that stops cleanly leaves, so the others take its chains at their next look. */
export async function workerLeft(prisma: Prisma, workerId: string): Promise<void> {
  await prisma.$executeRaw`DELETE FROM workers WHERE id = ${workerId}`;
}
