// `stablegate users …`: dashboard users managed from the shell, the password read from standard input.
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, expect, it } from "vitest";
import { openDatabase } from "../../src/db/client.js";
import { verifyPassword } from "../../src/domain/passwords.js";

const dataDir = mkdtempSync(join(tmpdir(), "sg-cli-users-"));
const env = { ...process.env, DATA_DIR: dataDir, DATABASE_URL: "", REDIS_URL: "", LOG_LEVEL: "warn" };
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

/** Runs the CLI with `input` on standard input. */
function cli(input: string, ...args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ["dist/cli/main.js", ...args], { env });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    child.on("close", (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(input);
  });
}

it("creates, lists, resets and deletes dashboard users; the password comes from standard input and is never stored", async () => {
  const merchant = JSON.parse((await cli("", "merchant", "create", "--name", "Acme", "--json")).stdout).merchant;
  const tooTolerant = await cli("", "merchant", "update", merchant.id, "--underpayment-tolerance-bps", "2000");
  expect(tooTolerant.stderr).toMatch(/Invalid underpaymentToleranceBps: must be 0-1000 \(--underpayment-tolerance-bps\)/);
  await cli("", "merchant", "update", merchant.id, "--underpayment-tolerance-bps", "50", "--payment-window-minutes", "30");
  expect((await cli("", "merchant", "show", merchant.id)).stdout).toMatch(/payment window 30 min, underpayment tolerance 50 bps/);

  const short = await cli("short\n", "users", "create", merchant.id, "--email", "ops@acme.example");
  expect(short.code).toBe(1);
  expect(short.stderr).toMatch(/Invalid password: must be at least 10 characters \(the password on standard input\)/);
  const noEmail = await cli("long enough password\n", "users", "create", merchant.id);
  expect(noEmail.stderr).toMatch(/--email is required/);

  const created = await cli("long enough password\n", "users", "create", merchant.id, "--email", "Ops@Acme.example");
  expect(created.stdout).toMatch(/^User usr_\w{24} <ops@acme\.example> \(owner\) can sign in at the dashboard\./);
  const taken = await cli("another long password\n", "users", "create", merchant.id, "--email", "ops@acme.example");
  expect(taken.stderr).toMatch(/Invalid email: it cannot be given a new account; use another\. \(--email\)/);
  expect(created.stdout).toMatch(/\(owner\)/);
  expect((await cli("long enough password\n", "users", "create", merchant.id, "--email", "help@acme.example", "--role", "root")).stderr).toMatch(
    /Invalid role: must be one of owner, admin, developer, support, viewer \(--role\)/,
  );
  expect((await cli("long enough password\n", "users", "create", merchant.id, "--email", "help@acme.example", "--role", "support")).stdout).toMatch(
    /<help@acme\.example> \(support\)/,
  );
  const list = (await cli("", "users", "list", merchant.id)).stdout;
  expect(list).toMatch(/usr_\w{24}\s+owner\s+ops@acme\.example/);
  expect(list).toMatch(/usr_\w{24}\s+support\s+help@acme\.example/);
  // The operator may do anything but leave the merchant without an owner.
  expect((await cli("", "users", "set-role", "ops@acme.example", "viewer")).stderr).toMatch(/only owner: make another user an owner/);
  expect((await cli("", "users", "set-role", "help@acme.example", "boss")).stderr).toMatch(/ROLE must be one of owner, admin, developer, support, viewer/);
  expect((await cli("", "users", "set-role", "help@acme.example", "owner")).stdout).toMatch(/help@acme\.example \(usr_\w{24}\) is now owner\./);
  expect((await cli("", "users", "set-role", "ops@acme.example", "viewer")).stdout).toMatch(/is now viewer/);
  expect((await cli("", "users", "delete", "help@acme.example")).stderr).toMatch(/only owner/);
  expect((await cli("", "users", "set-role", "ops@acme.example", "owner")).stdout).toMatch(/is now owner/);
  expect((await cli("", "users", "delete", "help@acme.example")).stdout).toMatch(/Deleted help@acme\.example/);
  expect((await cli("a new long password\r\n", "users", "reset-password", "ops@acme.example")).stdout).toMatch(/New password set for ops@acme\.example/);

  const db = await openDatabase({ dataDir, poolSize: 1 });
  try {
    const user = await db.prisma.user.findUniqueOrThrow({ where: { email: "ops@acme.example" } });
    expect(await verifyPassword("a new long password", user.passwordHash)).toBe(true);
    expect(user.passwordHash).not.toContain("a new long password");
    const reset = await db.prisma.securityEvent.findFirstOrThrow({ where: { type: "password_reset" }, orderBy: { createdAt: "desc" } });
    expect(reset).toMatchObject({ userId: null, ip: null, detail: { userId: user.id, email: "ops@acme.example", by: "operator" } });
  } finally {
    await db.close();
  }
  expect((await cli("", "users", "delete", "ops@acme.example")).stdout).toMatch(/Deleted ops@acme\.example/);
  expect((await cli("", "users", "delete", "ops@acme.example")).stderr).toMatch(/No such user/);
  // 23 CLI processes one after another, each opening the embedded database (4-7 s on a loaded host).
}, 300_000);
