// A restore never makes a merchant ship twice: backup → payments → restore → start, on a real anvil
// with a webhook receiver. The indexer re-reads the blocks since the backup and completes those
// charges again, under the same event ids (the same webhook-id), so a merchant who deduplicates on
// webhook-id fulfils each order once; and the same fact gives the same id, a different one another.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseUnits } from "ethers";
import { pino } from "pino";
import { afterAll, beforeAll, expect, it } from "vitest";
import { ChainSet, type EnabledChain } from "../../src/chain/chains.js";
import { ChainRpc } from "../../src/chain/rpc.js";
import { loadConfig } from "../../src/config.js";
import { backupEmbedded, restoreEmbedded } from "../../src/db/backup.js";
import { type Database, openDatabase } from "../../src/db/client.js";
import { migrate } from "../../src/db/migrate.js";
import { eventId, recordEvents } from "../../src/domain/events.js";
import { looksLikeId } from "../../src/domain/ids.js";
import { createMerchant } from "../../src/domain/merchants.js";
import { startChainRunner } from "../../src/jobs/chain-runner.js";
import { findUnknownDeposits } from "../../src/jobs/reconcile.js";
import { type Dispatcher, startWebhookDispatcher } from "../../src/jobs/webhook-dispatcher.js";
import type { Periodic } from "../../src/lib/periodic.js";
import { blockProducer, startTestChain, type TestChain, waitFor } from "../helpers/chain.js";
import { buildTestApp, freshDatabase, POLLING, SETTINGS, type TestService, UNLIMITED_ADDRESS, WALLET } from "../helpers/harness.js";
import { type Receiver, startReceiver } from "../helpers/receiver.js";

const usdc = (s: string) => parseUnits(s, 6);
const logger = pino({ level: process.env.TEST_LOG ?? "silent" });

let chain: TestChain;
let devnet: EnabledChain;
let receiver: Receiver;
let dataDir: string;
let key: string;
const producer = { stop: () => {} };

/** One running service: API, indexer and dispatcher over the embedded database in `dataDir`. */
interface Running {
  db: Database;
  app: TestService;
  url: string;
  runner: Periodic;
  dispatcher: Dispatcher;
}
let running: Running | null = null;

async function start(): Promise<Running> {
  const db = await openDatabase({ dataDir });
  await migrate(db);
  const config = loadConfig({ NODE_ENV: "test", LOG_LEVEL: "silent", REDIS_URL: "", PORT: "0", ...UNLIMITED_ADDRESS, ...POLLING });
  const app = await buildTestApp(config, { db, chains: new ChainSet([devnet]) });
  const url = await app.start(0);
  const runner = startChainRunner(db, devnet, logger, { intervalMs: 50, settings: SETTINGS, bumpAfterMs: 60_000 });
  const dispatcher = startWebhookDispatcher(db.prisma, logger, { intervalMs: 20 });
  running = { db, app, url, runner, dispatcher };
  return running;
}

async function stop(): Promise<void> {
  if (!running) return;
  const { db, app, runner, dispatcher } = running;
  running = null;
  await dispatcher.stop();
  await runner.stop();
  await app.stop();
  await db.close();
}

