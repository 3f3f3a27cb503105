// `stablegate keys create --name`: a key named from the shell, the name shown with it and stored; a name
// over 100 characters refused naming the flag, with nothing made.
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, expect, it } from "vitest";
import { openDatabase } from "../../src/db/client.js";

const dataDir = mkdtempSync(join(tmpdir(), "sg-cli-keys-"));
const env = { ...process.env, DATA_DIR: dataDir, DATABASE_URL: "", REDIS_URL: "", LOG_LEVEL: "warn" };
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

function cli(...args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ["dist/cli/main.js", ...args], { env });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    child.on("close", (code) => resolve({ code, stdout, stderr }));
    child.stdin.end();
  });
}

it("names a key with --name and refuses a name over 100 characters", async () => {
  const merchant = JSON.parse((await cli("merchant", "create", "--name", "Acme", "--json")).stdout).merchant;
  const made = await cli("keys", "create", merchant.id, "--mode", "test", "--name", "Shop backend");
  expect(made.stdout).toMatch(/^sk_test_\w+ {3}\(key_\w+ "Shop backend"; shown once\)/);
  const long = await cli("keys", "create", merchant.id, "--mode", "test", "--name", "n".repeat(101));
  expect(long.code).toBe(1);
  expect(long.stderr).toMatch(/Invalid name: at most 100 characters/);
  const db = await openDatabase({ dataDir, poolSize: 1 });
  try {
    const keys = await db.prisma.apiKey.findMany({ where: { merchantId: merchant.id }, orderBy: { createdAt: "asc" } });
    expect(keys.map((k) => k.name)).toEqual([null, null, "Shop backend"]);
  } finally {
    await db.close();
  }
}, 120_000);
