// Applies the committed SQL migrations in prisma/migrations, recording them in Prisma's own
// `_prisma_migrations` table so `prisma migrate status` agrees with what the service did.
// Invariant: a migration and its record commit together, so a failure leaves no trace.
import { createHash, randomUUID } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import type { Database } from "./client.js";

/** prisma/migrations, found the same way from src/ (tests) and dist/ (built). */
export const MIGRATIONS_DIR = resolve(dirname(fileURLToPath(import.meta.url)), "../../prisma/migrations");

// Arbitrary constant shared by every process that migrates the same database.
const MIGRATION_LOCK = 0x5761_7465;

const TABLE = `CREATE TABLE IF NOT EXISTS "_prisma_migrations" (
  "id" VARCHAR(36) PRIMARY KEY NOT NULL,
  "checksum" VARCHAR(64) NOT NULL,
  "finished_at" TIMESTAMPTZ,
  "migration_name" VARCHAR(255) NOT NULL,
  "logs" TEXT,
  "rolled_back_at" TIMESTAMPTZ,
  "started_at" TIMESTAMPTZ NOT NULL DEFAULT now(),
  "applied_steps_count" INTEGER NOT NULL DEFAULT 0
)`;

/** Raised when the database's migration history disagrees with the committed files. */
export class MigrationError extends Error {
  override name = "MigrationError";
}

interface Migration {
  name: string;
  sql: string;
  checksum: string;
}

/** Reads the migrations in name order. */
export function readMigrations(dir = MIGRATIONS_DIR): Migration[] {
  return readdirSync(dir, { withFileTypes: true })
    .filter((d) => d.isDirectory())
    .map((d) => d.name)
    .sort()
    .map((name) => {
      const sql = readFileSync(join(dir, name, "migration.sql"), "utf8");
      return { name, sql, checksum: createHash("sha256").update(sql).digest("hex") };
    });
}

/** Applies every pending migration; returns the names applied now. Safe to run from many processes at once. */
export async function migrate(db: Database, dir = MIGRATIONS_DIR): Promise<string[]> {
  const migrations = readMigrations(dir);
  return db.sql.withLock(MIGRATION_LOCK, async (conn) => {
    await conn.exec(TABLE);
    const rows = await conn.query<{ migration_name: string; checksum: string; finished_at: Date | null }>(
      `SELECT migration_name, checksum, finished_at FROM "_prisma_migrations" WHERE rolled_back_at IS NULL`,
    );
    const applied = new Map(rows.map((r) => [r.migration_name, r]));
    const done: string[] = [];
    for (const m of migrations) {
      const row = applied.get(m.name);
      if (row) {
        if (!row.finished_at) throw new MigrationError(`Migration ${m.name} was started but never finished; inspect the database, then mark it rolled back.`);
        if (row.checksum !== m.checksum) throw new MigrationError(`Migration ${m.name} was changed after it was applied; restore the original file.`);
        continue;
      }
      await conn.exec("BEGIN");
      try {
        await conn.exec(m.sql);
        await conn.query(
          `INSERT INTO "_prisma_migrations" (id, checksum, finished_at, migration_name, started_at, applied_steps_count)
           VALUES ($1, $2, now(), $3, now(), 1)`,
          [randomUUID(), m.checksum, m.name],
        );
        await conn.exec("COMMIT");
      } catch (e) {
        await conn.exec("ROLLBACK");
        throw new MigrationError(`Migration ${m.name} failed: ${(e as Error).message}`);
      }
      done.push(m.name);
    }
    return done;
  });
}