beforeAll(async () => {
  chain = await startTestChain();
  devnet = await chain.enabled(2);
  receiver = await startReceiver();
  dataDir = mkdtempSync(join(tmpdir(), "sg-restore-"));
  const db = await openDatabase({ dataDir });
  await migrate(db);
  const merchant = await createMerchant(db.prisma, { name: "Ships Once", testWallet: WALLET, testWebhookUrl: receiver.url }, { feeBps: 100 });
  key = merchant.apiKeys.test.secret;
  await db.close();
  const blocks = blockProducer(() => chain.mine());
  blocks.start();
  producer.stop = blocks.stop;
}, 60_000);
afterAll(async () => {
  producer.stop();
  await stop();
  await receiver?.close();
  await chain?.stop();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

async function call(method: string, path: string, body?: unknown, auth: string | null = key) {
  const res = await fetch(running!.url + path, {
    method,
    headers: { ...(auth && { "x-api-key": auth }), ...(body !== undefined && { "content-type": "application/json" }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: await res.json() };
}

let seq = 0;
async function payableCharge(amount = "25"): Promise<{ id: string; clone: string }> {
  const charge = (await call("POST", "/v1/charges", { orderId: `restore-${++seq}`, amount })).body;
  const picked = await call("POST", `/v1/public/charges/${charge.id}/chain`, { chainId: devnet.chainId }, null);
  expect(picked.status, JSON.stringify(picked.body)).toBe(200);
  return { id: charge.id, clone: picked.body.cloneAddress };
}
const completed = (id: string) =>
  waitFor(`charge ${id} COMPLETED`, async () => {
    const c = (await call("GET", `/v1/charges/${id}`)).body;
    return c.status === "COMPLETED" && c.flushTxHash !== null ? c : undefined;
  });

/** The receiver's deliveries as (webhook-id, type, object id). */
const delivered = () =>
  receiver.received.map((r) => {
    const body = JSON.parse(r.body) as { id: string; type: string; data: { id: string } };
    expect(r.headers["webhook-id"]).toBe(body.id);
    return { id: body.id, type: body.type, object: body.data.id };
  });
/** Waits until the receiver has a `type` delivery about `object`, and returns every such id so far. */
const idsOf = async (object: string, type: string) => {
  await waitFor(`${type} of ${object} delivered`, async () => delivered().some((d) => d.object === object && d.type === type));
  return new Set(
    delivered()
      .filter((d) => d.object === object && d.type === type)
      .map((d) => d.id),
  );
};

it("re-derives the events of payments made since the backup under their first ids: no second charge.completed id", async () => {
  await start();
  // Before the backup: one charge paid and completed, one waiting for its buyer.
  const before = await payableCharge();
  await chain.pay(chain.wallet(3), before.clone, usdc("25"));
  await completed(before.id);
  const waiting = await payableCharge("40");
  await idsOf(before.id, "charge.completed");
  await stop();
  const backupBlock = BigInt(await chain.provider.getBlockNumber());
  const file = join(mkdtempSync(join(tmpdir(), "sg-restore-file-")), "backup.tgz");
  await backupEmbedded(dataDir, file);

  // Since the backup: the waiting charge is paid in two parts (partial, then received) and a new one in full.
  await start();
  await chain.pay(chain.wallet(4), waiting.clone, usdc("15"));
  await idsOf(waiting.id, "charge.partial");
  await chain.pay(chain.wallet(4), waiting.clone, usdc("25"));
  const after = await payableCharge("30");
  await chain.pay(chain.wallet(5), after.clone, usdc("30"));
  await completed(waiting.id);
  await completed(after.id);
  const first = new Map<string, Set<string>>();
  for (const [object, type] of [
    [waiting.id, "charge.partial"],
    [waiting.id, "charge.received"],
    [waiting.id, "charge.completed"],
  ] as const)
    first.set(`${object} ${type}`, await idsOf(object, type));
  await stop();

  // The documented restore, then start: the indexer reads the blocks since the backup again.
  await restoreEmbedded(dataDir, file, { force: true });
  const countBefore = receiver.received.length;
  await start();
  await completed(waiting.id);
  // Its charge.completed is delivered again (its outbox row was lost with the database) …
  await waitFor("the re-derived charge.completed delivered", async () =>
    receiver.received.slice(countBefore).some((r) => JSON.parse(r.body).type === "charge.completed"),
  );
  // … under the id the merchant already has, as is every event of the payments since the backup.
  for (const [k, ids] of first) {
    const [object, type] = k.split(" ") as [string, string];
    expect(await idsOf(object, type), k).toEqual(ids);
  }
  // Every transition of every charge reached the endpoint under one id; the charge created after the
  // backup is unknown to the restored database (its events stay as they were sent).
  const ids = new Map<string, Set<string>>();
  for (const d of delivered()) {
    const k = `${d.object} ${d.type}`;
    if (!ids.has(k)) ids.set(k, new Set());
    ids.get(k)!.add(d.id);
  }
  for (const [k, set] of ids) expect(set.size, k).toBe(1);
  expect(ids.get(`${before.id} charge.completed`)?.size).toBe(1);
  expect((await call("GET", `/v1/charges/${after.id}`)).status).toBe(404);
  // The restored database holds each event once, and nothing is left to deliver twice.
  const rows = await running!.db.prisma.event.findMany({ where: { type: "charge.completed" } });
  expect(rows.map((e) => (e.data as { id: string }).id).sort()).toEqual([before.id, waiting.id].sort());

  // The money of the charge the restored database does not know is reported (`reconcile --unknown-since`):
  // its address, paid out through our factory to the merchant's wallet, the amount net of the fee.
  const rpc = new ChainRpc(devnet.chainId, devnet.rpcUrls);
  try {
    const merchantId = (await running!.db.prisma.merchant.findFirstOrThrow()).id;
    const unknown = await waitFor("the confirmed payout of the unknown charge", async () => {
      const found = await findUnknownDeposits(running!.db.prisma, rpc, devnet, backupBlock);
      return found.length > 0 ? found : undefined;
    });
    expect(unknown).toEqual([
      { chainId: devnet.chainId, address: after.clone.toLowerCase(), merchantId, amount: usdc("29.7"), txHashes: [expect.stringMatching(/^0x/)] },
    ]);
  } finally {
    rpc.destroy();
  }
}, 240_000);

it("gives the same fact the same event id, and a different fact or a random event another", () => {
  const scope = { merchantId: "mer_123", livemode: false };
  const event = (cause?: string, type: "charge.completed" | "charge.received" = "charge.completed", id = "chrg_1") => ({
    scope,
    type,
    data: { id, status: "COMPLETED" },
    ...(cause !== undefined && { cause }),
  });
  const a = eventId(event("RECEIVED→COMPLETED 31337:0xabc:…:0#0"));
  expect(looksLikeId("evt", a)).toBe(true);
  expect(eventId(event("RECEIVED→COMPLETED 31337:0xabc:…:0#0"))).toBe(a);
  // Data beside the object's id does not enter: the same fact derived later, with newer fields.
  expect(eventId({ ...event("RECEIVED→COMPLETED 31337:0xabc:…:0#0"), data: { id: "chrg_1", status: "X" } })).toBe(a);
  for (const other of [
    event("RECEIVED→COMPLETED 31337:0xabc:…:0#1"),
    event("RECEIVED→COMPLETED 31337:0xabd:…:0#0"),
    event("RECEIVED→COMPLETED 31337:0xabc:…:0#0", "charge.received"),
    event("RECEIVED→COMPLETED 31337:0xabc:…:0#0", "charge.completed", "chrg_2"),
    { ...event("RECEIVED→COMPLETED 31337:0xabc:…:0#0"), scope: { ...scope, livemode: true } },
    { ...event("RECEIVED→COMPLETED 31337:0xabc:…:0#0"), scope: { ...scope, merchantId: "mer_456" } },
  ])
    expect(eventId(other)).not.toBe(a);
  // Without a cause (an API request), every event is new.
  expect(eventId(event())).not.toBe(eventId(event()));
  expect(looksLikeId("evt", eventId(event()))).toBe(true);
});

it("records an event whose derived id exists as a no-op: no second row, no second delivery", async () => {
  const { db, drop } = await freshDatabase();
  try {
    const { merchant } = await createMerchant(db.prisma, { name: "Once", testWallet: WALLET, testWebhookUrl: "http://127.0.0.1:9/hooks" }, { feeBps: 100 });
    const scope = { merchantId: merchant.id, livemode: false };
    const completed = { scope, type: "charge.completed" as const, data: { id: "chrg_x" }, cause: "RECEIVED→COMPLETED 31337:0xabc#0" };
    const first = await db.prisma.$transaction((tx) => recordEvents(tx, [completed]));
    expect(first).toHaveLength(1);
    // Derived again (a crash before the cursor moved, a reorg replay): nothing new, nothing announced.
    const again = await db.prisma.$transaction((tx) =>
      recordEvents(tx, [completed, { ...completed, type: "charge.received", cause: "PENDING→RECEIVED 31337:0xabd#0" }]),
    );
    expect(again.map((e) => e.type)).toEqual(["charge.received"]);
    expect(await db.prisma.event.count({ where: { id: first[0]!.id } })).toBe(1);
    expect(await db.prisma.webhookDelivery.count({ where: { eventId: first[0]!.id } })).toBe(1);
    expect(await db.prisma.webhookDelivery.count()).toBe(2);
  } finally {
    await drop();
  }
});
