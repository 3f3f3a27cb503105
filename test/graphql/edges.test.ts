// GraphQL's front doors at their edges: node/nodes with ids that name nothing the caller may see,
// and operations over WebSocket that fail on their own without taking the socket down.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MAX_NODE_IDS } from "../../src/graphql/builder.js";
import { QUERY_LIMITS } from "../../src/graphql/yoga.js";
import { liveChains, startApp, type TestApp } from "../helpers/harness.js";
import { subscribe, wsClient } from "../helpers/live.js";

let app: TestApp;
beforeAll(async () => {
  app = await startApp({}, { chains: liveChains() });
});
afterAll(() => app?.stop());

const NODE = `query($id: ID!) { node(id: $id) { __typename id } }`;
const NODES = `query($ids: [ID!]!) { nodes(ids: $ids) { __typename id } }`;
const base64 = (s: string) => Buffer.from(s).toString("base64");

/** POSTs a GraphQL request; every answer here must be a 200 without an internal error. */
async function gql(query: string, variables: Record<string, unknown>, key: string | null = app.testKey) {
  const res = await app.call("POST", "/graphql", { key, body: { query, variables } });
  expect(res.status, res.text).toBe(200);
  expect(res.text).not.toMatch(/internal_error/);
  return res.body as { data: any; errors?: any[] };
}

let made = 0;
/** A customer, a charge and the charge's event of the merchant (and mode) behind `key`. */
async function objectsOf(key: string): Promise<{ id: string; typename: string }[]> {
  made++;
  const customer = (await app.call("POST", "/v1/customers", { key, body: { email: `e${made}@edges.example`, name: "Edge" } })).body;
  const charge = (await app.call("POST", "/v1/charges", { key, body: { orderId: `edge-${made}`, amount: "5.00" } })).body;
  const event = (await app.call("GET", "/v1/events?limit=1&type=charge.pending", { key })).body.data[0];
  expect(event.data.id).toBe(charge.id);
  return [
    { id: customer.id, typename: "Customer" },
    { id: charge.id, typename: "Charge" },
    { id: event.id, typename: "Event" },
  ];
}

describe("node and nodes", () => {
  let mine: { id: string; typename: string }[];
  let foreign: string[];
  beforeAll(async () => {
    mine = await objectsOf(app.testKey);
    const other = await app.newMerchant();
    // Another merchant's objects, and this merchant's own live-mode ones, seen with this test key.
    foreign = [...(await objectsOf(other.apiKeys.test.secret)), ...(await objectsOf(app.liveKey))].map((o) => o.id);
  });

  const unknown = ["cus_000000000000000000000000", "chrg_000000000000000000000000", "evt_000000000000000000000000"];
  const malformed = [
    "",
    "x",
    base64("Charge:"),
    base64("Nope:abc"),
    base64("Charge:chrg_000000000000000000000000"),
    `chrg_${"a".repeat(10_000)}`,
    "x".repeat(10_000),
    "chrg_",
    "chrg_short",
    "cus_!!!!!!!!!!!!!!!!!!!!!!!!",
    "nope_000000000000000000000000",
    // Names an Object.prototype member, not a type.
    "constructor_000000000000000000000000",
    "__proto___000000000000000000000000",
    "évt_000000000000000000000000",
  ];

  it("finds the caller's own objects", async () => {
    for (const { id, typename } of mine) expect(await gql(NODE, { id })).toEqual({ data: { node: { __typename: typename, id } } });
    expect(await gql(NODES, { ids: mine.map((o) => o.id) })).toEqual({ data: { nodes: mine.map(({ id, typename }) => ({ __typename: typename, id })) } });
  });

  it.each([
    ["unknown", () => unknown],
    ["foreign (another merchant's, or the other mode's)", () => foreign],
    ["malformed", () => malformed],
  ])("is null, without an error, for %s ids", async (_kind, ids) => {
    for (const id of ids()) expect(await gql(NODE, { id }), id.slice(0, 40)).toEqual({ data: { node: null } });
    expect(await gql(NODES, { ids: ids() })).toEqual({ data: { nodes: ids().map(() => null) } });
  });

  it("answers a foreign id exactly as an unknown one, and keeps the found ones of a mixed list in place", async () => {
    const [customer, charge] = mine;
    const ids = [foreign[0], customer!.id, unknown[1], "x", charge!.id, foreign[4]];
    expect(await gql(NODES, { ids })).toEqual({
      data: { nodes: [null, { __typename: "Customer", id: customer!.id }, null, null, { __typename: "Charge", id: charge!.id }, null] },
    });
  });

  it("needs a key, whatever the ids", async () => {
    for (const id of [mine[0]!.id, unknown[0], "x"]) {
      const res = await gql(NODE, { id }, null);
      expect(res.errors?.map((e) => e.extensions.code)).toEqual(["api_key_missing"]);
      expect(res.data).toEqual({ node: null });
    }
    const res = await gql(NODES, { ids: [mine[0]!.id, unknown[0], "x"] }, null);
    expect(res.errors?.map((e) => e.extensions.code)).toEqual(["api_key_missing"]);
  });

  it(`takes at most ${MAX_NODE_IDS} ids at once`, async () => {
    const ids = Array.from({ length: MAX_NODE_IDS }, (_, i) => mine[i % mine.length]!.id);
    expect((await gql(NODES, { ids })).data.nodes).toHaveLength(MAX_NODE_IDS);
    const res = await gql(NODES, { ids: [...ids, "x"] });
    expect(res.errors?.[0]?.extensions).toMatchObject({ code: "parameter_invalid", param: "ids" });
  });
});

