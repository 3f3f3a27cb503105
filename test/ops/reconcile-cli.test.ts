// Where `stablegate reconcile` works: on the embedded database the devnet is never within its reach
// (it runs only inside `npm start`, which holds the database), so it says so and where the devnet is
// reconciled instead, whether the service runs or not, rather than failing on a lock or a dead RPC.
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, expect, it } from "vitest";
import { openDatabase } from "../../src/db/client.js";

const run = promisify(execFile);
const dataDir = mkdtempSync(join(tmpdir(), "sg-reconcile-"));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

async function reconcile(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const env = { ...process.env, DATA_DIR: dataDir, DATABASE_URL: "", REDIS_URL: "", LOG_LEVEL: "silent", NODE_ENV: "development" };
  try {
    const { stdout, stderr } = await run(process.execPath, ["dist/cli/main.js", "reconcile", ...args], { env });
    return { code: 0, stdout, stderr };
  } catch (e) {
    return e as { code: number; stdout: string; stderr: string };
  }
}

const WHERE =
  /^Error: The devnet runs only inside `npm start`, which holds the embedded database while it runs: its worker reconciles the devnet every RECONCILE_INTERVAL_MS .* On the embedded database `stablegate reconcile` works with the service stopped, on the chains CHAIN_<id>_RPC_URL enables; on PostgreSQL it works beside the running service, its devnet included\.\n$/;

it("on the embedded database with the service stopped: says where the devnet is reconciled, in one line, no stack", async () => {
  for (const args of [[], ["--chain", "31337"], ["--json"]]) {
    const { code, stdout, stderr } = await reconcile(...args);
    expect(code, args.join(" ")).toBe(1);
    expect(stdout).toBe("");
    expect(stderr, args.join(" ")).toMatch(WHERE);
  }
}, 60_000);

it("beside a process that holds the embedded database: the same answer, not a lock error", async () => {
  const held = await openDatabase({ dataDir });
  try {
    const { code, stderr } = await reconcile();
    expect(code).toBe(1);
    expect(stderr).toMatch(WHERE);
    expect(stderr).not.toMatch(/in use by another Stablegate process/);
  } finally {
    await held.close();
  }
}, 60_000);
