// Charge search over GraphQL and REST (the start of an id, an order id, a hash, an address, an email;
// a hash as the dashboard shortens it; an exact amount), kept to the key's merchant and mode, paged
// like any list; the display status of charges partly paid, underpaid or refunded; the event log
// filtered by type, kind of object and object id.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { searchCondition } from "../../src/domain/charges/search.js";
import { chargeFilter } from "../../src/domain/charges/list.js";
import { filtersOnly } from "../../src/domain/charges/requests.js";
import { parseInput } from "../../src/domain/validation.js";
import { liveChains, POLLING, recordPayment, startApp, type TestApp } from "../helpers/harness.js";

let app: TestApp;
// Charges by name, in the order they were made (so the newest is last).
const ids: Record<string, string> = {};
// A hash whose shortened form ("0x1234abcd…89abcdef") names it, stored in upper case, and one that
// shares its start but not its end.
const HASH = `0x1234ABCD${"0".repeat(48)}89ABCDEF`;
const TWIN = `0x1234abcd${"1".repeat(48)}00000000`;
const SHORT = `${HASH.slice(0, 10).toLowerCase()}…${HASH.slice(-8).toLowerCase()}`;
const CLONE = "0xAbCdEf0123456789aBcDeF0123456789AbCdEf01";
let foreignCharge: string;

beforeAll(async () => {
  app = await startApp(POLLING, { chains: liveChains() });
  const alice = (await app.call("POST", "/v1/customers", { body: { email: "Alice.Smith@Shop.example", name: "Alice" } })).body;
  const bob = (await app.call("POST", "/v1/customers", { body: { email: "bob_x@shop.example", name: "Bob" } })).body;
  for (const [name, orderId, amount, customerId] of [
    ["paid", "srch-1", "12.50", alice.id],
    ["twin", "srch-2", "12.55", bob.id],
    ["big", "srch-3", "125", null],
    ["underscore", "a_c", "3", null],
    ["plain", "abc", "4", null],
  ] as const) {
    ids[name] = (await app.call("POST", "/v1/charges", { body: { orderId, amount, ...(customerId && { customerId }) } })).body.id;
  }
  const prisma = app.db.prisma;
  await prisma.charge.update({ where: { id: ids.paid }, data: { chainId: 31337, cloneAddress: CLONE } });
  await recordPayment(prisma, { chargeId: ids.paid!, txHash: HASH, amount: "12500000" });
  await recordPayment(prisma, { chargeId: ids.twin!, txHash: TWIN, amount: "1" });
  // The same order id and amount in live mode, and the same hash at another merchant's charge.
  await app.call("POST", "/v1/charges", { key: app.liveKey, body: { orderId: "srch-1", amount: "12.50" } });
  const other = await app.newMerchant();
  foreignCharge = (await app.call("POST", "/v1/charges", { key: other.apiKeys.test.secret, body: { orderId: "srch-1", amount: "12.50" } })).body.id;
  await recordPayment(prisma, { chargeId: foreignCharge, txHash: HASH, amount: "1", id: "xfer_foreign" });
}, 60_000);
afterAll(() => app?.stop());

const SEARCH =
  "query($s: String, $first: Int, $after: String, $last: Int, $before: String) { charges(search: $s, first: $first, after: $after, last: $last, before: $before) { totalCount pageInfo { endCursor startCursor hasNextPage } edges { node { id } } } }";

async function find(search: string, key?: string): Promise<string[]> {
  const res = await app.gql(SEARCH, { s: search, first: 50 }, key);
  expect(res.errors, search).toBeUndefined();
  const found = res.data.charges.edges.map((e: { node: { id: string } }) => e.node.id);
  expect(res.data.charges.totalCount, search).toBe(found.length);
  return found;
}

/** Charges by name, newest first, as lists give them. */
const named = (...names: string[]) => names.map((n) => ids[n]!).reverse();