describe("one failing operation over WebSocket", () => {
  const CHARGE_UPDATED = `subscription($id: ID!) { chargeUpdated(id: $id) { id status } }`;
  // Charge.customer and Customer.charges nest without end: four levels a round.
  const deep = (rounds: number): string => (rounds === 0 ? "id" : `customer { charges(first: 1) { edges { node { ${deep(rounds - 1)} } } } }`);

  it("fails only that operation: the socket and its other subscriptions stay open", async () => {
    const charge = (await app.call("POST", "/v1/charges", { body: { orderId: "edge-ws", amount: "5.00" } })).body;
    const client = wsClient(app.url, app.testKey);
    const live = subscribe(client, CHARGE_UPDATED, { id: charge.id });
    await live.waitFor(1);

    const failing: [string, string, Record<string, unknown>, RegExp][] = [
      ["depth", `subscription($id: ID!) { chargeUpdated(id: $id) { ${deep(4)} } }`, { id: charge.id }, /depth/i],
      [
        "aliases",
        `subscription($id: ID!) { chargeUpdated(id: $id) { ${Array.from({ length: 20 }, (_, i) => `a${i}: id`).join(" ")} } }`,
        { id: charge.id },
        /alias/i,
      ],
      ["tokens", `subscription($id: ID!) { chargeUpdated(id: $id) { ${"id ".repeat(QUERY_LIMITS.maxTokens)} } }`, { id: charge.id }, /token/i],
      [
        "directives",
        `subscription($id: ID!) { chargeUpdated(id: $id) { id ${"@include(if: true) ".repeat(QUERY_LIMITS.maxDirectives + 1)} } }`,
        { id: charge.id },
        /directive/i,
      ],
      ["cost", `subscription($id: ID!) { chargeUpdated(id: $id) { ${deep(3)} } }`.replaceAll("first: 1", "first: 100"), { id: charge.id }, /cost/i],
      ["syntax", `subscription { chargeUpdated(`, {}, /syntax/i],
      ["unknown field", `subscription($id: ID!) { chargeUpdated(id: $id) { nope } }`, { id: charge.id }, /nope/],
      ["missing variable", CHARGE_UPDATED, {}, /\$id/],
      ["no such charge", CHARGE_UPDATED, { id: "chrg_000000000000000000000000" }, /resource_missing/],
    ];
    for (const [what, query, variables, message] of failing) {
      const r = subscribe(client, query, variables);
      await r.ended();
      expect(r.values, what).toEqual([]);
      expect(JSON.stringify(r.errors), what).toMatch(message);
      expect(JSON.stringify(r.errors), what).not.toMatch(/internal_error/);
    }

    // The first subscription still follows the charge, and the socket takes new operations.
    await app.call("DELETE", `/v1/charges/${charge.id}`);
    expect((await live.waitFor(2)).map((v) => v.chargeUpdated.status)).toEqual(["PENDING", "CANCELLED"]);
    const again = subscribe(client, CHARGE_UPDATED, { id: charge.id });
    // Answered after every failure above (one socket, in order): none of them closed it.
    expect((await again.waitFor(1))[0].chargeUpdated.status).toBe("CANCELLED");
    expect(client.closes).toEqual([]);
    expect(live.completed).toBe(false);
    await client.dispose();
  });

  it("fails only that operation when the key runs out of reads", async () => {
    // The first subscription's start spends the key's one read of the minute.
    const limited = await startApp({ RATE_LIMIT_READ: "1" });
    try {
      const charge = (await limited.call("POST", "/v1/charges", { body: { orderId: "edge-rl", amount: "5.00" } })).body;
      const client = wsClient(limited.url, limited.testKey);
      const live = subscribe(client, CHARGE_UPDATED, { id: charge.id });
      await live.waitFor(1);
      const refused = subscribe(client, CHARGE_UPDATED, { id: charge.id });
      await refused.ended();
      expect(JSON.stringify(refused.errors)).toMatch(/rate_limited/);
      await limited.call("DELETE", `/v1/charges/${charge.id}`);
      expect((await live.waitFor(2)).map((v) => v.chargeUpdated.status)).toEqual(["PENDING", "CANCELLED"]);
      expect(client.closes).toEqual([]);
      await client.dispose();
    } finally {
      await limited.stop();
    }
  });
});
