// What the dashboard reads besides the API's resources: charge search (id, order id, clone address,
// transaction hash), the home page's stats, and a charge's timeline of events; and every GraphQL
// document of the dashboard (graphql(`…`) in src/dashboard/web) is valid against the served schema.
import { readdirSync, readFileSync } from "node:fs";
import { Kind, NoUnusedFragmentsRule, parse, specifiedRules, validate } from "graphql";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { schema } from "../../src/graphql/schema.js";
import { POLLING, recordPayment, startApp, type TestApp } from "../helpers/harness.js";

const WEB = new URL("../../src/dashboard/web/", import.meta.url);
const documents = readdirSync(WEB, { recursive: true, encoding: "utf8" })
  .filter((file) => /\.tsx?$/.test(file))
  .flatMap((file) => [...readFileSync(new URL(file, WEB), "utf8").matchAll(/graphql\(\s*`([\s\S]*?)`\s*[,)]/g)].map((m) => [file, m[1]!] as const));
const isFragment = (document: string) => parse(document).definitions.every((d) => d.kind === Kind.FRAGMENT_DEFINITION);
/** Every fragment of the dashboard: an operation is checked with them, as the build persists it with those it spreads. */
const fragments = documents.filter(([, d]) => isFragment(d)).map(([, d]) => d);
const rulesButUnused = specifiedRules.filter((rule) => rule !== NoUnusedFragmentsRule);

describe("the dashboard's GraphQL documents", () => {
  it("are found, fragments among them", () => {
    expect(documents.length).toBeGreaterThanOrEqual(40);
    expect(fragments.length).toBeGreaterThanOrEqual(6);
  });

  it.each(documents.map(([file, d]) => [file, d.trim().split("\n")[0]!, d]))("%s: %s … is valid against the schema", (_file, _first, document) => {
    const withFragments = isFragment(document) ? fragments : [document, ...fragments];
    expect(validate(schema, parse(withFragments.join("\n")), rulesButUnused).map((e) => e.message)).toEqual([]);
  });

  it("spreads every fragment in some operation", () => {
    const all = parse(documents.map(([, d]) => d).join("\n"));
    expect(validate(schema, all, [NoUnusedFragmentsRule]).map((e) => e.message)).toEqual([]);
  });
});

