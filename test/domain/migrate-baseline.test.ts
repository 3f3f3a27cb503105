// A database with no migration applied gets the baseline (every migration at once, in one
// transaction); an older one still migrates step by step. Both, and a first start from the build's
// embedded template, must give the same schema: on PGlite always, on PostgreSQL too when
// DATABASE_URL names a server (each test database is created with a name of its own and dropped).
import { spawnSync } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { type Database, openDatabase } from "../../src/db/client.js";
import { MIGRATIONS_DIR, MIGRATOR_FORMAT, migrate, readMigrations } from "../../src/db/migrate.js";
import { readTemplate, writeTemplate } from "../../src/db/template.js";
import { freshDatabase } from "../helpers/harness.js";

const scratch = mkdtempSync(join(tmpdir(), "sg-baseline-"));
const dropped: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const drop of dropped) await drop();
  rmSync(scratch, { recursive: true, force: true });
});

type Backend = "pglite" | "postgres";
const BACKENDS: Backend[] = process.env.DATABASE_URL ? ["pglite", "postgres"] : ["pglite"];

/** An empty database (no migration applied) on `backend`, dropped after the tests. */
async function emptyDatabase(backend: Backend): Promise<Database> {
  if (backend === "pglite") {
    const db = await openDatabase({ dataDir: null });
    dropped.push(() => db.close());
    return db;
  }
  const fresh = await freshDatabase(undefined, false);
  dropped.push(() => fresh.drop());
  return fresh.db;
}

/** Any advisory lock key: reading the catalog needs one connection, nothing to exclude. */
const SCHEMA_READ_LOCK = 0x5343_4845;

/** Everything a migration can define, in a comparable form: tables, columns, indexes, constraints, types, functions, triggers, views, sequences. */
async function schemaOf(db: Database): Promise<Record<string, unknown[]>> {
  // The driver's own rows: Prisma cannot read some catalog types (the "char" of contype).
  const q = (sql: string) => db.sql.withLock(SCHEMA_READ_LOCK, (conn) => conn.query<unknown>(sql));
  return {
    columns: await q(`SELECT table_name, column_name, ordinal_position, data_type, udt_name, character_maximum_length, numeric_precision, numeric_scale,
        column_default, is_nullable, is_identity, is_generated, generation_expression
      FROM information_schema.columns WHERE table_schema = 'public' ORDER BY table_name, ordinal_position`),
    indexes: await q(`SELECT tablename, indexname, indexdef FROM pg_indexes WHERE schemaname = 'public' ORDER BY indexname`),
    validIndexes: await q(`SELECT c.relname, i.indisvalid, i.indisready FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
      JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'public' ORDER BY c.relname`),
    constraints: await q(`SELECT conrelid::regclass::text AS on_table, conname, contype, convalidated, pg_get_constraintdef(oid) AS definition
      FROM pg_constraint WHERE connamespace = 'public'::regnamespace ORDER BY conrelid::regclass::text, conname`),
    enums: await q(`SELECT t.typname, array_agg(e.enumlabel::text ORDER BY e.enumsortorder) AS labels FROM pg_type t JOIN pg_enum e ON e.enumtypid = t.oid
      WHERE t.typnamespace = 'public'::regnamespace GROUP BY t.typname ORDER BY t.typname`),
    functions: await q(`SELECT p.proname, pg_get_functiondef(p.oid) AS definition FROM pg_proc p
      WHERE p.pronamespace = 'public'::regnamespace AND p.prokind IN ('f', 'p') ORDER BY p.proname, definition`),
    triggers: await q(`SELECT tgrelid::regclass::text AS on_table, tgname, pg_get_triggerdef(oid) AS definition FROM pg_trigger
      WHERE NOT tgisinternal ORDER BY on_table, tgname`),
    views: await q(`SELECT viewname, definition FROM pg_views WHERE schemaname = 'public' ORDER BY viewname`),
    sequences: await q(
      `SELECT sequence_name, data_type, start_value, increment FROM information_schema.sequences WHERE sequence_schema = 'public' ORDER BY sequence_name`,
    ),
  };
}

