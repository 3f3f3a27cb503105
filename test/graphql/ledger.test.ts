// The ledger over GraphQL (.docs/ledger.md, .docs/graphql.md): `balanceTransactions` (a Relay connection with
// REST's filters), `balance` and `Charge.balanceTransactions`, each agreeing with REST on the same rows.
// The rows are the real posting code's: chain transfers matched and recorded as the indexer does (no
// RPC), confirmed by confirmChainMoney, one reversed by reverseTransfers, a refund paid on chain.
import { getAddress, parseUnits } from "ethers";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { newId } from "../../src/domain/ids.js";
import { reverseTransfers } from "../../src/domain/reversals.js";
import { ChainHistory, chargeOn } from "../helpers/ledger.js";
import { liveChains, POLLING, SETTINGS, startApp, type TestApp, WALLET } from "../helpers/harness.js";

const DEVNET = 31337;
const BASE_SEPOLIA = 84532;
const BASE = 8453;
const BUYER = getAddress("0x00000000000000000000000000000000000b0b02");
const FEE_WALLET = getAddress("0x00000000000000000000000000000000000fee02");
const T0 = Date.parse("2026-04-01T08:00:00.000Z");
const at = (minutes: number) => new Date(T0 + minutes * 60_000);

const FIELDS = "id livemode type amount chargeId refundId invoiceId chainId txHash blockNumber reversesId x402 { id payer resource description } createdAt";
const CONNECTION = `query($first: Int, $after: String, $last: Int, $before: String, $chargeId: ID, $refundId: ID, $type: BalanceTransactionType, $createdGte: String, $createdLt: String) {
  balanceTransactions(first: $first, after: $after, last: $last, before: $before, chargeId: $chargeId, refundId: $refundId, type: $type, createdGte: $createdGte, createdLt: $createdLt) {
    totalCount pageInfo { startCursor endCursor hasNextPage hasPreviousPage } edges { cursor node { ${FIELDS} } }
  }
}`;
const BALANCE =
  "{ balance { livemode held { chainId amount } onItsWay { chainId amount } paidOut { chainId amount } fees { chainId amount } refunded { chainId amount } } }";

let app: TestApp;
const ids = { a: "", c: "", live: "", other: "", refund: "" };
let otherKey: string;

beforeAll(async () => {
  app = await startApp(POLLING, { chains: liveChains() });
  const devnet = new ChainHistory(app, DEVNET);
  const sepolia = new ChainHistory(app, BASE_SEPOLIA);
  const base = new ChainHistory(app, BASE, false);

  const a = await chargeOn(app, app.testKey, DEVNET, "20.00");
  ids.a = a.id;
  await devnet.sees({ from: BUYER, to: a.address, amount: "20.00" });
  await devnet.confirm(at(0));
  await devnet.paysOut(a.address, "20.00", FEE_WALLET);
  await devnet.confirm(at(10));
  const refund = await app.call("POST", `/v1/charges/${a.id}/refunds`, { body: { amount: "2.50", address: BUYER } });
  expect(refund.status, refund.text).toBe(201);
  ids.refund = refund.body.id;
  await devnet.sees({ from: WALLET, to: BUYER, amount: "2.50" });
  await devnet.confirm(at(20));

  const c = await chargeOn(app, app.testKey, BASE_SEPOLIA, "6.00");
  ids.c = c.id;
  await sepolia.sees({ from: BUYER, to: c.address, amount: "6.00" });
  await sepolia.confirm(at(30));
  await sepolia.paysOut(c.address, "6.00", FEE_WALLET);
  await sepolia.confirm(at(40));
  const payout = await app.db.prisma.chainTransfer.findFirstOrThrow({ where: { chargeId: c.id, kind: "PAYOUT" } });
  await reverseTransfers(app.db.prisma, SETTINGS, [payout.id], "test reorg", at(50));

  const other = await app.newMerchant();
  otherKey = other.apiKeys.test.secret;
  const o = await chargeOn(app, otherKey, DEVNET, "1.00");
  ids.other = o.id;
  await devnet.sees({ from: BUYER, to: o.address, amount: "1.00" });
  await devnet.confirm(at(25));
  const live = await chargeOn(app, app.liveKey, BASE, "9.00");
  ids.live = live.id;
  await base.sees({ from: BUYER, to: live.address, amount: "9.00" });
  await base.confirm(at(35));

  // Seen and not confirmed: on its way.
  const b = await chargeOn(app, app.testKey, DEVNET, "3.00");
  await devnet.sees({ from: BUYER, to: b.address, amount: "3.00" });
}, 60_000);
afterAll(() => app?.stop());

