// `stablegate backup` and `restore` for the embedded database: a backup taken with the service
// stopped restores into another DATA_DIR with everything in it; a running service's database is
// not copied underneath it; an existing database is replaced only with --force; PostgreSQL users are
// sent to pg_dump.
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, expect, it } from "vitest";
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
  const env = { ...process.env, DATA_DIR: dataDir, DATABASE_URL: "", REDIS_URL: "", LOG_LEVEL: "silent" };
  try {
    const { stdout, stderr } = await run(process.execPath, ["dist/cli/main.js", ...args], { env });
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
