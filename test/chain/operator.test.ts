// What an operator is told: the relayer's gas against its minimum (/readyz, an error log line,
// /metrics, one email a day to ALERT_EMAIL), payouts stopped after our flushes kept failing (an error log line, one
// charge.payout_blocked, /metrics, `payouts retry`), and RPC URLs (they carry provider keys) that
// never reach a log line, an error or the database.
import { parseEther, toQuantity } from "ethers";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ChainSet, type EnabledChain } from "../../src/chain/chains.js";
import { ChargeTransitionError, nextStatus } from "../../src/domain/charges/lifecycle.js";
import { newId } from "../../src/domain/ids.js";
import { claimForFlush, dueClones, MAX_FLUSH_FAILURES, releaseFlush, retryPayout } from "../../src/domain/payouts.js";
import { startChainRunner } from "../../src/jobs/chain-runner.js";
import { startTestChain, type TestChain, waitFor } from "../helpers/chain.js";
import { POLLING, SETTINGS, startApp, type TestApp } from "../helpers/harness.js";
import { recordingLogger } from "../helpers/logs.js";
import { type RpcProxy, startRpcProxy } from "../helpers/rpc-proxy.mjs";

const METRICS_TOKEN = "metrics-t0ken-for-tests";

let chain: TestChain;
let devnet: EnabledChain;
let app: TestApp;
let producer: NodeJS.Timeout | undefined;
let orders = 0;

beforeAll(async () => {
  chain = await startTestChain();
  devnet = await chain.enabled(2);
  app = await startApp({ ...POLLING, METRICS_TOKEN }, { chains: new ChainSet([devnet]) });
}, 60_000);
afterAll(async () => {
  clearInterval(producer);
  await app?.stop();
  await chain?.stop();
});

const metrics = async () => (await app.call("GET", "/metrics", { key: null, headers: { authorization: `Bearer ${METRICS_TOKEN}` } })).text;
const readyz = async () => (await app.call("GET", "/readyz", { key: null })).body;