type Node = Record<string, unknown> & { id: string; type: string; amount: string; chargeId: string; createdAt: string };
interface Conn {
  totalCount: number;
  pageInfo: { startCursor: string | null; endCursor: string | null; hasNextPage: boolean; hasPreviousPage: boolean };
  edges: { cursor: string; node: Node }[];
}

const connection = async (variables: Record<string, unknown>, key?: string): Promise<Conn> => {
  const res = await app.gql(CONNECTION, variables, key);
  expect(res.errors, JSON.stringify(res.errors)).toBeUndefined();
  return res.data.balanceTransactions;
};
/** REST's rows for the same filters, shaped as GraphQL shows them (TYPE in capitals, no `object`). */
const restRows = async (query: string, key?: string) => {
  const res = await app.call("GET", `/v1/balance_transactions?limit=100${query}`, { key });
  expect(res.status, res.text).toBe(200);
  return res.body.data.map(({ object: _, ...r }: Node) => ({ ...r, type: r.type.toUpperCase() }));
};
const nodes = (c: Conn) => c.edges.map((e) => e.node);

describe("balanceTransactions", () => {
  it("lists the rows newest first, exactly as REST does, amounts as signed decimal strings", async () => {
    const all = await connection({ first: 100 });
    expect(nodes(all)).toEqual(await restRows(""));
    expect(all.totalCount).toBe(8);
    expect(all.edges.map((e) => e.cursor)).toEqual(nodes(all).map((n) => n.id));
    // Rows posted together (a payout and its fee) share a time and are ordered by id.
    const pair = (chargeId: string, net: string, fee: string) =>
      expect.arrayContaining([
        [chargeId, "PAYOUT", net],
        [chargeId, "FEE", fee],
      ]);
    const summary = nodes(all).map((n) => [n.chargeId, n.type, n.amount]);
    expect(summary[0]).toEqual([ids.c, "REVERSAL", "5.94"]);
    expect(summary.slice(1, 3)).toEqual(pair(ids.c, "-5.94", "-0.06"));
    expect(summary.slice(3, 5)).toEqual([
      [ids.c, "PAYMENT", "6.00"],
      [ids.a, "REFUND", "-2.50"],
    ]);
    expect(summary.slice(5, 7)).toEqual(pair(ids.a, "-19.80", "-0.20"));
    expect(summary[7]).toEqual([ids.a, "PAYMENT", "20.00"]);
    expect(nodes(all)[0]).toMatchObject({ livemode: false, reversesId: nodes(all).find((n) => n.type === "PAYOUT" && n.chargeId === ids.c)!.id });
    expect(nodes(all).at(-1)).toMatchObject({ createdAt: at(0).toISOString(), chainId: DEVNET });
    for (const n of nodes(all)) {
      expect(typeof n.amount).toBe("string");
      expect(n.amount).toMatch(/^-?\d+\.\d{2,6}$/);
    }
  });

  it("pages with first/after, last/before and last alone from the end, pageInfo saying what lies beyond", async () => {
    const all = nodes(await connection({ first: 100 })).map((n) => n.id);
    expect(all).toHaveLength(8);
    const p1 = await connection({ first: 3 });
    expect(p1.pageInfo).toEqual({ startCursor: all[0], endCursor: all[2], hasNextPage: true, hasPreviousPage: false });
    const p2 = await connection({ first: 3, after: p1.pageInfo.endCursor });
    expect(p2.pageInfo).toEqual({ startCursor: all[3], endCursor: all[5], hasNextPage: true, hasPreviousPage: true });
    const p3 = await connection({ first: 3, after: p2.pageInfo.endCursor });
    expect(p3.pageInfo).toEqual({ startCursor: all[6], endCursor: all[7], hasNextPage: false, hasPreviousPage: true });
    expect([p1, p2, p3].flatMap((p) => nodes(p).map((n) => n.id))).toEqual(all);
    expect(p3.totalCount).toBe(all.length);
    const back = await connection({ last: 2, before: p2.pageInfo.startCursor });
    expect(nodes(back).map((n) => n.id)).toEqual(all.slice(1, 3));
    expect(back.pageInfo).toMatchObject({ hasPreviousPage: true, hasNextPage: true });
    const backAll = await connection({ last: 3, before: p2.pageInfo.startCursor });
    expect(nodes(backAll).map((n) => n.id)).toEqual(all.slice(0, 3));
    expect(backAll.pageInfo.hasPreviousPage).toBe(false);
    const end = await connection({ last: 3 });
    expect(nodes(end).map((n) => n.id)).toEqual(all.slice(5));
    expect(end.pageInfo).toEqual({ startCursor: all[5], endCursor: all[7], hasNextPage: false, hasPreviousPage: true });
    const beforeEnd = await connection({ last: 3, before: end.pageInfo.startCursor });
    expect(nodes(beforeEnd).map((n) => n.id)).toEqual(all.slice(2, 5));
    expect((await connection({ last: 100 })).edges.map((e: { cursor: string }) => e.cursor)).toEqual(all);
    // REST pages the same way.
    const rest = await app.call("GET", `/v1/balance_transactions?limit=3&startingAfter=${p1.pageInfo.endCursor}`);
    expect(rest.body.data.map((r: Node) => r.id)).toEqual(nodes(p2).map((n) => n.id));
  });

  it("filters by chargeId, refundId, type and creation time as REST does, totalCount counting the filtered rows", async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ chargeId: ids.a }, `&chargeId=${ids.a}`],
      [{ refundId: ids.refund }, `&refundId=${ids.refund}`],
      [{ type: "FEE" }, "&type=fee"],
      [{ type: "REVERSAL" }, "&type=reversal"],
      [{ type: "PAYMENT", chargeId: ids.c }, `&type=payment&chargeId=${ids.c}`],
      [{ createdGte: at(10).toISOString(), createdLt: at(40).toISOString() }, `&createdGte=${at(10).toISOString()}&createdLt=${at(40).toISOString()}`],
      [{ createdLt: "2026-04-01T10:10:00+02:00" }, `&createdLt=${encodeURIComponent("2026-04-01T10:10:00+02:00")}`],
      [{ chargeId: ids.other }, `&chargeId=${ids.other}`],
    ];
    for (const [variables, query] of cases) {
      const conn = await connection({ first: 100, ...variables });
      const rest = await restRows(query);
      expect(nodes(conn), query).toEqual(rest);
      expect(conn.totalCount, query).toBe(rest.length);
    }
    expect(nodes(await connection({ first: 100, refundId: ids.refund }))).toEqual([
      expect.objectContaining({ type: "REFUND", amount: "-2.50", refundId: ids.refund }),
    ]);
    expect((await connection({ first: 100, createdGte: at(10).toISOString(), createdLt: at(40).toISOString() })).totalCount).toBe(4);
    expect((await connection({ first: 100, chargeId: ids.other })).totalCount).toBe(0);
  });

  it("refuses a bad filter or page size with parameter_invalid naming the argument", async () => {
    for (const [variables, param] of [
      [{ createdGte: "yesterday" }, "createdGte"],
      [{ createdLt: "2026-04-01" }, "createdLt"],
      [{ chargeId: "" }, "chargeId"],
      [{ first: 0 }, "first"],
      [{ first: 101 }, "first"],
      [{ last: 0 }, "last"],
    ] as const) {
      const res = await app.gql(CONNECTION, variables);
      expect(res.errors?.[0]?.extensions, JSON.stringify(variables)).toMatchObject({ code: "parameter_invalid", param });
    }
    for (const cursor of [newId("btx"), nodes(await connection({ first: 1 }, otherKey))[0]!.id]) {
      const res = await app.gql(CONNECTION, { first: 2, after: cursor });
      expect(res.errors?.[0]?.extensions).toMatchObject({ code: "resource_missing", statusCode: 400 });
    }
  });

  it("shows a key its own merchant and mode only", async () => {
    const live = await connection({ first: 100 }, app.liveKey);
    expect(nodes(live)).toEqual(await restRows("", app.liveKey));
    expect(nodes(live).map((n) => [n.chargeId, n.type, n.amount, n.livemode, n.chainId])).toEqual([[ids.live, "PAYMENT", "9.00", true, BASE]]);
    expect(live.totalCount).toBe(1);
    const test = nodes(await connection({ first: 100 }));
    expect(test.length).toBeGreaterThan(0);
    expect(test.every((n) => n.livemode === false && n.chargeId !== ids.live && n.chargeId !== ids.other)).toBe(true);
    expect((await connection({ first: 100, chargeId: ids.live })).totalCount).toBe(0);
    const other = await connection({ first: 100 }, otherKey);
    expect(nodes(other).map((n) => n.chargeId)).toEqual([ids.other]);
    const anonymous = await app.gql(CONNECTION, { first: 1 }, null);
    expect(anonymous.errors?.[0]?.extensions).toMatchObject({ code: "api_key_missing" });
  });
});