describe("charge search", () => {
  it("finds by the start of a charge id or an order id, taken literally", async () => {
    expect(await find(ids.paid!)).toEqual([ids.paid]);
    expect(await find(ids.paid!.slice(0, 12))).toContain(ids.paid);
    expect(await find("srch-")).toEqual(named("paid", "twin", "big"));
    expect(await find("srch-1")).toEqual([ids.paid]);
    // LIKE's wildcards are plain characters here.
    expect(await find("a_")).toEqual([ids.underscore]);
    expect(await find("%")).toEqual([]);
  });

  it("finds by the start of a transaction hash or a clone address whatever their case, and by a hash as the dashboard shortens it", async () => {
    expect(await find(HASH.slice(0, 10).toLowerCase())).toEqual(named("paid", "twin"));
    expect(await find(HASH.toLowerCase())).toEqual([ids.paid]);
    expect(await find(SHORT)).toEqual([ids.paid]);
    expect(await find(SHORT.replace("…", "..."))).toEqual([ids.paid]);
    expect(await find(`${TWIN.slice(0, 10)}…${TWIN.slice(-8)}`)).toEqual([ids.twin]);
    expect(await find(`${HASH.slice(0, 10)}…deadbeef`)).toEqual([]);
    expect(await find(CLONE.slice(0, 12).toUpperCase().replace("0X", "0x"))).toEqual([ids.paid]);
    // Never another merchant's charge, though its payment has the same hash.
    expect(await find(SHORT)).not.toContain(foreignCharge);
  });

  it("finds by the start of the customer's email in any case, and by an exact amount", async () => {
    expect(await find("alice.sm")).toEqual([ids.paid]);
    expect(await find("ALICE")).toEqual([ids.paid]);
    expect(await find("bob_")).toEqual([ids.twin]);
    expect(await find("bob%")).toEqual([]);
    for (const amount of ["12.50", "12.5", "12.500000", "12.5 USDC"]) expect(await find(amount), amount).toEqual([ids.paid]);
    expect(await find("125")).toEqual([ids.big]);
    expect(await find("12.56")).toEqual([]);
  });

  it("keeps to the key's mode and finds nothing where nothing matches", async () => {
    const live = await find("srch-1", app.liveKey);
    expect(live).toHaveLength(1);
    expect(live).not.toContain(ids.paid);
    expect(await find("12.50", app.liveKey)).toEqual(live);
    expect(await find(SHORT, app.liveKey)).toEqual([]);
    expect(await find("no-such-order-or-anything")).toEqual([]);
  });

  it("pages a search forwards and backwards, and combines it with the other filters", async () => {
    const all = named("paid", "twin", "big");
    const first = (await app.gql(SEARCH, { s: "srch-", first: 2 })).data.charges;
    expect(first.edges.map((e: any) => e.node.id)).toEqual(all.slice(0, 2));
    expect(first.pageInfo.hasNextPage).toBe(true);
    expect(first.totalCount).toBe(3);
    const second = (await app.gql(SEARCH, { s: "srch-", first: 2, after: first.pageInfo.endCursor })).data.charges;
    expect(second.edges.map((e: any) => e.node.id)).toEqual(all.slice(2));
    expect(second.pageInfo.hasNextPage).toBe(false);
    const back = (await app.gql(SEARCH, { s: "srch-", last: 2, before: all[2] })).data.charges;
    expect(back.edges.map((e: any) => e.node.id)).toEqual(all.slice(0, 2));
    const oldest = (await app.gql(SEARCH, { s: "srch-", last: 1 })).data.charges;
    expect(oldest.edges.map((e: any) => e.node.id)).toEqual(all.slice(2));

    await app.db.prisma.charge.update({ where: { id: ids.twin }, data: { status: "CANCELLED" } });
    const cancelled = await app.gql('query { charges(first: 10, search: "srch-", status: CANCELLED) { totalCount edges { node { id } } } }');
    expect(cancelled.data.charges).toEqual({ totalCount: 1, edges: [{ node: { id: ids.twin } }] });
    await app.db.prisma.charge.update({ where: { id: ids.twin }, data: { status: "PENDING" } });
  });

  it("is the same over REST, by page number or by cursor, and in the where-clause the CSV export reads", async () => {
    const numbered = await app.call("GET", "/v1/charges?search=srch-&limit=2&page=2");
    expect(numbered.status).toBe(200);
    expect(numbered.body).toMatchObject({ page: 2, limit: 2, total: 3, hasMore: false });
    expect(numbered.body.data.map((c: { id: string }) => c.id)).toEqual(named("paid", "twin", "big").slice(2));
    const byCursor = await app.call("GET", `/v1/charges?search=${encodeURIComponent(SHORT)}&limit=10&startingAfter=${ids.plain}`);
    expect(byCursor.body.data.map((c: { id: string }) => c.id)).toEqual([ids.paid]);
    const scope = { merchantId: app.merchant.merchant.id, livemode: false };
    for (const term of ["srch-", "a_", SHORT, HASH.slice(0, 10), CLONE.slice(0, 12), "ALICE", "bob_", "12.5", "nothing-at-all"]) {
      const rows = await app.db.prisma.charge.findMany({
        where: chargeFilter(scope, parseInput(filtersOnly, { search: term })),
        orderBy: [{ createdAt: "desc" }, { id: "desc" }],
      });
      expect(
        rows.map((c) => c.id),
        term,
      ).toEqual(await find(term));
    }
  });

  it("reads every kind of match through an index, never by scanning a table", async () => {
    const scope = { merchantId: app.merchant.merchant.id, livemode: false };
    for (const term of ["srch-1", SHORT, "alice", "12.50", ids.paid!]) {
      // With sequential scans priced out, any reading that no index serves would still show one.
      const plan = await app.db.prisma.$transaction(async (tx) => {
        await tx.$executeRawUnsafe("SET LOCAL enable_seqscan = off");
        return tx.$queryRaw<{ "QUERY PLAN": string }[]>`
          EXPLAIN SELECT id FROM charges WHERE merchant_id = ${scope.merchantId} AND livemode = false AND ${searchCondition(scope, term)}`;
      });
      const text = plan.map((r) => r["QUERY PLAN"]).join("\n");
      expect(text, `${term}:\n${text}`).not.toMatch(/Seq Scan/);
    }
  });
});

