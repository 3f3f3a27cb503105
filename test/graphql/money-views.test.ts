// The dashboard's money views over GraphQL: `payouts` (one per transaction and merchant, from the
// ledger: what reached the wallet, the fee, the charges it paid, reversed by a deep reorg; newest
// first, paged, filtered by period, per merchant and mode), `ledgerSummary` (the ledger summed over
// a period, and per UTC day) and the chains' names in `balance`. The rows are the real posting
// code's (test/helpers/ledger.ts).
import { getAddress } from "ethers";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { reverseTransfers } from "../../src/domain/reversals.js";
import { ChainHistory, chargeOn } from "../helpers/ledger.js";
import { liveChains, POLLING, SETTINGS, startApp, type TestApp, WALLET } from "../helpers/harness.js";

const DEVNET = 31337;
const BASE_SEPOLIA = 84532;
const BASE = 8453;
const BUYER = getAddress("0x00000000000000000000000000000000000b0b04");
const FEE_WALLET = getAddress("0x00000000000000000000000000000000000fee04");
const T0 = Date.parse("2026-04-01T08:00:00.000Z");
const DAY = 24 * 60 * 60 * 1000;
/** The ledger's clock: day `d` of the test, `minutes` past T0's time. */
const at = (d: number, minutes = 0) => new Date(T0 + d * DAY + minutes * 60_000);

const PAYOUTS = `query($first: Int, $after: String, $last: Int, $before: String, $createdGte: String, $createdLt: String) {
  payouts(first: $first, after: $after, last: $last, before: $before, createdGte: $createdGte, createdLt: $createdLt) {
    totalCount pageInfo { startCursor endCursor hasNextPage hasPreviousPage }
    edges { cursor node { id chainId txHash blockNumber amount feeAmount chargeIds status createdAt } }
  }
}`;
const SUMMARY = `query($createdGte: String, $createdLt: String) {
  ledgerSummary(createdGte: $createdGte, createdLt: $createdLt) { createdGte createdLt grossReceived fees refunded net paidOut daily { day grossReceived } }
}`;

let app: TestApp;
const ids = { a: "", b: "", c: "", d: "", other: "", live: "" };
const tx = { a: "", bc: "", d: "", live: "" };
let otherKey: string;

beforeAll(async () => {
  app = await startApp(POLLING, { chains: liveChains() });
  const devnet = new ChainHistory(app, DEVNET);
  const sepolia = new ChainHistory(app, BASE_SEPOLIA);
  const base = new ChainHistory(app, BASE, false);
  otherKey = (await app.newMerchant()).apiKeys.test.secret;

  // Day 0: A paid (10.00) and paid out alone; 1.50 of it refunded by the merchant's wallet.
  const a = await chargeOn(app, app.testKey, DEVNET, "10.00");
  ids.a = a.id;
  await devnet.sees({ from: BUYER, to: a.address, amount: "10.00" });
  await devnet.confirm(at(0));
  tx.a = await devnet.paysOut(a.address, "10.00", FEE_WALLET);
  await devnet.confirm(at(0, 10));
  expect((await app.call("POST", `/v1/charges/${a.id}/refunds`, { body: { amount: "1.50", address: BUYER } })).status).toBe(201);
  await devnet.sees({ from: WALLET, to: BUYER, amount: "1.50" });
  await devnet.confirm(at(0, 20));

  // Day 1: B (4.00), C (6.00) and another merchant's charge paid out in one transaction.
  const b = await chargeOn(app, app.testKey, DEVNET, "4.00");
  const c = await chargeOn(app, app.testKey, DEVNET, "6.00");
  const o = await chargeOn(app, otherKey, DEVNET, "2.00");
  [ids.b, ids.c, ids.other] = [b.id, c.id, o.id];
  await devnet.sees(
    { from: BUYER, to: b.address, amount: "4.00" },
    { from: BUYER, to: c.address, amount: "6.00" },
    { from: BUYER, to: o.address, amount: "2.00" },
  );
  await devnet.confirm(at(1));
  tx.bc = await devnet.sees(
    { from: b.address, to: WALLET, amount: "3.96" },
    { from: b.address, to: FEE_WALLET, amount: "0.04" },
    { from: c.address, to: WALLET, amount: "5.94" },
    { from: c.address, to: FEE_WALLET, amount: "0.06" },
    { from: o.address, to: WALLET, amount: "1.98" },
    { from: o.address, to: FEE_WALLET, amount: "0.02" },
  );
  await devnet.confirm(at(1, 10));

  // Day 2, on another chain: D (3.00) paid out, then a reorg deeper than the confirmations takes the payout away.
  const d = await chargeOn(app, app.testKey, BASE_SEPOLIA, "3.00");
  ids.d = d.id;
  await sepolia.sees({ from: BUYER, to: d.address, amount: "3.00" });
  await sepolia.confirm(at(2));
  tx.d = await sepolia.paysOut(d.address, "3.00", FEE_WALLET);
  await sepolia.confirm(at(2, 10));
  const gone = await app.db.prisma.chainTransfer.findMany({ where: { chargeId: d.id, kind: { in: ["PAYOUT", "FEE"] } } });
  await reverseTransfers(
    app.db.prisma,
    SETTINGS,
    gone.map((t) => t.id),
    "test reorg",
    at(2, 20),
  );

  // A live payout of the same merchant.
  const live = await chargeOn(app, app.liveKey, BASE, "7.00");
  ids.live = live.id;
  await base.sees({ from: BUYER, to: live.address, amount: "7.00" });
  await base.confirm(at(1));
  tx.live = await base.paysOut(live.address, "7.00", FEE_WALLET);
  await base.confirm(at(1, 30));
}, 60_000);
afterAll(() => app?.stop());

