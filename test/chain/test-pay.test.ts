// POST /v1/test_helpers/charges/:id/pay on a real anvil standing in for the devnet: the test wallet pays
// what is due (the devnet picked for a charge without a chain) or a part of it; an expired charge, and a
// PENDING one with `late: true`, are paid late and end as real late money does (EXPIRED,
// charge.late_payment, paid out); a live key, a bad amount and a process without a devnet are refused.
// `stablegate devnet pay` finds a service on a port of its own through the record `npm start` writes,
// pays a PENDING charge on the public path, and an expired one through the helper with a test key.
import { parseUnits, Wallet } from "ethers";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ChainSet, type EnabledChain } from "../../src/chain/chains.js";
import { type DevnetInfo, writeDevnetInfo } from "../../src/chain/devnet.js";
import { payFromDevnet } from "../../src/cli/devnet-pay.js";
import { loadConfig } from "../../src/config.js";
import { recordInstance } from "../../src/instance.js";
import type { Periodic } from "../../src/lib/periodic.js";
import { startChainRunner } from "../../src/jobs/chain-runner.js";
import { ANVIL_KEYS, blockProducer, startTestChain, type TestChain, waitFor } from "../helpers/chain.js";
import { expectError, POLLING, startApp, type TestApp } from "../helpers/harness.js";

const usdc = (s: string) => parseUnits(s, 6);

let chain: TestChain;
let app: TestApp;
let devnet: EnabledChain;
let runner: Periodic;
let info: DevnetInfo;
const payer = new Wallet(ANVIL_KEYS[5]).address;
const { start: startProducer, stop: stopProducer } = blockProducer(() => chain.mine());

beforeAll(async () => {
  chain = await startTestChain();
  devnet = { ...(await chain.enabled(1)), local: true };
  info = {
    rpcUrl: chain.anvil.url,
    chainId: devnet.chainId,
    usdc: devnet.usdc,
    factory: devnet.factory,
    feeRecipient: chain.feeRecipient,
    payerKey: ANVIL_KEYS[5],
    usdcIssuerKey: ANVIL_KEYS[8],
  };
  await chain.mint(payer, usdc("1000"));
  app = await startApp(POLLING, { chains: new ChainSet([devnet]), devnet: info });
  runner = startChainRunner(app.db, devnet, pino({ level: process.env.TEST_LOG ?? "silent" }), {
    intervalMs: 50,
    settings: { ...app.settings, feed: app.live },
    bumpAfterMs: 60_000,
  });
  startProducer();
}, 60_000);
afterAll(async () => {
  stopProducer();
  await runner?.stop();
  await app?.stop();
  await chain?.stop();
});

let n = 0;
const newCharge = async (amount = "10") => (await app.call("POST", "/v1/charges", { body: { orderId: `test-pay-${++n}`, amount } })).body;
const pay = (id: string, body?: unknown, key = app.testKey) => app.call("POST", `/v1/test_helpers/charges/${id}/pay`, { key, body });
const eventTypes = async (id: string) =>
  (await app.db.prisma.event.findMany({ where: { data: { path: ["id"], equals: id } }, orderBy: { createdAt: "asc" } })).map((e) => e.type);
const charge = (id: string) => app.call("GET", `/v1/charges/${id}`).then((r) => r.body);
const settled = (id: string, status: string) =>
  waitFor(`charge ${id} ${status}`, async () => {
    const c = await charge(id);
    return c.status === status && c;
  });

