// `stablegate backup` and `restore` for the embedded database: a backup taken with the service
// stopped restores into another DATA_DIR with everything in it; a running service's database is
// not copied underneath it; an existing database is replaced only with --force, and only by a file
// read back in full (a truncated one changes nothing); PostgreSQL users are sent to pg_dump. And the
// marker: a start that finds a database it recorded empty or gone refuses instead of making a new one.
import { execFile } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { gunzipSync, gzipSync } from "node:zlib";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { openDatabase } from "../../src/db/client.js";
import { migrate } from "../../src/db/migrate.js";
import { createMerchant } from "../../src/domain/merchants.js";
import { WALLET } from "../helpers/harness.js";

const run = promisify(execFile);
const dirs: string[] = [];
const dir = () => {
  const d = mkdtempSync(join(tmpdir(), "sg-backup-"));
  dirs.push(d);
  return d;
};
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

/** Runs the CLI on DATA_DIR `dataDir`; resolves with its exit code and output. */
async function cli(dataDir: string, ...args: string[]): Promise<{ code: number; out: string }> {
  return node("dist/cli/main.js", { DATA_DIR: dataDir, DATABASE_URL: "" }, ...args);
}

/** Runs a built entry point with `env` over this process's; resolves with its exit code and output. */
async function node(script: string, env: Record<string, string>, ...args: string[]): Promise<{ code: number; out: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [script, ...args], { env: { ...process.env, REDIS_URL: "", LOG_LEVEL: "silent", ...env } });
    return { code: 0, out: stdout + stderr };
  } catch (e) {
    const failed = e as { code: number; stdout: string; stderr: string };
    return { code: failed.code, out: failed.stdout + failed.stderr };
  }
}

it("backs up with the service stopped and restores into another DATA_DIR, only with --force over a database", async () => {
  const source = dir();
  const db = await openDatabase({ dataDir: source });
  await migrate(db);
  const created = await createMerchant(db.prisma, { name: "Backed Up", testWallet: WALLET }, { feeBps: 100 });
  // While a process holds the database, no backup is taken underneath it.
  const held = await cli(source, "backup", "--out", join(source, "no.tgz"));
  expect(held.code).toBe(1);
  expect(held.out).toMatch(/in use by another Stablegate process/);
  await db.close();

  const file = join(dir(), "stablegate.tgz");
  const backup = await cli(source, "backup", "--out", file);
  expect(backup.code, backup.out).toBe(0);

  const target = dir();
  expect((await cli(target, "restore", file)).code).toBe(0);
  const again = await cli(target, "restore", file);
  expect(again.code).toBe(1);
  expect(again.out).toMatch(/already holds a database.*--force/);
  expect((await cli(target, "restore", file, "--force")).code).toBe(0);
  const shown = await cli(target, "merchant", "show", created.merchant.id, "--json");
  expect(JSON.parse(shown.out).merchant.name).toBe("Backed Up");
}, 120_000);

it("refuses a file that is not a backup, and sends PostgreSQL users to pg_dump", async () => {
  const junk = join(dir(), "junk.tgz");
  writeFileSync(junk, "not a tarball");
  const restored = await cli(dir(), "restore", junk);
  expect(restored.code).toBe(1);
  const env = { ...process.env, DATABASE_URL: "postgresql://postgres@127.0.0.1:5432/test" };
  const pg = await run(process.execPath, ["dist/cli/main.js", "backup", "--out", junk], { env }).catch((e) => e);
  expect(pg.code).toBe(1);
  expect(pg.stderr).toMatch(/pg_dump/);
}, 60_000);