/** The migrations recorded, with when each began: one transaction's rows share their `now()`. */
async function history(db: Database): Promise<{ name: string; startedAt: number }[]> {
  const rows = await db.prisma.$queryRawUnsafe<{ migration_name: string; started_at: Date }[]>(
    `SELECT migration_name, started_at FROM "_prisma_migrations" WHERE finished_at IS NOT NULL ORDER BY migration_name`,
  );
  return rows.map((r) => ({ name: r.migration_name, startedAt: r.started_at.getTime() }));
}

const ALL = readMigrations().map((m) => m.name);

/** The installed PGlite's version, read from its own package.json. */
const installedPglite = (JSON.parse(readFileSync("node_modules/@electric-sql/pglite/package.json", "utf8")) as { version: string }).version;

/** A template whose bytes cannot be read: its load fails. */
class Unreadable extends Blob {
  override async arrayBuffer(): Promise<ArrayBuffer> {
    throw new Error("unreadable");
  }
}

/** A process that opens an empty DATA_DIR with a template and is killed (SIGKILL) while PGlite loads it (the built client). */
const DIE_LOADING_TEMPLATE = `
import { openDatabase } from "./dist/db/client.js";
class Dying extends Blob {
  async arrayBuffer() {
    process.kill(process.pid, "SIGKILL");
    await new Promise(() => {});
  }
}
await openDatabase({ dataDir: process.env.DATA_DIR, template: () => new Dying([]) });
`;
// Several databases migrated per test: minutes on a busy machine.
const SLOW = 300_000;

describe.each(BACKENDS)("the baseline on %s", (backend) => {
  it(
    "gives an empty database every migration at once, all recorded, with the schema step-by-step migration gives",
    async () => {
      const [baseline, stepwise] = [await emptyDatabase(backend), await emptyDatabase(backend)];
      expect(await migrate(baseline)).toEqual(ALL);
      const recorded = await history(baseline);
      expect(recorded.map((r) => r.name)).toEqual(ALL);
      // One transaction: every record has the same start.
      expect(new Set(recorded.map((r) => r.startedAt)).size).toBe(1);
      expect(await migrate(baseline)).toEqual([]);

      expect(await migrate(stepwise, MIGRATIONS_DIR, { stepByStep: true })).toEqual(ALL);
      expect(new Set((await history(stepwise)).map((r) => r.startedAt)).size).toBeGreaterThan(1);

      const [a, b] = [await schemaOf(baseline), await schemaOf(stepwise)];
      expect(a.columns!.length).toBeGreaterThan(100);
      expect(a.indexes!.length).toBeGreaterThan(20);
      expect(a).toEqual(b);
    },
    SLOW,
  );

  it(
    "migrates an older database (up to an earlier migration) step by step to the same schema",
    async () => {
      const older = join(scratch, `older-${backend}`);
      mkdirSync(older);
      const upTo = ALL.indexOf("20261204030000_charge_search");
      for (const name of ALL.slice(0, upTo + 1)) cpSync(join(MIGRATIONS_DIR, name), join(older, name), { recursive: true });
      const [upgraded, baseline] = [await emptyDatabase(backend), await emptyDatabase(backend)];
      await migrate(upgraded, older, { stepByStep: true });

      const later = ALL.slice(upTo + 1);
      expect(await migrate(upgraded)).toEqual(later);
      const recorded = await history(upgraded);
      expect(recorded.map((r) => r.name)).toEqual(ALL);
      // Step by step: each later migration in a transaction of its own.
      expect(new Set(recorded.filter((r) => later.includes(r.name)).map((r) => r.startedAt)).size).toBeGreaterThan(1);

      await migrate(baseline);
      expect(await schemaOf(upgraded)).toEqual(await schemaOf(baseline));
    },
    SLOW,
  );
});