describe("balance", () => {
  it("is REST's /v1/balance, per chain", async () => {
    const res = await app.gql(BALANCE);
    expect(res.errors).toBeUndefined();
    const { object, ...rest } = (await app.call("GET", "/v1/balance")).body;
    expect(object).toBe("balance");
    expect(res.data.balance).toEqual(rest);
    expect(res.data.balance).toEqual({
      livemode: false,
      // A is all paid out (a clone holding nothing is not listed); C holds the payout a reorg took away.
      held: [{ chainId: BASE_SEPOLIA, amount: "5.94" }],
      onItsWay: [{ chainId: DEVNET, amount: "3.00" }],
      // A payout a reorg reversed sums to nothing on its chain: not listed.
      paidOut: [{ chainId: DEVNET, amount: "19.80" }],
      fees: [
        { chainId: DEVNET, amount: "0.20" },
        { chainId: BASE_SEPOLIA, amount: "0.06" },
      ],
      refunded: [{ chainId: DEVNET, amount: "2.50" }],
    });
  });

  it("is the key's mode's", async () => {
    const live = await app.gql(BALANCE, undefined, app.liveKey);
    const { object: _, ...rest } = (await app.call("GET", "/v1/balance", { key: app.liveKey })).body;
    expect(live.data.balance).toEqual(rest);
    expect(live.data.balance).toEqual({ livemode: true, held: [{ chainId: BASE, amount: "9.00" }], onItsWay: [], paidOut: [], fees: [], refunded: [] });
  });
});