describe("POST /v1/test_helpers/charges/:id/pay", () => {
  it("pays what is due from the test wallet once mined, picking the devnet for a charge without a chain", async () => {
    const c = await newCharge("10");
    expect(c.chainId).toBeNull();
    const before = await chain.balance(payer);
    const res = await pay(c.id);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: c.id, chainId: devnet.chainId, cloneAddress: expect.stringMatching(/^0x[0-9a-fA-F]{40}$/) });
    // Mined when the answer comes: the money has left the test wallet.
    expect(before - (await chain.balance(payer))).toBe(usdc("10"));
    expect((await settled(c.id, "COMPLETED")).amountReceived).toBe("10.00");
  }, 60_000);

  it("pays more than the test wallet holds by minting devnet USDC to it first: no test key can empty it for the others", async () => {
    const held = await chain.balance(payer);
    expect(held).toBeLessThan(usdc("5000"));
    const c = await newCharge("5000");
    expect((await pay(c.id)).status).toBe(200);
    expect((await settled(c.id, "COMPLETED")).amountReceived).toBe("5000.00");
    // Topped up by what was missing plus the devnet's float, then paid.
    expect(await chain.balance(payer)).toBe(usdc("1000000"));
  }, 60_000);

  it("pays a part when given an amount, then the rest by default", async () => {
    const c = await newCharge("10");
    expect((await pay(c.id, { amount: "4.5" })).status).toBe(200);
    await waitFor("the partial payment confirmed", async () => (await charge(c.id)).amountReceived === "4.50");
    expect((await charge(c.id)).status).toBe("PENDING");
    expect(await eventTypes(c.id)).toContain("charge.partial");
    expect((await pay(c.id)).status).toBe(200);
    expect((await settled(c.id, "COMPLETED")).amountReceived).toBe("10.00");
  }, 60_000);

  it("pays an expired charge whose chain was never picked late, at its address: EXPIRED, charge.late_payment, paid out", async () => {
    const c = await newCharge("10");
    expect((await app.call("POST", `/v1/test_helpers/charges/${c.id}/expire`)).body.status).toBe("EXPIRED");
    const res = await pay(c.id);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: "EXPIRED" });
    await waitFor("the late payment", async () => (await eventTypes(c.id)).includes("charge.late_payment"));
    await waitFor("the late money paid out", async () => (await eventTypes(c.id)).includes("charge.payout_confirmed"));
    expect(await charge(c.id)).toMatchObject({ status: "EXPIRED", amountReceived: "10.00" });
    const row = await app.db.prisma.charge.findUniqueOrThrow({ where: { id: c.id } });
    // Never picked: the money went to the address fixed at creation, and left it in the payout.
    expect(row.chainId).toBeNull();
    expect(await chain.balance(row.depositAddress!)).toBe(0n);
  }, 60_000);

  it("with late: true expires a PENDING charge first, then pays it late", async () => {
    const c = await newCharge("3");
    const res = await pay(c.id, { late: true });
    expect(res.status).toBe(200);
    expect(res.body.status).toBe("EXPIRED");
    await waitFor("the late payment", async () => (await eventTypes(c.id)).includes("charge.late_payment"));
    expect((await eventTypes(c.id)).slice(0, 3)).toEqual(["charge.pending", "charge.expired", "charge.late_payment"]);
    expect(await charge(c.id)).toMatchObject({ status: "EXPIRED", amountReceived: "3.00" });
  }, 60_000);

  it("refuses a live key, a bad amount (naming it) and a charge with nothing due, sending nothing", async () => {
    const before = await chain.balance(payer);
    const live = await app.call("POST", "/v1/charges", { key: app.liveKey, body: { orderId: "test-pay-live", amount: "1" } });
    // Without a live chain the live charge is refused first: the helper refuses the live key whatever the id.
    expectError(live, 400, "chain_unsupported");
    expectError(await pay("chrg_unknown", undefined, app.liveKey), 400, "test_mode_only");
    const c = await newCharge("2");
    for (const amount of ["0", "-1", "abc", "1.1234567", 5, "2000000000"]) expectError(await pay(c.id, { amount }), 400, "parameter_invalid", "amount");
    expectError(await pay(c.id, { late: "yes" }), 400, "parameter_invalid", "late");
    expect(await chain.balance(payer)).toBe(before);
    expect((await charge(c.id)).chainId).toBeNull();
    expectError(await pay("chrg_unknown"), 404, "resource_missing", "id");
  }, 60_000);
});

describe("without a devnet in the process", () => {
  let plain: TestApp;
  beforeAll(async () => {
    plain = await startApp();
  }, 60_000);
  afterAll(() => plain?.stop());

  it("answers 400 chain_unsupported", async () => {
    const c = (await plain.call("POST", "/v1/charges", { body: { orderId: "no-devnet", amount: "1" } })).body;
    expectError(await plain.call("POST", `/v1/test_helpers/charges/${c.id}/pay`, {}), 400, "chain_unsupported");
    expect((await plain.call("GET", `/v1/charges/${c.id}`)).body.chainId).toBeNull();
  }, 60_000);
});

describe("stablegate devnet pay", () => {
  let dir: string;
  let forget: () => void;
  beforeAll(() => {
    // The service answers on a port of its own (not :4000); only DATA_DIR's record says which.
    dir = mkdtempSync(join(tmpdir(), "sg-devnet-pay-"));
    writeDevnetInfo(dir, info);
    forget = recordInstance(dir, app.url);
  });
  afterAll(() => {
    forget?.();
    rmSync(dir, { recursive: true, force: true });
  });
  const config = () => loadConfig({ NODE_ENV: "test", LOG_LEVEL: "silent", DATA_DIR: dir });

  it("finds the running service through its record and pays a PENDING charge on the public path", async () => {
    expect(new URL(app.url).port).not.toBe("4000");
    const c = await newCharge("6");
    expect(await payFromDevnet(config(), c.id)).toMatch(/^Paid 6\.00 USDC to 0x[0-9a-fA-F]{40} from /);
    expect((await settled(c.id, "COMPLETED")).amountReceived).toBe("6.00");
  }, 60_000);

  it("says what to do for an expired charge without a key, and pays it late with one", async () => {
    const c = await newCharge("5");
    await app.call("POST", `/v1/test_helpers/charges/${c.id}/expire`);
    await expect(payFromDevnet(config(), c.id)).rejects.toThrow(
      `Charge ${c.id} is EXPIRED: without a key only a PENDING charge is paid, as a buyer would. To pay it late (charge.late_payment), give your test key: stablegate devnet pay ${c.id} --key sk_test_…`,
    );
    expect(await payFromDevnet(config(), c.id, { apiKey: app.testKey })).toMatch(/the charge is EXPIRED \(late/);
    await waitFor("the late payment", async () => (await eventTypes(c.id)).includes("charge.late_payment"));
    await expect(payFromDevnet(config(), c.id, { late: true })).rejects.toThrow(/needs your test key/);
  }, 60_000);
});
