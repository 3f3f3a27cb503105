import { cpSync, mkdtempSync, readdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { MIGRATIONS_DIR, migrate } from "../../src/db/migrate.js";
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
});