describe("Charge.balanceTransactions", () => {
  const OF_CHARGE = `query($id: ID!) { charge(id: $id) { amountReceived netAmount feeAmount amountRefunded balanceTransactions { ${FIELDS} } } }`;

  it("lists the charge's own rows oldest first, what its money fields add up", async () => {
    const res = await app.gql(OF_CHARGE, { id: ids.a });
    expect(res.errors).toBeUndefined();
    const charge = res.data.charge;
    expect(charge.balanceTransactions).toEqual((await restRows(`&chargeId=${ids.a}`)).reverse());
    expect(charge.balanceTransactions.map((b: Node) => b.type)).toEqual([
      "PAYMENT",
      expect.stringMatching(/^(PAYOUT|FEE)$/),
      expect.stringMatching(/^(PAYOUT|FEE)$/),
      "REFUND",
    ]);
    const sum = (type: string) =>
      -charge.balanceTransactions.filter((b: Node) => b.type === type).reduce((s: bigint, b: Node) => s + parseUnits(b.amount, 6), 0n);
    expect(parseUnits(charge.amountReceived, 6)).toBe(-sum("PAYMENT"));
    expect(parseUnits(charge.netAmount, 6)).toBe(sum("PAYOUT"));
    expect(parseUnits(charge.feeAmount, 6)).toBe(sum("FEE"));
    expect(parseUnits(charge.amountRefunded, 6)).toBe(sum("REFUND"));
    expect(charge).toMatchObject({ amountReceived: "20.00", netAmount: "19.80", feeAmount: "0.20", amountRefunded: "2.50" });
  });

  it("shows a reversal after the row it undoes, and nothing of other charges", async () => {
    const rows = (await app.gql(OF_CHARGE, { id: ids.c })).data.charge.balanceTransactions as Node[];
    expect(rows.map((r) => [r.type, r.amount])).toEqual([
      ["PAYMENT", "6.00"],
      ...(rows[1]!.type === "PAYOUT"
        ? [
            ["PAYOUT", "-5.94"],
            ["FEE", "-0.06"],
          ]
        : [
            ["FEE", "-0.06"],
            ["PAYOUT", "-5.94"],
          ]),
      ["REVERSAL", "5.94"],
    ]);
    expect(rows.at(-1)!.reversesId).toBe(rows.find((r) => r.type === "PAYOUT")!.id);
    expect(rows.every((r) => r.chargeId === ids.c)).toBe(true);
    const live = await app.gql(OF_CHARGE, { id: ids.live }, app.liveKey);
    expect(live.data.charge.balanceTransactions.map((r: Node) => [r.type, r.amount, r.livemode])).toEqual([["PAYMENT", "9.00", true]]);
  });
});