it("restores only a file read back in full: a truncated or damaged one leaves the live database as it was", async () => {
  const source = dir();
  const db = await openDatabase({ dataDir: source });
  await migrate(db);
  const created = await createMerchant(db.prisma, { name: "Kept", testWallet: WALLET }, { feeBps: 100 });
  await db.close();
  const file = join(dir(), "good.tgz");
  expect((await cli(source, "backup", "--out", file)).code).toBe(0);

  const gzipped = readFileSync(file);
  const truncated = join(dir(), "truncated.tgz");
  writeFileSync(truncated, gzipped.subarray(0, Math.floor(gzipped.length / 2)));
  // A whole gzip stream around half an archive: only reading the archive to its end finds it.
  const halfArchive = join(dir(), "half-archive.tgz");
  const tar = gunzipSync(gzipped);
  writeFileSync(halfArchive, gzipSync(tar.subarray(0, Math.floor(tar.length / 1024) * 512)));

  for (const [bad, why] of [
    [truncated, /truncated or not a gzip archive.*nothing was changed/s],
    [halfArchive, /truncated\).*nothing was changed/s],
  ] as const) {
    const refused = await cli(source, "restore", bad, "--force");
    expect(refused.code, refused.out).toBe(1);
    expect(refused.out).toMatch(why);
    const shown = await cli(source, "merchant", "show", created.merchant.id, "--json");
    expect(shown.code, shown.out).toBe(0);
    expect(JSON.parse(shown.out).merchant.name).toBe("Kept");
  }
  // Nothing of the attempts is left beside the database.
  expect(readdirSync(source).filter((f) => f.startsWith("pglite."))).toEqual([]);
}, 180_000);

it("refuses to start on an embedded database that is gone instead of making an empty one", async () => {
  const dataDir = dir();
  const made = await cli(dataDir, "merchant", "create", "--name", "Recorded", "--test-wallet", WALLET);
  expect(made.code, made.out).toBe(0);
  expect(JSON.parse(readFileSync(join(dataDir, "stablegate-database.json"), "utf8")).databases).toHaveProperty("embedded");
  rmSync(join(dataDir, "pglite"), { recursive: true, force: true });

  const listed = await cli(dataDir, "merchant", "list");
  expect(listed.code).toBe(1);
  expect(listed.out).toMatch(/embedded database in .*pglite.* is empty\. Nothing was created in it\. Restore a backup/);
  const served = await node("dist/main.js", { DATA_DIR: dataDir, DATABASE_URL: "", PORT: "0", DEVNET: "false", LOG_LEVEL: "info" });
  expect(served.code).toBe(1);
  expect(served.out).toMatch(/"level":60.*is empty\. Nothing was created in it/);
  expect(existsSync(join(dataDir, "pglite"))).toBe(false);
}, 120_000);

