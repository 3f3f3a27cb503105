// The dispatcher in the real service process, killed with SIGKILL while a receiver holds its
// request open: after a restart the delivery is completed (same webhook-id, same body), not lost.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { type Database, openDatabase } from "../../src/db/client.js";
import { migrate } from "../../src/db/migrate.js";
import { createMerchant } from "../../src/domain/merchants.js";
import { waitFor } from "../helpers/chain.js";
import { freshDatabase, WALLET } from "../helpers/harness.js";
import { type Receiver, startReceiver } from "../helpers/receiver.js";
import { apiClient, type ServiceProcess, spawnService } from "../helpers/service-process.js";

let env: NodeJS.ProcessEnv;
let dataDir: string;
let pg: Awaited<ReturnType<typeof freshDatabase>> | null = null;
let key: string;
let receiver: Receiver;
const running = new Set<ServiceProcess>();

beforeAll(async () => {
  receiver = await startReceiver();
  dataDir = mkdtempSync(join(tmpdir(), "sg-hooks-"));
  env = { ...process.env, NODE_ENV: "test", LOG_LEVEL: "info", PORT: "0", DATA_DIR: dataDir, REDIS_URL: "", DEVNET: "false" };
  let db: Database;
  if (process.env.DATABASE_URL) {
    pg = await freshDatabase();
    db = pg.db;
    env.DATABASE_URL = pg.url;
  } else {
    env.DATABASE_URL = "";
    db = await openDatabase({ dataDir });
    await migrate(db);
  }
  const merchant = await createMerchant(db.prisma, { name: "Hook Shop", testWallet: WALLET, testWebhookUrl: receiver.url }, { feeBps: 100 });
  key = merchant.apiKeys.test.secret;
  // The embedded database belongs to one process at a time: the service's, from here on.
  if (!pg) await db.close();
}, 60_000);
afterAll(async () => {
  for (const p of running) p.child.kill("SIGKILL");
  await receiver?.close();
  await pg?.drop();
  rmSync(dataDir, { recursive: true, force: true });
});

function start(): ServiceProcess {
  const p = spawnService("dist/main.js", env);
  running.add(p);
  void p.exited.then(() => running.delete(p));
  return p;
}

it("completes a delivery whose dispatcher was killed mid-request, after a restart", async () => {
  let svc = start();
  let url = (await svc.waitFor(/"url":"(http:[^"]+)"/))[1]!;
  const api = apiClient(() => url, key);
  // The first request is held open until the process that sent it is gone.
  let calls = 0;
  receiver.respond((_r, res) => {
    if (++calls > 1) res.writeHead(200).end("ok");
  });
  await api("POST", "/v1/customers", { email: "crash@example.com", name: "Crash" });
  const [first] = await receiver.waitForCount(1);
  svc.child.kill("SIGKILL");
  expect(await svc.exited).toBeNull();

  svc = start();
  url = (await svc.waitFor(/"url":"(http:[^"]+)"/))[1]!;
  const [, second] = await receiver.waitForCount(2, 30_000);
  expect(second!.headers["webhook-id"]).toBe(first!.headers["webhook-id"]);
  expect(second!.body).toBe(first!.body);
  const event = await waitFor("the delivery recorded", async () => {
    const e = await api("GET", `/v1/events/${first!.headers["webhook-id"]}`);
    return e.deliveries?.[0]?.status === "succeeded" ? e : undefined;
  });
  // The killed attempt left no record; the one that reached the receiver did.
  expect(event.deliveries[0].attempts).toEqual([expect.objectContaining({ statusCode: 200, succeeded: true })]);
  svc.child.kill("SIGTERM");
  expect(await svc.exited).toBe(0);
  // Counted once the service has exited (a drain lets what is in flight finish): nothing was sent a third time.
  expect(receiver.received).toHaveLength(2);
}, 60_000);