describe("display status", () => {
  it("tells partly paid, underpaid, partly refunded and refunded charges from their status", async () => {
    const prisma = app.db.prisma;
    const make = async (orderId: string, data: Record<string, unknown>) => {
      const id = (await app.call("POST", "/v1/charges", { body: { orderId, amount: "10" } })).body.id;
      if (Object.keys(data).length > 0) await prisma.charge.update({ where: { id }, data });
      return id;
    };
    const cases: [string, Record<string, unknown>, string][] = [
      ["ds-pending", {}, "PENDING"],
      ["ds-partly-paid", { amountReceived: "4000000" }, "PARTLY_PAID"],
      ["ds-completed", { status: "COMPLETED", amountReceived: "10000000" }, "COMPLETED"],
      ["ds-partly-refunded", { status: "COMPLETED", amountReceived: "10000000", amountRefunded: "2500000" }, "PARTLY_REFUNDED"],
      ["ds-refunded", { status: "COMPLETED", amountReceived: "10000000", amountRefunded: "10000000" }, "REFUNDED"],
      ["ds-underpaid", { status: "EXPIRED", amountReceived: "3000000" }, "UNDERPAID"],
      ["ds-expired", { status: "EXPIRED" }, "EXPIRED"],
      ["ds-cancelled", { status: "CANCELLED" }, "CANCELLED"],
    ];
    for (const [orderId, data, expected] of cases) {
      const id = await make(orderId, data);
      const res = await app.gql("query($id: ID!) { charge(id: $id) { status displayStatus } }", { id });
      expect(res.data.charge.displayStatus, orderId).toBe(expected);
    }
    const listed = await app.gql('query { charges(first: 1, search: "ds-partly-refunded") { edges { node { displayStatus needsReview } } } }');
    expect(listed.data.charges.edges[0].node).toEqual({ displayStatus: "PARTLY_REFUNDED", needsReview: false });
  });
});

describe("event log filters", () => {
  it("filters by type, by kind of object and by object id, with counts and paging, over GraphQL and REST", async () => {
    const customer = (await app.call("POST", "/v1/customers", { body: { email: "events@shop.example", name: "Ev" } })).body;
    const charge = (await app.call("POST", "/v1/charges", { body: { orderId: "ev-1", amount: "1", customerId: customer.id } })).body;
    await app.call("DELETE", `/v1/charges/${charge.id}`);
    const EVENTS =
      "query($type: String, $objectType: EventObjectType, $objectId: ID, $first: Int, $after: String) { events(type: $type, objectType: $objectType, objectId: $objectId, first: $first, after: $after) { totalCount pageInfo { endCursor hasNextPage } edges { node { id type data } } } }";
    const list = async (vars: Record<string, unknown>) => {
      const res = await app.gql(EVENTS, { first: 50, ...vars });
      expect(res.errors, JSON.stringify(vars)).toBeUndefined();
      return res.data.events;
    };
    const ofCharge = await list({ objectId: charge.id });
    expect(ofCharge.edges.map((e: any) => e.node.type)).toEqual(["charge.cancelled", "charge.pending"]);
    expect(ofCharge.totalCount).toBe(2);
    expect(ofCharge.edges.every((e: any) => e.node.data.id === charge.id)).toBe(true);

    const cancelled = await list({ objectId: charge.id, type: "charge.cancelled" });
    expect(cancelled.edges.map((e: any) => e.node.type)).toEqual(["charge.cancelled"]);
    expect((await list({ objectId: charge.id, objectType: "CUSTOMER" })).totalCount).toBe(0);
    expect((await list({ objectId: customer.id })).edges.map((e: any) => e.node.type)).toEqual(["customer.created"]);

    const customers = await list({ objectType: "CUSTOMER" });
    expect(customers.edges.length).toBeGreaterThanOrEqual(3);
    expect(customers.edges.every((e: any) => e.node.type.startsWith("customer."))).toBe(true);
    expect(customers.totalCount).toBe(customers.edges.length);

    // Paged by object id: one at a time, the same two events.
    const page1 = await list({ objectId: charge.id, first: 1 });
    expect(page1.pageInfo.hasNextPage).toBe(true);
    const page2 = await list({ objectId: charge.id, first: 1, after: page1.pageInfo.endCursor });
    expect([...page1.edges, ...page2.edges].map((e: any) => e.node.id)).toEqual(ofCharge.edges.map((e: any) => e.node.id));
    expect(page2.pageInfo.hasNextPage).toBe(false);

    // Another merchant's or the other mode's events never show.
    expect((await app.gql(EVENTS, { objectId: charge.id }, app.liveKey)).data.events.totalCount).toBe(0);

    const rest = await app.call("GET", `/v1/events?objectId=${charge.id}&objectType=charge`);
    expect(rest.status).toBe(200);
    expect(rest.body.data.map((e: { id: string }) => e.id)).toEqual(ofCharge.edges.map((e: any) => e.node.id));
    const bad = await app.call("GET", "/v1/events?objectType=planet");
    expect(bad.status).toBe(400);
    expect(bad.body.param).toBe("objectType");
  });
});