const payouts = async (variables: Record<string, unknown> = {}, key?: string) => {
  const res = await app.gql(PAYOUTS, variables, key);
  expect(res.errors).toBeUndefined();
  return res.data.payouts;
};
const nodes = (conn: { edges: { node: any }[] }) => conn.edges.map((e) => e.node);
const hashes = (conn: { edges: { node: { txHash: string } }[] }) => conn.edges.map((e) => e.node.txHash);

describe("payouts", () => {
  it("lists each payout transaction once per merchant, newest first: net to the wallet, fee, the charges it paid, its status", async () => {
    const all = await payouts({ first: 10 });
    expect(all.totalCount).toBe(3);
    expect(nodes(all)).toEqual([
      {
        id: expect.stringMatching(/^btx_/),
        chainId: BASE_SEPOLIA,
        txHash: tx.d,
        blockNumber: expect.any(Number),
        amount: "2.97",
        feeAmount: "0.03",
        chargeIds: [ids.d],
        status: "REVERSED",
        createdAt: at(2, 10).toISOString(),
      },
      {
        id: expect.stringMatching(/^btx_/),
        chainId: DEVNET,
        txHash: tx.bc,
        blockNumber: expect.any(Number),
        amount: "9.90",
        feeAmount: "0.10",
        chargeIds: [ids.b, ids.c].sort(),
        status: "PAID",
        createdAt: at(1, 10).toISOString(),
      },
      {
        id: expect.stringMatching(/^btx_/),
        chainId: DEVNET,
        txHash: tx.a,
        blockNumber: expect.any(Number),
        amount: "9.90",
        feeAmount: "0.10",
        chargeIds: [ids.a],
        status: "PAID",
        createdAt: at(0, 10).toISOString(),
      },
    ]);
    // Each agrees with the charges' own settlements.
    const b = (await app.call("GET", `/v1/charges/${ids.b}`)).body;
    expect(b.settlements).toEqual([expect.objectContaining({ txHash: tx.bc, netAmount: "3.96", feeAmount: "0.04" })]);
    // The other merchant sees its share of the shared transaction only; live mode its own payout.
    expect(nodes(await payouts({}, otherKey))).toEqual([expect.objectContaining({ txHash: tx.bc, amount: "1.98", feeAmount: "0.02", chargeIds: [ids.other] })]);
    const live = await payouts({}, app.liveKey);
    expect(nodes(live)).toEqual([expect.objectContaining({ txHash: tx.live, chainId: BASE, amount: "6.93", feeAmount: "0.07", status: "PAID" })]);
    expect(live.totalCount).toBe(1);
  });

  it("pages forward and back by cursor", async () => {
    const first = await payouts({ first: 2 });
    expect(hashes(first)).toEqual([tx.d, tx.bc]);
    expect(first.pageInfo).toMatchObject({ hasNextPage: true, hasPreviousPage: false, endCursor: first.edges[1].cursor });
    const second = await payouts({ first: 2, after: first.pageInfo.endCursor });
    expect(hashes(second)).toEqual([tx.a]);
    expect(second.pageInfo).toMatchObject({ hasNextPage: false, hasPreviousPage: true });
    const back = await payouts({ last: 2, before: second.pageInfo.startCursor });
    expect(hashes(back)).toEqual([tx.d, tx.bc]);
    expect(back.pageInfo).toMatchObject({ hasNextPage: true, hasPreviousPage: false });
    expect(hashes(await payouts({ last: 1 }))).toEqual([tx.a]);
    const unknown = await app.gql(PAYOUTS, { after: "btx_000000000000000000000000" });
    expect(unknown.errors?.[0].extensions).toMatchObject({ code: "resource_missing", param: "startingAfter" });
  });

  it("filters by when the ledger recorded them, and names a bad date", async () => {
    const window = await payouts({ createdGte: at(0, 30).toISOString(), createdLt: at(2).toISOString() });
    expect(hashes(window)).toEqual([tx.bc]);
    expect(window.totalCount).toBe(1);
    expect(hashes(await payouts({ createdGte: at(1, 10).toISOString() }))).toEqual([tx.d, tx.bc]);
    expect(hashes(await payouts({ createdLt: at(1, 10).toISOString() }))).toEqual([tx.a]);
    const bad = await app.gql(PAYOUTS, { createdGte: "yesterday" });
    expect(bad.errors?.[0].extensions).toMatchObject({ code: "parameter_invalid", param: "createdGte" });
  });
});