describe.runIf(process.env.DATABASE_URL)("a PostgreSQL database is known by what it is, not by how the URL spells its host", () => {
  // The body is collected even when the suite does not run (no DATABASE_URL): no URL to parse then.
  const base = new URL(process.env.DATABASE_URL ?? "postgresql://unused");
  const admin = async (sql: string) => {
    const c = new pg.Client({ connectionString: base.toString() });
    await c.connect();
    await c.query(sql).finally(() => c.end());
  };
  /** `name`'s URL with `host` (and the rest) changed; the password is one trust auth ignores, to be found in no message or marker. */
  const at = (name: string, host: string, search = "") => {
    const url = new URL(base);
    url.pathname = `/${name}`;
    url.hostname = host;
    url.password = "S3cretPassw0rd";
    url.search = search;
    return url.toString();
  };
  const names: string[] = [];
  const database = async () => {
    const name = `sg_marker_${Date.now().toString(36)}_${names.length}`;
    names.push(name);
    await admin(`CREATE DATABASE ${name}`);
    return name;
  };
  /** The volume lost: an empty database of the same name on the same server. */
  const wipe = async (name: string) => {
    await admin(`DROP DATABASE ${name} WITH (FORCE)`);
    await admin(`CREATE DATABASE ${name}`);
  };
  afterAll(async () => {
    for (const name of names) await admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  });

  it("refuses an emptied database at the address it was migrated at, naming it without its password", async () => {
    const name = await database();
    const dataDir = dir();
    const env = { DATA_DIR: dataDir, DATABASE_URL: at(name, base.hostname) };
    expect((await node("dist/cli/main.js", env, "migrate")).code).toBe(0);
    const recorded = Object.values(JSON.parse(readFileSync(join(dataDir, "stablegate-database.json"), "utf8")).databases) as { system: string; name: string }[];
    const [[system]] = (await query(base.toString(), "SELECT system_identifier::text FROM pg_control_system()")) as [[string]];
    expect(recorded).toEqual([expect.objectContaining({ system, name })]);
    await wipe(name);
    const refused = await node("dist/cli/main.js", env, "merchant", "list");
    expect(refused.code).toBe(1);
    expect(refused.out).toMatch(
      new RegExp(`PostgreSQL database ${name} on server ${system} \\(at ${base.hostname}:${base.port || 5432}/${name}\\) .* is empty`),
    );
    expect(refused.out + readFileSync(join(dataDir, "stablegate-database.json"), "utf8")).not.toContain("S3cret");
    const worker = await node("dist/worker.js", { ...env, RELAYER_PRIVATE_KEY: `0x${"11".repeat(32)}`, WORKER_PORT: "0", LOG_LEVEL: "info" });
    expect(worker.code).toBe(1);
    expect(worker.out).toMatch(/is empty\. Nothing was created in it/);
    expect(worker.out).not.toContain("S3cret");
  }, 120_000);

  it("refuses it under every other name of the same server: localhost, 127.0.0.1, a socket, query parameters", async () => {
    const name = await database();
    const dataDir = dir();
    expect((await node("dist/cli/main.js", { DATA_DIR: dataDir, DATABASE_URL: at(name, "127.0.0.1") }, "migrate")).code).toBe(0);
    await wipe(name);
    const spellings = [
      at(name, "localhost"),
      at(name, "LocalHost", "?application_name=other&connect_timeout=5"),
      // The server's own socket, where it has one here: no host name at all.
      ...(existsSync(`/var/run/postgresql/.s.PGSQL.${base.port || 5432}`) ? [at(name, "localhost", "?host=/var/run/postgresql")] : []),
      at(name, "127.0.0.1"),
    ];
    for (const url of spellings) {
      const refused = await node("dist/cli/main.js", { DATA_DIR: dataDir, DATABASE_URL: url }, "merchant", "list");
      expect(refused.code, url).toBe(1);
      expect(refused.out, url).toMatch(`PostgreSQL database ${name} on server`);
      expect(refused.out, url).toMatch(/is empty\. Nothing was created in it/);
    }
    // Nothing was migrated under any of them.
    expect(await query(at(name, "127.0.0.1"), "SELECT to_regclass('\"_prisma_migrations\"')::text")).toEqual([[null]]);
  }, 120_000);

  it("a new server at a recorded address is refused too (a wiped volume), while another database on the server starts", async () => {
    const name = await database();
    const dataDir = dir();
    expect((await node("dist/cli/main.js", { DATA_DIR: dataDir, DATABASE_URL: at(name, "localhost") }, "migrate")).code).toBe(0);
    const marker = join(dataDir, "stablegate-database.json");
    const written = JSON.parse(readFileSync(marker, "utf8"));
    // As if the volume had been wiped: the server the address reaches now has another identifier.
    for (const entry of Object.values(written.databases) as { system: string }[]) entry.system = "1";
    writeFileSync(marker, JSON.stringify(written));
    await wipe(name);
    const refused = await node("dist/cli/main.js", { DATA_DIR: dataDir, DATABASE_URL: at(name, "127.0.0.1") }, "merchant", "list");
    expect(refused.code, refused.out).toBe(1);
    expect(refused.out).toMatch(/is empty\. Nothing was created in it/);

    const other = await database();
    const started = await node("dist/cli/main.js", { DATA_DIR: dataDir, DATABASE_URL: at(other, "127.0.0.1") }, "migrate");
    expect(started.code, started.out).toBe(0);
  }, 120_000);

  it("still honours a marker written by an earlier release (keyed by host:port/name)", async () => {
    const name = await database();
    const dataDir = dir();
    writeFileSync(
      join(dataDir, "stablegate-database.json"),
      JSON.stringify({ about: "", databases: { [`postgresql://127.0.0.1:${base.port || 5432}/${name}`]: { since: "2026-01-01T00:00:00.000Z" } } }),
    );
    const refused = await node("dist/cli/main.js", { DATA_DIR: dataDir, DATABASE_URL: at(name, "localhost") }, "merchant", "list");
    expect(refused.code, refused.out).toBe(1);
    expect(refused.out).toMatch(/since 2026-01-01T00:00:00.000Z is empty\. Nothing was created in it/);
  }, 120_000);
});

/** Rows of one statement on `url`, as arrays. */
async function query(url: string, sql: string): Promise<unknown[][]> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return (await c.query({ text: sql, rowMode: "array" })).rows;
  } finally {
    await c.end();
  }
}
