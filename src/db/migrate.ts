// Applies the committed SQL migrations in prisma/migrations, recording them in Prisma's own
// `_prisma_migrations` table so `prisma migrate status` agrees with what the service did.
// Invariant: a migration and its record commit together, so a failure leaves no trace. The one
// exception is a migration that starts with NO_TRANSACTION: statements that cannot run in a
// transaction (CREATE INDEX CONCURRENTLY, which builds an index on a large table without blocking
// its writes), each run on its own, one per line ending in a semicolon; each must be safe to run
// again (IF NOT EXISTS), since a failure part-way leaves the ones before it done.
// A database with no migration applied yet (a first start) gets the baseline instead: every migration
// at once, in one transaction, all recorded. It is derived from the migrations themselves, so it cannot
// drift from them; test/domain/migrate-baseline.test.ts proves it yields the step-by-step schema.
import { createHash } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import type { Database, SqlConnection } from "./client.js";

/** prisma/migrations, found the same way from src/ (tests) and dist/ (built). */
export const MIGRATIONS_DIR = resolve(dirname(fileURLToPath(import.meta.url)), "../../prisma/migrations");

/**
 * The migrator's own version, recorded by the embedded template (template.ts). Bump it with any change
 * here that changes what a migrated database holds (the history table, what the baseline records or
 * creates), so that the build makes the template again instead of keeping one this code would not make.
 */
export const MIGRATOR_FORMAT = 1;

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

/** The first line of a migration whose statements run one by one, outside a transaction. */
export const NO_TRANSACTION = "-- stablegate: no-transaction";

export interface Migration {
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

/** Raised at start when AUTO_MIGRATE is off and the database lacks migrations this release needs. */
export class PendingMigrationsError extends MigrationError {
  override name = "PendingMigrationsError";
  constructor(readonly pending: string[]) {
    super(
      `The database lacks ${pending.length} migration(s) this release needs (${pending.join(", ")}) and AUTO_MIGRATE is off: ` +
        "run `stablegate migrate` (docker compose run --rm migrate) first.",
    );
  }
}

/** The migrations not applied yet, after checking that the applied ones are the committed files. */
async function unapplied(conn: SqlConnection, migrations: Migration[]): Promise<Migration[]> {
  await conn.exec(TABLE);
  const rows = await conn.query<{ migration_name: string; checksum: string; finished_at: Date | null }>(
    `SELECT migration_name, checksum, finished_at FROM "_prisma_migrations" WHERE rolled_back_at IS NULL`,
  );
  const applied = new Map(rows.map((r) => [r.migration_name, r]));
  return migrations.filter((m) => {
    const row = applied.get(m.name);
    if (!row) return true;
    if (!row.finished_at) throw new MigrationError(`Migration ${m.name} was started but never finished; inspect the database, then mark it rolled back.`);
    if (row.checksum !== m.checksum) throw new MigrationError(`Migration ${m.name} was changed after it was applied; restore the original file.`);
    return false;
  });
}

/** The names of the migrations not applied yet (checked as `migrate` checks them, nothing applied). */
export async function pendingMigrations(db: Database, dir = MIGRATIONS_DIR): Promise<string[]> {
  const migrations = readMigrations(dir);
  return db.sql.withLock(MIGRATION_LOCK, async (conn) => (await unapplied(conn, migrations)).map((m) => m.name));
}

/**
 * Makes sure the database has every migration: applies the pending ones when `apply` (returning
 * their names), otherwise refuses with PendingMigrationsError when any is missing.
 */
export async function ensureMigrated(db: Database, apply: boolean, dir = MIGRATIONS_DIR): Promise<string[]> {
  if (apply) return migrate(db, dir);
  const pending = await pendingMigrations(db, dir);
  if (pending.length > 0) throw new PendingMigrationsError(pending);
  return [];
}

/**
 * Applies every pending migration; returns the names applied now. Safe to run from many processes at once.
 * `stepByStep` applies them one by one even on an empty database (the baseline's tests).
 */
export async function migrate(db: Database, dir = MIGRATIONS_DIR, { stepByStep = false } = {}): Promise<string[]> {
  const migrations = readMigrations(dir);
  return db.sql.withLock(MIGRATION_LOCK, async (conn) => {
    const pending = await unapplied(conn, migrations);
    if (!stepByStep && pending.length > 0 && (await historyIsEmpty(conn))) return applyBaseline(conn, pending);
    const done: string[] = [];
    for (const m of pending) {
      const record = () => recordApplied(conn, [m]);
      if (m.sql.startsWith(NO_TRANSACTION)) {
        for (const statement of statements(m.sql)) {
          await conn.exec(statement).catch((e: Error) => {
            throw new MigrationError(
              `Migration ${m.name} failed at "${statement.slice(0, 80)}": ${e.message}. An index it left INVALID must be dropped (DROP INDEX CONCURRENTLY) before it is run again.`,
            );
          });
        }
        await record();
      } else {
        await conn.exec("BEGIN");
        try {
          await conn.exec(m.sql);
          await record();
          await conn.exec("COMMIT");
        } catch (e) {
          await conn.exec("ROLLBACK");
          throw new MigrationError(`Migration ${m.name} failed: ${(e as Error).message}`);
        }
      }
      done.push(m.name);
    }
    return done;
  });
}

/** Records `applied` as applied now, in one statement. */
async function recordApplied(conn: SqlConnection, applied: Migration[]): Promise<void> {
  await conn.query(
    `INSERT INTO "_prisma_migrations" (id, checksum, finished_at, migration_name, started_at, applied_steps_count)
     SELECT gen_random_uuid()::text, checksum, now(), name, now(), 1 FROM unnest($1::text[], $2::text[]) AS m(name, checksum)`,
    [applied.map((m) => m.name), applied.map((m) => m.checksum)],
  );
}

/** Whether the database has never recorded a migration (not even one rolled back): a first start. */
async function historyIsEmpty(conn: SqlConnection): Promise<boolean> {
  const [row] = await conn.query<{ empty: boolean }>(`SELECT NOT EXISTS (SELECT 1 FROM "_prisma_migrations") AS empty`);
  return row?.empty === true;
}

/**
 * The baseline: the whole schema of `migrations` as one script. A NO_TRANSACTION migration's indexes are
 * built plainly (without CONCURRENTLY, which a transaction refuses): on an empty database nothing waits
 * for them.
 */
export function baselineSql(migrations: Migration[]): string {
  return migrations
    .map((m) =>
      m.sql.startsWith(NO_TRANSACTION)
        ? statements(m.sql)
            .map((s) => `${s.replace(/\bCONCURRENTLY\s+/i, "")};`)
            .join("\n")
        : m.sql,
    )
    .join("\n;\n");
}

/** Applies `migrations` to an empty database at once, in one transaction with their records; returns their names. */
async function applyBaseline(conn: SqlConnection, migrations: Migration[]): Promise<string[]> {
  await conn.exec("BEGIN");
  try {
    await conn.exec(baselineSql(migrations));
    await recordApplied(conn, migrations);
    await conn.exec("COMMIT");
  } catch (e) {
    await conn.exec("ROLLBACK");
    throw new MigrationError(`The baseline (every migration at once, on an empty database) failed: ${(e as Error).message}`);
  }
  return migrations.map((m) => m.name);
}

/** The statements of a NO_TRANSACTION migration: comment lines dropped, one statement per line ending in ";". */
function statements(sql: string): string[] {
  return sql
    .split("\n")
    .filter((line) => !line.trimStart().startsWith("--"))
    .join("\n")
    .split(/;\s*$/m)
    .map((s) => s.trim())
    .filter((s) => s !== "");
}