describe("balance per chain", () => {
  it("names each chain from the registry", async () => {
    const res = await app.gql("{ balance { held { chainId chainName amount } paidOut { chainId chainName amount } } }");
    expect(res.errors).toBeUndefined();
    // The reorg took D's payout back: its money is in its address again.
    expect(res.data.balance.held).toEqual([{ chainId: BASE_SEPOLIA, chainName: "Base Sepolia", amount: "3.00" }]);
    expect(res.data.balance.paidOut).toEqual([{ chainId: DEVNET, chainName: "Local devnet", amount: "19.80" }]);
  });
});

describe("ledgerSummary", () => {
  it("sums the ledger over a period: gross received, fees, refunds, net, paid out, and the money received per UTC day", async () => {
    const res = await app.gql(SUMMARY, { createdGte: at(0, -480).toISOString(), createdLt: at(3, -480).toISOString() });
    expect(res.errors).toBeUndefined();
    const s = res.data.ledgerSummary;
    // The reorg's reversals count on the day they were recorded, with the kind of row they undo.
    expect(s).toMatchObject({ grossReceived: "23.00", fees: "0.20", refunded: "1.50", net: "21.30", paidOut: "19.80" });
    expect(s.daily).toEqual([
      { day: "2026-04-01", grossReceived: "10.00" },
      { day: "2026-04-02", grossReceived: "10.00" },
      { day: "2026-04-03", grossReceived: "3.00" },
    ]);
    // A period's part: day 1 alone.
    const day1 = (await app.gql(SUMMARY, { createdGte: "2026-04-02T00:00:00Z", createdLt: "2026-04-03T00:00:00Z" })).data.ledgerSummary;
    expect(day1).toMatchObject({
      grossReceived: "10.00",
      fees: "0.10",
      refunded: "0.00",
      net: "9.90",
      paidOut: "9.90",
      daily: [{ day: "2026-04-02", grossReceived: "10.00" }],
    });
    // The other mode and another merchant: their own rows only.
    const live = (await app.gql(SUMMARY, { createdGte: "2026-04-01T00:00:00Z", createdLt: "2026-04-04T00:00:00Z" }, app.liveKey)).data.ledgerSummary;
    expect(live).toMatchObject({ grossReceived: "7.00", fees: "0.07", net: "6.93" });
    const other = (await app.gql(SUMMARY, { createdGte: "2026-04-01T00:00:00Z", createdLt: "2026-04-04T00:00:00Z" }, otherKey)).data.ledgerSummary;
    expect(other).toMatchObject({ grossReceived: "2.00", fees: "0.02", net: "1.98" });
  });

  it("defaults to the last 30 UTC days, today included, and refuses an empty or too long period naming the parameter", async () => {
    const res = await app.gql(SUMMARY);
    expect(res.errors).toBeUndefined();
    const s = res.data.ledgerSummary;
    expect(s.daily).toHaveLength(30);
    expect(s.daily.at(-1).day).toBe(new Date().toISOString().slice(0, 10));
    expect(Date.parse(s.createdLt) - Date.parse(s.createdGte)).toBe(30 * DAY);
    for (const [variables, param] of [
      [{ createdGte: "2026-04-02T00:00:00Z", createdLt: "2026-04-02T00:00:00Z" }, "createdLt"],
      [{ createdGte: "2025-01-01T00:00:00Z", createdLt: "2026-04-02T00:00:00Z" }, "createdGte"],
      [{ createdLt: "tomorrow" }, "createdLt"],
    ] as const) {
      const bad = await app.gql(SUMMARY, variables);
      expect(bad.errors?.[0].extensions, JSON.stringify(variables)).toMatchObject({ code: "parameter_invalid", param });
    }
  });
});