describe("/metrics", () => {
  it("needs METRICS_TOKEN as a bearer token when it is set", async () => {
    const none = await app.call("GET", "/metrics", { key: null });
    expect(none.status).toBe(401);
    expect(none.headers.get("www-authenticate")).toBe("Bearer");
    expect((await app.call("GET", "/metrics", { key: null, headers: { authorization: "Bearer wrong" } })).status).toBe(401);
    const ok = await app.call("GET", "/metrics", { key: null, headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
    expect(ok.status).toBe(200);
    expect(ok.headers.get("content-type")).toMatch(/^text\/plain/);
    expect(ok.text).toContain("# TYPE stablegate_payouts_blocked gauge");
  });
});

describe("the relayer's gas", () => {
  it("below CHAIN_<id>_RELAYER_MIN_BALANCE: an error log line, /readyz degraded with the reason, /metrics low = 1; funded again: all clear", async () => {
    const { logger, lines } = recordingLogger();
    const demanding = { ...devnet, relayerMinBalance: parseEther("20000") }; // anvil accounts hold 10,000 ETH
    const relayer = chain.deployer.address;
    const runner = startChainRunner(app.db, demanding, logger, {
      intervalMs: 50,
      settings: SETTINGS,
      bumpAfterMs: 60_000,
      balanceCheckMs: 100,
      alertTo: "ops@operator.example",
    });
    try {
      const degraded = await waitFor("/readyz degraded", async () => {
        const body = await readyz();
        return body.status === "degraded" ? body : undefined;
      });
      expect(degraded.reasons).toEqual([
        expect.stringMatching(new RegExp(`^chain 31337: relayer ${relayer} has [\\d.]+ ETH, below the minimum 20000.0 ETH; fund it`)),
      ]);
      const alert = lines().find((l) => l.level === 50 && l.msg.startsWith("relayer is low on gas money"));
      expect(alert).toMatchObject({ chainId: 31337, relayer, minimum: "20000.0", unit: "ETH" });
      // And one email to ALERT_EMAIL, however many checks find it low the same day.
      await waitFor("three low checks", async () => lines().filter((l) => l.msg.startsWith("relayer is low on gas money")).length >= 3);
      const emails = await app.db.prisma.email.findMany({ where: { type: "alert", to: "ops@operator.example" } });
      expect(emails).toEqual([expect.objectContaining({ merchantId: null, livemode: false, relatedId: "relayer:31337", status: "QUEUED" })]);
      expect(emails[0]!.subject).toMatch(/^Relayer balance low on .+ \(31337\): [\d.]+ ETH$/);
      expect(emails[0]!.text).toContain(relayer);
      const low = `stablegate_relayer_balance_low{chain_id="31337",relayer="${relayer}"}`;
      expect(await metrics()).toContain(`${low} 1`);
      expect(await metrics()).toContain(`stablegate_relayer_min_balance_wei{chain_id="31337",relayer="${relayer}"} ${parseEther("20000")}`);
      // The indexer's view of the chain: the head it read, and how far behind it was (caught up: 0).
      const head = await chain.provider.getBlockNumber();
      await waitFor("the head in /metrics", async () => (await metrics()).includes(`stablegate_chain_head_block{chain_id="31337"} ${head}`));
      expect(await metrics()).toContain(`stablegate_chain_lag_blocks{chain_id="31337"} 0`);

      await chain.provider.send("anvil_setBalance", [relayer, toQuantity(parseEther("30000"))]);
      await waitFor("/readyz ok", async () => (await readyz()).status === "ok");
      expect(await metrics()).toContain(`${low} 0`);
    } finally {
      await runner.stop();
    }
  }, 60_000);
});

describe("payouts whose flushes keep failing", () => {
  it(`stop after ${MAX_FLUSH_FAILURES} failed flushes: no more tries, one charge.payout_blocked, an error log line, /metrics; retry lets them go again`, async () => {
    const { logger, lines } = recordingLogger();
    const created = (await app.call("POST", "/v1/charges", { body: { orderId: `op-${++orders}`, amount: "5" } })).body;
    const clone = "0x00000000000000000000000000000000000C1011";
    await app.db.prisma.charge.update({
      where: { id: created.id },
      data: { chainId: 31337, cloneAddress: clone, status: "RECEIVED", amountReceived: "5000000", deployedAt: new Date(), confirmations: 2 },
    });
    await app.db.prisma.clone.create({ data: { chargeId: created.id, chainId: 31337, address: clone, version: 2, held: "5000000", deployedAt: new Date() } });
    const due = async (at: Date) =>
      (await dueClones(app.db.prisma, 31337, 10, { payoutMinAmount: SETTINGS.payoutMinAmount, dust: SETTINGS.payoutMinAmount }, at)).map((c) => c.chargeId);
    let now = new Date();
    for (let attempt = 1; attempt <= MAX_FLUSH_FAILURES; attempt++) {
      expect(await due(now)).toEqual([created.id]);
      const txId = newId("rtx");
      await app.db.prisma.$transaction(async (tx) => {
        await tx.relayerTransaction.create({
          data: { id: txId, chainId: 31337, kind: "FLUSH", nonce: attempt, rawTx: "0x", txHashes: [`0x${"ab".repeat(32)}`] },
        });
        expect(await claimForFlush(tx, txId, 31337, [created.id])).toBe(true);
      });
      // Not due while our flush is in flight.
      expect(await due(now)).toEqual([]);
      const stopped = await releaseFlush(app.db.prisma, SETTINGS, txId, { kind: "reverted" }, logger, now);
      expect(stopped.map((c) => c.id)).toEqual(attempt === MAX_FLUSH_FAILURES ? [created.id] : []);
      // Each failure waits longer before the next try (1, 2, 4, 8 minutes).
      if (attempt < MAX_FLUSH_FAILURES) {
        expect(await due(new Date(now.getTime() + 60_000 * 2 ** (attempt - 1) - 1))).toEqual([]);
      }
      now = new Date(now.getTime() + 60_000 * 2 ** (attempt - 1));
    }
    // Stopped: never due again, however long we wait, until an operator says so.
    expect(await due(new Date(now.getTime() + 365 * 86_400_000))).toEqual([]);
    const charge = (await app.call("GET", `/v1/charges/${created.id}`)).body;
    expect(charge).toMatchObject({ status: "RECEIVED", payoutBlockedReason: "flush_failing" });
    const blocked = await app.db.prisma.event.findMany({ where: { type: "charge.payout_blocked" } });
    expect(blocked.filter((e) => (e.data as { id: string }).id === created.id)).toHaveLength(1);
    const errors = lines().filter((l) => l.level === 50);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({ chargeId: created.id, clone, failures: MAX_FLUSH_FAILURES });
    expect(errors[0]!.msg).toContain("stablegate payouts retry");
    expect(await metrics()).toContain(`stablegate_payouts_blocked{chain_id="31337",reason="flush_failing"} 1`);

    await retryPayout(app.db.prisma, SETTINGS, created.id);
    expect(await due(now)).toEqual([created.id]);
    expect((await app.call("GET", `/v1/charges/${created.id}`)).body.payoutBlockedReason).toBeNull();
    expect(await metrics()).not.toContain(`reason="flush_failing"`);
    // A flush that never made it on chain (dropped) is not a failure of the clone.
    const txId = newId("rtx");
    await app.db.prisma.$transaction(async (tx) => {
      await tx.relayerTransaction.create({ data: { id: txId, chainId: 31337, kind: "FLUSH", nonce: 99, rawTx: "0x", txHashes: [`0x${"cd".repeat(32)}`] } });
      await claimForFlush(tx, txId, 31337, [created.id]);
    });
    await releaseFlush(app.db.prisma, SETTINGS, txId, { kind: "dropped" }, logger, now);
    const where = { chargeId_chainId: { chargeId: created.id, chainId: 31337 } };
    expect(await app.db.prisma.clone.findUniqueOrThrow({ where })).toMatchObject({ flushFailures: 0, flushId: null });
    await app.db.prisma.clone.update({ where, data: { held: 0 } });
    await app.db.prisma.charge.update({ where: { id: created.id }, data: { status: "EXPIRED", amountReceived: null } });
  });
});

describe("crumbs in a RECEIVED charge's clones", () => {
  it("are paid out once together they hold up its completion, though each clone holds less than the dust limit and its chain's minimum", async () => {
    // A stranger sends 0.009 to the charge's address on two chains: 0.018 left keeps it RECEIVED.
    const created = (await app.call("POST", "/v1/charges", { body: { orderId: `op-${++orders}`, amount: "5" } })).body;
    const clone = "0x00000000000000000000000000000000000C2022";
    await app.db.prisma.charge.update({
      where: { id: created.id },
      data: { chainId: 31337, cloneAddress: clone, status: "RECEIVED", amountReceived: "5018000", settledAmount: "5000000", deployedAt: new Date() },
    });
    for (const chainId of [31337, 8453]) {
      await app.db.prisma.clone.create({ data: { chargeId: created.id, chainId, address: clone, version: 2, held: "9000", deployedAt: new Date() } });
    }
    const charge = await app.db.prisma.charge.findUniqueOrThrow({ where: { id: created.id } });
    const dust = 10_000n;
    expect(() => nextStatus({ ...charge, payoutMinAmount: dust }, "complete", new Date())).toThrow(ChargeTransitionError);
    const due = async (chainId: number) =>
      (await dueClones(app.db.prisma, chainId, 10, { payoutMinAmount: 100_000n, dust }, new Date())).map((c) => c.chargeId);
    expect(await due(31337)).toContain(created.id);
    expect(await due(8453)).toContain(created.id);

    // Less than the dust limit left in all its clones together: it completes, and nothing is paid out.
    await app.db.prisma.charge.update({ where: { id: created.id }, data: { amountReceived: "5009000" } });
    await app.db.prisma.clone.update({ where: { chargeId_chainId: { chargeId: created.id, chainId: 8453 } }, data: { held: 0 } });
    expect(await due(31337)).not.toContain(created.id);
  });
});

describe("RPC URLs", () => {
  let flaky: RpcProxy;
  afterAll(() => flaky?.close());

  it("with the provider's key in path and query, never reach a log line, an error or the database, through a run with failures", async () => {
    flaky = await startRpcProxy(chain.anvil.url, { failRate: 0.3 });
    const keyed = { ...devnet, rpcUrls: [`${flaky.url}/v2/sekret-provider-key?apikey=sekret-query-key`] };
    const { logger, lines, text } = recordingLogger();
    const runner = startChainRunner(app.db, keyed, logger, { intervalMs: 50, settings: SETTINGS, bumpAfterMs: 60_000 });
    producer = setInterval(() => void chain.mine().catch(() => {}), 150);
    try {
      const created = (await app.call("POST", "/v1/charges", { body: { orderId: `op-${++orders}`, amount: "3" } })).body;
      const picked = await app.call("POST", `/v1/public/charges/${created.id}/chain`, { body: { chainId: 31337 }, key: null });
      await waitFor("deployed", async () => (await app.db.prisma.charge.findUnique({ where: { id: created.id } }))?.deployedAt, 60_000);
      await chain.pay(chain.wallet(5), picked.body.cloneAddress, 3_000_000n);
      await waitFor("completed", async () => (await app.call("GET", `/v1/charges/${created.id}`)).body.status === "COMPLETED", 90_000);
      // The endpoint did fail, and that was logged.
      expect(lines().some((l) => l.msg.startsWith("RPC endpoint failing") || l.msg.startsWith("chain runner tick failed"))).toBe(true);
    } finally {
      clearInterval(producer);
      await runner.stop();
    }
    expect(text()).not.toMatch(/sekret|127\.0\.0\.1/);
    const tables = await app.db.prisma.$queryRawUnsafe<{ name: string }[]>(
      `SELECT table_name AS name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'`,
    );
    expect(tables.length).toBeGreaterThan(10);
    for (const { name } of tables) {
      const rows = await app.db.prisma.$queryRawUnsafe<{ row: string }[]>(`SELECT row_to_json(t)::text AS row FROM "${name}" t`);
      for (const { row } of rows) expect(row, name).not.toMatch(/sekret/);
    }
  }, 120_000);
});