describe("the embedded template a first start begins from", () => {
  it(
    "holds every migration and the step-by-step schema, and is used only for an empty directory with exactly its migrations",
    async () => {
      const out = join(scratch, "template");
      mkdirSync(out);
      await writeTemplate(out);
      const template = readTemplate(out);
      expect(template).not.toBeNull();

      const dataDir = join(scratch, "first-start");
      let asked = 0;
      const started = await openDatabase({ dataDir, template: () => (asked++, template) });
      expect(asked).toBe(1);
      expect((await history(started)).map((r) => r.name)).toEqual(ALL);
      expect(await migrate(started)).toEqual([]);
      const stepwise = await emptyDatabase("pglite");
      await migrate(stepwise, MIGRATIONS_DIR, { stepByStep: true });
      expect(await schemaOf(started)).toEqual(await schemaOf(stepwise));
      await started.prisma.$executeRawUnsafe(`CREATE TABLE "kept" (id int)`);
      await started.close();

      // A database already there is opened as it is, never replaced by the template.
      const reopened = await openDatabase({ dataDir, template: () => (asked++, template) });
      expect(asked).toBe(1);
      expect(await reopened.prisma.$queryRawUnsafe(`SELECT count(*)::int AS n FROM "kept"`)).toEqual([{ n: 0 }]);
      await reopened.close();

      // A start killed while loading the template leaves its staging directory beside pglite/; the
      // operator then restores a database into pglite/. The next start keeps that database (the template
      // is not asked for) and removes the staging directory.
      const interrupted = join(scratch, "interrupted");
      const killed = spawnSync(process.execPath, ["--input-type=module", "-e", DIE_LOADING_TEMPLATE], {
        env: { ...process.env, DATA_DIR: interrupted },
        encoding: "utf8",
      });
      expect(killed.signal, killed.stderr).toBe("SIGKILL");
      expect(readdirSync(interrupted).filter((f) => f.startsWith("pglite."))).not.toEqual([]);
      rmSync(join(interrupted, "pglite"), { recursive: true, force: true });
      cpSync(join(dataDir, "pglite"), join(interrupted, "pglite"), { recursive: true });
      const restored = await openDatabase({ dataDir: interrupted, template: () => (asked++, template) });
      expect(asked).toBe(1);
      expect(await restored.prisma.$queryRawUnsafe(`SELECT count(*)::int AS n FROM "kept"`)).toEqual([{ n: 0 }]);
      await restored.close();
      expect(readdirSync(interrupted).filter((f) => f.startsWith("pglite."))).toEqual([]);

      // A template that does not load: the start goes on from an empty database (initdb), says so, and
      // leaves nothing of the attempt; the migrations then fill it.
      const fallback = join(scratch, "fallback");
      const failures: Error[] = [];
      const empty = await openDatabase({ dataDir: fallback, template: () => new Unreadable([]), onTemplateFailed: (e) => failures.push(e) });
      expect(failures).toHaveLength(1);
      expect(readdirSync(fallback).filter((f) => f.startsWith("pglite."))).toEqual([]);
      expect(await migrate(empty)).toEqual(ALL);
      await empty.close();

      // The manifest names the installed PGlite and the migrator's format, and vouches for its dump
      // only whole: one cut short (an interrupted build) is not used, and the build makes it again.
      const manifest = JSON.parse(readFileSync(join(out, "template.json"), "utf8")) as Record<string, unknown>;
      expect(manifest).toMatchObject({ pglite: installedPglite, migrator: MIGRATOR_FORMAT, sha256: expect.stringMatching(/^[0-9a-f]{64}$/) });
      const cut = join(scratch, "cut-template");
      cpSync(out, cut, { recursive: true });
      const whole = readFileSync(join(cut, "template.tar.gz"));
      writeFileSync(join(cut, "template.tar.gz"), whole.subarray(0, whole.length >> 1));
      expect(readTemplate(cut)).toBeNull();

      // A template made from other migrations (a migration added or changed since) is not used.
      const changed = join(scratch, "changed-migrations");
      cpSync(MIGRATIONS_DIR, changed, { recursive: true });
      mkdirSync(join(changed, "29990101000000_later"));
      writeFileSync(join(changed, "29990101000000_later", "migration.sql"), `CREATE TABLE "later" (id int);\n`);
      expect(readTemplate(out, changed)).toBeNull();
      expect(readTemplate(join(scratch, "nowhere"))).toBeNull();
      expect(readdirSync(out).sort()).toEqual(["template.json", "template.tar.gz"]);
    },
    SLOW,
  );
});