describe("dashboard queries", () => {
  let app: TestApp;
  const ids: string[] = [];
  const CLONE = "0x1111111111111111111111111111111111111111";
  const PAY_TX = `0x${"ab".repeat(32)}`;
  const FLUSH_TX = `0x${"cd".repeat(32)}`;
  beforeAll(async () => {
    app = await startApp(POLLING);
    for (const [orderId, amount] of [
      ["dash-1", "10.50"],
      ["dash-2", "2"],
      ["dash-3", "7.25"],
    ] as const) {
      ids.push((await app.call("POST", "/v1/charges", { body: { orderId, amount } })).body.id);
    }
    const prisma = app.db.prisma;
    const now = new Date();
    await prisma.charge.update({
      where: { id: ids[0] },
      data: {
        status: "COMPLETED",
        completedAt: now,
        amountReceived: "10500000",
        feeAmount: "105000",
        chainId: 31337,
        cloneAddress: CLONE,
        flushTxHash: FLUSH_TX,
      },
    });
    await prisma.charge.update({
      where: { id: ids[2] },
      data: { status: "COMPLETED", completedAt: new Date(now.getTime() - 2 * 86_400_000), amountReceived: "7250000", feeAmount: "72500" },
    });
    await recordPayment(prisma, { chargeId: ids[0]!, txHash: PAY_TX, fromAddress: CLONE, amount: "10500000" });
    // A live-mode charge with the same order id must never show up in test mode.
    await app.call("POST", "/v1/charges", { key: app.liveKey, body: { orderId: "dash-1", amount: "1" } });
  }, 60_000);
  afterAll(() => app?.stop());

  it("finds a charge by id, order id, clone address or transaction hash (or their start), whatever the case of hex", async () => {
    const find = async (search: string) => {
      const res = await app.gql("query($s: String) { charges(first: 10, search: $s) { totalCount edges { node { id } } } }", { s: search });
      expect(res.errors, search).toBeUndefined();
      return res.data.charges.edges.map((e: { node: { id: string } }) => e.node.id);
    };
    for (const term of [ids[0]!, "dash-1", CLONE.toUpperCase().replace("0X", "0x"), PAY_TX.toUpperCase().replace("0X", "0x"), FLUSH_TX, ` ${ids[0]} `]) {
      expect(await find(term), term).toEqual([ids[0]]);
    }
    // A search is a prefix: every test-mode charge whose order id starts so, newest first.
    expect(await find("dash")).toEqual([...ids].reverse());
    expect(await find("dash-4")).toEqual([]);
    const rest = await app.call("GET", `/v1/charges?search=dash-2`);
    expect(rest.body.data.map((c: { id: string }) => c.id)).toEqual([ids[1]]);
    const tooLong = await app.call("GET", `/v1/charges?search=${"x".repeat(101)}`);
    expect(tooLong.status).toBe(400);
    expect(tooLong.body.param).toBe("search");
  });

  it("sums the completed volume per day and the fees over the window, and counts by status", async () => {
    const res = await app.gql("{ chargeStats(days: 7) { days byStatus { status count } completedVolume { day amount } feesPaid } }");
    expect(res.errors).toBeUndefined();
    const stats = res.data.chargeStats;
    expect(stats.days).toBe(7);
    expect(stats.byStatus).toEqual([
      { status: "PENDING", count: 1 },
      { status: "RECEIVED", count: 0 },
      { status: "COMPLETED", count: 2 },
      { status: "EXPIRED", count: 0 },
      { status: "CANCELLED", count: 0 },
    ]);
    expect(stats.completedVolume).toHaveLength(7);
    const today = new Date().toISOString().slice(0, 10);
    const twoDaysAgo = new Date(Date.now() - 2 * 86_400_000).toISOString().slice(0, 10);
    expect(stats.completedVolume.at(-1)).toEqual({ day: today, amount: "10.50" });
    expect(stats.completedVolume.find((d: { day: string }) => d.day === twoDaysAgo)).toEqual({ day: twoDaysAgo, amount: "7.25" });
    expect(stats.completedVolume.filter((d: { amount: string }) => d.amount !== "0.00")).toHaveLength(2);
    expect(stats.feesPaid).toBe("0.1775");
    const bad = await app.gql("{ chargeStats(days: 0) { days } }");
    expect(bad.errors?.[0].extensions).toMatchObject({ code: "parameter_invalid", param: "days" });
  });

  it("lists a charge's payments in chain order, with the sender as a hint", async () => {
    const res = await app.gql("query($id: ID!) { charge(id: $id) { payments { txHash logIndex blockNumber from amount status } } }", { id: ids[0] });
    expect(res.data.charge.payments).toEqual([{ txHash: PAY_TX, logIndex: 0, blockNumber: 1, from: CLONE, amount: "10.50", status: "pending" }]);
    const other = await app.gql("query($id: ID!) { charge(id: $id) { payments { txHash } } }", { id: ids[1] });
    expect(other.data.charge.payments).toEqual([]);
  });

  it("shows a charge's timeline, oldest first, and nothing of another charge", async () => {
    expect((await app.call("DELETE", `/v1/charges/${ids[1]}`)).status).toBe(200);
    const res = await app.gql("query($id: ID!) { charge(id: $id) { events { type data deliveries { status } } } }", { id: ids[1] });
    expect(res.errors).toBeUndefined();
    expect(res.data.charge.events.map((e: { type: string }) => e.type)).toEqual(["charge.pending", "charge.cancelled"]);
    expect(res.data.charge.events.every((e: { data: { id: string } }) => e.data.id === ids[1])).toBe(true);
  });
});
