// The first `npm start` on an empty data dir: it begins from the build's migrated template (no
// migration left to run, every one recorded at once), and the demo merchant's credentials are never
// lost: a first start that cannot listen (its port taken) keeps them in DATA_DIR, readable by this user
// only, the next start prints them and deletes the file, and no start after prints them again.
import { existsSync, mkdtempSync, rmSync, statSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { openDatabase } from "../../src/db/client.js";
import { readMigrations } from "../../src/db/migrate.js";
import { demoCredentialsPath } from "../../src/demo.js";
import { type ServiceProcess, spawnService } from "../helpers/service-process.js";

const dataDir = mkdtempSync(join(tmpdir(), "sg-first-start-"));
const env = { ...process.env, DATA_DIR: dataDir, WORKER_PORT: "0", DATABASE_URL: "", REDIS_URL: "", LOG_LEVEL: "info", RUN_WORKER: "false" };
let running: ServiceProcess | undefined;
let blocker: Server | undefined;

afterAll(async () => {
  running?.child.kill("SIGTERM");
  await running?.exited;
  blocker?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

/** Starts dist/main.js on `port` and waits for it to listen or exit; returns the process. */
async function start(port: number): Promise<ServiceProcess> {
  const service = spawnService("dist/main.js", { ...env, PORT: String(port) });
  running = service;
  await Promise.race([service.waitFor(/stablegate listening/, 120_000).catch(() => {}), service.exited]);
  return service;
}

async function stop(service: ServiceProcess): Promise<void> {
  service.child.kill("SIGTERM");
  expect(await service.exited).toBe(0);
  running = undefined;
}

const KEY = /Test API key \(shown once, keep it\): (sk_test_\w+)/;

describe("the first npm start", () => {
  it("begins from the template, and prints the demo credentials on the next start when the first could not listen, then never again", async () => {
    blocker = createServer();
    await new Promise<void>((resolve) => blocker!.listen(0, "127.0.0.1", resolve));
    const taken = (blocker.address() as { port: number }).port;

    const failed = await start(taken);
    expect(await failed.exited).not.toBe(0);
    expect(failed.output()).toMatch(/EADDRINUSE/);
    // One line that names the setting and where the credentials wait, not a bare stack.
    expect(failed.output()).toMatch(/cannot listen on [^"]+ \(PORT\)[^"]*demo-credentials\.json/);
    expect(failed.output()).not.toMatch(KEY);
    // Nothing migrated: the template held every migration.
    expect(failed.output()).not.toMatch(/database migrated/);
    const kept = demoCredentialsPath(dataDir);
    expect(statSync(kept).mode & 0o777).toBe(0o600);
    blocker.close();
    blocker = undefined;

    const db = await openDatabase({ dataDir });
    // A first start interrupted after keeping the credentials and before creating the dashboard user
    // (its password hash is slow): the next start creates the user before printing its password.
    await db.prisma.user.deleteMany({ where: { email: "demo@example.com" } });
    const rows = await db.prisma.$queryRawUnsafe<{ migration_name: string; started_at: Date }[]>(
      `SELECT migration_name, started_at FROM "_prisma_migrations" ORDER BY migration_name`,
    );
    await db.close();
    expect(rows.map((r) => r.migration_name)).toEqual(readMigrations().map((m) => m.name));
    expect(new Set(rows.map((r) => r.started_at.getTime())).size).toBe(1);

    const second = await start(0);
    const key = KEY.exec(second.output())?.[1];
    expect(key).toBeDefined();
    expect(second.output()).toMatch(/Dashboard sign-in \(shown once\): demo@example\.com \/ \S+/);
    expect(existsSync(kept)).toBe(false);
    const url = /"url":"(http:[^"]+)"/.exec(second.output())![1]!;
    const charges = await fetch(`${url}/v1/charges`, { headers: { "x-api-key": key! } });
    expect(charges.status).toBe(200);
    const [, email, password] = /Dashboard sign-in \(shown once\): (\S+) \/ (\S+)/.exec(second.output())!;
    const signIn = await fetch(`${url}/dashboard/session`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ email, password }),
    });
    expect(signIn.status).toBe(201);
    await stop(second);

    const third = await start(0);
    expect(third.output()).toMatch(/stablegate listening/);
    expect(third.output()).not.toMatch(/Demo merchant created|sk_test_/);
    await stop(third);
  }, 300_000);
});
