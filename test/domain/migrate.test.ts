import { cpSync, mkdirSync, mkdtempSync, readdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { ensureMigrated, MIGRATIONS_DIR, migrate, NO_TRANSACTION, PendingMigrationsError, pendingMigrations } from "../../src/db/migrate.js";
import { freshDatabase } from "../helpers/harness.js";

const dbs: { drop(): Promise<void> }[] = [];
afterAll(async () => {
  for (const d of dbs) await d.drop();
});

describe("migrate", () => {
  it("records migrations in _prisma_migrations and applies each once, even run concurrently", async () => {
    const fresh = await freshDatabase();
    dbs.push(fresh);
    expect(await Promise.all([migrate(fresh.db), migrate(fresh.db)])).toEqual([[], []]);
    const rows = await fresh.db.prisma.$queryRaw<
      { migration_name: string; finished_at: Date | null }[]
    >`SELECT migration_name, finished_at FROM "_prisma_migrations"`;
    const names = readdirSync(MIGRATIONS_DIR).filter((n) => /^\d{14}_/.test(n));
    expect(names).toContain("20261122000000_init");
    expect(rows.map((r) => r.migration_name).sort()).toEqual(names.sort());
    expect(rows.every((r) => r.finished_at !== null)).toBe(true);
  });

  it("refuses a migration changed after it was applied, and rolls back a failing one", async () => {
    const fresh = await freshDatabase();
    dbs.push(fresh);
    const dir = mkdtempSync(join(tmpdir(), "sg-mig-"));
    cpSync(MIGRATIONS_DIR, dir, { recursive: true });
    writeFileSync(join(dir, "20261122000000_init", "migration.sql"), "-- edited\n");
    await expect(migrate(fresh.db, dir)).rejects.toThrow(/changed after it was applied/);

    const dir2 = mkdtempSync(join(tmpdir(), "sg-mig-"));
    cpSync(MIGRATIONS_DIR, dir2, { recursive: true });
    cpSync(join(dir2, "20261122000000_init"), join(dir2, "29990101000000_broken"), { recursive: true });
    writeFileSync(join(dir2, "29990101000000_broken", "migration.sql"), 'CREATE TABLE "half_done" (id int);\nSELECT no_such_function();\n');
    await expect(migrate(fresh.db, dir2)).rejects.toThrow(/29990101000000_broken failed/);
    const tables = await fresh.db.prisma.$queryRaw<{ n: bigint }[]>`SELECT count(*) AS n FROM information_schema.tables WHERE table_name = 'half_done'`;
    expect(Number(tables[0]!.n)).toBe(0);
  });

  it("builds an index concurrently outside a transaction, and with auto-migration off names what is pending instead of applying it", async () => {
    const fresh = await freshDatabase();
    dbs.push(fresh);
    const dir = mkdtempSync(join(tmpdir(), "sg-mig-"));
    cpSync(MIGRATIONS_DIR, dir, { recursive: true });
    mkdirSync(join(dir, "29990101000000_concurrent_index"));
    writeFileSync(
      join(dir, "29990101000000_concurrent_index", "migration.sql"),
      `${NO_TRANSACTION}\n-- Built without blocking writes to charges.\nCREATE INDEX CONCURRENTLY IF NOT EXISTS "charges_order_id_test_idx" ON "charges"("order_id");\n`,
    );
    expect(await pendingMigrations(fresh.db, dir)).toEqual(["29990101000000_concurrent_index"]);
    await expect(ensureMigrated(fresh.db, false, dir)).rejects.toThrow(PendingMigrationsError);
    await expect(ensureMigrated(fresh.db, false, dir)).rejects.toThrow(/29990101000000_concurrent_index.*AUTO_MIGRATE is off.*stablegate migrate/);

    // Inside a transaction PostgreSQL would refuse CONCURRENTLY: applying it proves it ran outside one.
    expect(await ensureMigrated(fresh.db, true, dir)).toEqual(["29990101000000_concurrent_index"]);
    const index = await fresh.db.prisma.$queryRaw<{ valid: boolean }[]>`
      SELECT i.indisvalid AS valid FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid WHERE c.relname = 'charges_order_id_test_idx'`;
    expect(index).toEqual([{ valid: true }]);
    expect(await pendingMigrations(fresh.db, dir)).toEqual([]);
    expect(await ensureMigrated(fresh.db, false, dir)).toEqual([]);
  });
});
