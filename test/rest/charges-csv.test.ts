// GET /v1/charges/export.csv (domain/charges-csv.ts): a header row, one line per charge of the key's
// merchant and mode matching the list's filters and the period (createdGte inclusive, createdLt
// exclusive), newest first, every page; money fields as the ledger made them; a bad date or a page
// or cursor refused with a JSON 400 naming the parameter, before any CSV. GET /v1/charges?format=csv,
// the way older integrations ask, still answers the same file.
import { getAddress } from "ethers";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CHARGE_CSV_COLUMNS } from "../../src/domain/charges-csv.js";
import { ChainHistory, chargeOn } from "../helpers/ledger.js";
import { expectError, liveChains, POLLING, startApp, type TestApp } from "../helpers/harness.js";

const DEVNET = 31337;
const BUYER = getAddress("0x00000000000000000000000000000000000b0b02");
const FEE_WALLET = getAddress("0x00000000000000000000000000000000000fee02");
const DAY = 24 * 60 * 60 * 1000;
const T0 = Date.parse("2026-05-10T12:00:00.000Z");
const HEADER =
  "id,orderId,status,amount,amountReceived,amountRefunded,feeAmount,netAmount,amountOverpaid,currency,chainId,customerId,customerEmail,description,invoiceId,paymentLinkId,needsReview,createdAt,completedAt,livemode";

let app: TestApp;
/** The test-mode charges of the main merchant, by name, with the day (T0 + n days) each was created. */
const made: Record<string, { id: string; day: number }> = {};
let customerId: string;
let otherKey: string;

/** Sets a charge's creation time to T0 + `day` days (charges are created now; the export filters by time). */
const backdate = (id: string, day: number) => app.db.prisma.charge.update({ where: { id }, data: { createdAt: new Date(T0 + day * DAY) } });
const iso = (day: number) => new Date(T0 + day * DAY).toISOString();

beforeAll(async () => {
  app = await startApp(POLLING, { chains: liveChains() });
  customerId = (await app.call("POST", "/v1/customers", { body: { email: "csv.buyer@example.com", name: "Csv Buyer" } })).body.id;
  const devnet = new ChainHistory(app, DEVNET);

  // Paid in full and paid out (fee 1%): its money fields are the ledger's.
  const paid = await chargeOn(app, app.testKey, DEVNET, "20.00");
  await app.db.prisma.charge.update({ where: { id: paid.id }, data: { customerId } });
  await devnet.sees({ from: BUYER, to: paid.address, amount: "20.00" });
  await devnet.confirm(new Date(T0));
  await devnet.paysOut(paid.address, "20.00", FEE_WALLET);
  await devnet.confirm(new Date(T0 + 60_000));
  made.paid = { id: paid.id, day: 0 };

  // Pending, with a description a spreadsheet would otherwise run, and one with a comma.
  const formula = await app.call("POST", "/v1/charges", { body: { orderId: "csv-formula", amount: "5", description: "=HYPERLINK(1)" } });
  made.formula = { id: formula.body.id, day: 1 };
  const comma = await app.call("POST", "/v1/charges", { body: { orderId: "csv-comma", amount: "7.5", description: "two mugs, one plate" } });
  made.comma = { id: comma.body.id, day: 2 };
  const cancelled = await app.call("POST", "/v1/charges", { body: { orderId: "csv-cancelled", amount: "1" } });
  await app.call("DELETE", `/v1/charges/${cancelled.body.id}`);
  made.cancelled = { id: cancelled.body.id, day: 3 };
  for (const { id, day } of Object.values(made)) await backdate(id, day);

  // Another merchant's and a live charge, on the same days: never in this key's export.
  otherKey = (await app.newMerchant()).apiKeys.test.secret;
  const other = await app.call("POST", "/v1/charges", { key: otherKey, body: { orderId: "csv-other", amount: "3" } });
  await backdate(other.body.id, 1);
  const live = await app.call("POST", "/v1/charges", { key: app.liveKey, body: { orderId: "csv-live", amount: "4" } });
  await backdate(live.body.id, 1);
}, 60_000);
afterAll(() => app?.stop());

/** The export's lines (header first), checked as a CSV answer. */
async function csv(query: string, key = app.testKey): Promise<string[]> {
  const res = await app.call("GET", `/v1/charges/export.csv?${query}`, { key });
  expect(res.status, res.text).toBe(200);
  expect(res.headers.get("content-type")).toBe("text/csv; charset=utf-8");
  expect(res.text.endsWith("\r\n")).toBe(true);
  return res.text.slice(0, -2).split("\r\n");
}
const idOf = (line: string) => line.split(",")[0];

describe("GET /v1/charges/export.csv", () => {
  it("answers a header row, then every charge of the key's merchant and mode, newest first, as the API shows it", async () => {
    const res = await app.call("GET", "/v1/charges/export.csv");
    expect(res.headers.get("content-disposition")).toBe('attachment; filename="charges_test.csv"');
    const [header, ...rows] = await csv("");
    expect(header).toBe(HEADER);
    expect(header!.split(",")).toEqual([...CHARGE_CSV_COLUMNS]);
    expect(rows.map(idOf)).toEqual([made.cancelled!.id, made.comma!.id, made.formula!.id, made.paid!.id]);

    const json = (await app.call("GET", `/v1/charges/${made.paid!.id}`)).body;
    const paid = rows.at(-1)!.split(",");
    const field = (name: (typeof CHARGE_CSV_COLUMNS)[number]) => paid[CHARGE_CSV_COLUMNS.indexOf(name)];
    expect(field("status")).toBe("COMPLETED");
    expect([field("amount"), field("amountReceived"), field("feeAmount"), field("netAmount"), field("amountRefunded")]).toEqual([
      "20.00",
      "20.00",
      "0.20",
      "19.80",
      "0.00",
    ]);
    expect([field("amountReceived"), field("feeAmount"), field("netAmount")]).toEqual([json.amountReceived, json.feeAmount, json.netAmount]);
    expect([field("customerId"), field("customerEmail"), field("chainId"), field("livemode")]).toEqual([customerId, "csv.buyer@example.com", "31337", "false"]);
    expect(field("createdAt")).toBe(iso(0));
    expect(field("completedAt")).toBe(json.completedAt);

    // A formula is written as text, a comma quoted; fields a charge does not have yet are empty.
    const formula = rows.find((l) => idOf(l) === made.formula!.id)!;
    expect(formula).toContain(",'=HYPERLINK(1),");
    expect(formula.split(",").slice(4, 8)).toEqual(["", "0.00", "", ""]);
    expect(rows.find((l) => idOf(l) === made.comma!.id)).toContain(',"two mugs, one plate",');
    expect(rows.find((l) => idOf(l) === made.cancelled!.id)!.split(",")[2]).toBe("CANCELLED");
  });

  it("takes a period (createdGte inclusive, createdLt exclusive) and the list's filters", async () => {
    const [, ...window] = await csv(`createdGte=${iso(1)}&createdLt=${iso(3)}`);
    expect(window.map(idOf)).toEqual([made.comma!.id, made.formula!.id]);
    const [, ...since] = await csv(`createdGte=${encodeURIComponent("2026-05-12T14:00:00+02:00")}`);
    expect(since.map(idOf)).toEqual([made.cancelled!.id, made.comma!.id]);
    const [, ...completed] = await csv("status=COMPLETED");
    expect(completed.map(idOf)).toEqual([made.paid!.id]);
    const [header, ...none] = await csv(`createdLt=${iso(-1)}`);
    expect([header, none]).toEqual([HEADER, []]);
    // The JSON list takes the same period.
    const listed = await app.call("GET", `/v1/charges?createdGte=${iso(1)}&createdLt=${iso(3)}`);
    expect(listed.body.data.map((c: { id: string }) => c.id)).toEqual([made.comma!.id, made.formula!.id]);
  });

  it("keeps to the key's merchant and mode", async () => {
    const [, ...other] = await csv("", otherKey);
    expect(other.map((l) => l.split(",")[1])).toEqual(["csv-other"]);
    const res = await app.call("GET", "/v1/charges/export.csv", { key: app.liveKey });
    expect(res.headers.get("content-disposition")).toBe('attachment; filename="charges_live.csv"');
    const [, ...live] = await csv("", app.liveKey);
    expect(live.map((l) => l.split(",")[1])).toEqual(["csv-live"]);
    expect(live[0]!.endsWith(",true")).toBe(true);
  });

  it("refuses a bad date, a page or a cursor with a JSON 400 naming the parameter, before any CSV", async () => {
    for (const [query, code, param] of [
      ["createdGte=yesterday", "parameter_invalid", "createdGte"],
      ["createdLt=2026-02-30T25:00:00Z", "parameter_invalid", "createdLt"],
      ["createdGte=1778414400", "parameter_invalid", "createdGte"],
      ["page=2", "parameter_unknown", "page"],
      [`startingAfter=${made.paid!.id}`, "parameter_unknown", "startingAfter"],
      ["format=csv", "parameter_unknown", "format"],
      ["since=2026-05-10", "parameter_unknown", "since"],
    ] as const) {
      const res = await app.call("GET", `/v1/charges/export.csv?${query}`);
      expect(res.headers.get("content-type"), query).toMatch(/^application\/json/);
      expectError(res, 400, code, param);
    }
    expectError(await app.call("GET", "/v1/charges?createdLt=soon"), 400, "parameter_invalid", "createdLt");
    expect((await app.call("GET", "/v1/charges/export.csv", { key: "sk_test_nothing" })).status).toBe(401);
  });
});

describe("GET /v1/charges?format=csv (older integrations' way, no longer in the document)", () => {
  // Plain fetch: the harness's call() holds every answer to the document, which lists this one no more.
  const legacy = (query: string) => fetch(`${app.url}/v1/charges?${query}`, { headers: { "x-api-key": app.testKey } });

  it("still answers the export's file, with the same filters; limit is ignored as it always was", async () => {
    const res = await legacy(`format=csv&limit=1&createdGte=${iso(1)}&createdLt=${iso(3)}`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/csv; charset=utf-8");
    expect(res.headers.get("content-disposition")).toBe('attachment; filename="charges_test.csv"');
    expect(await res.text()).toBe((await app.call("GET", `/v1/charges/export.csv?createdGte=${iso(1)}&createdLt=${iso(3)}`)).text);
    // format=json (the default) is the list.
    const json = await (await legacy(`format=json&createdGte=${iso(1)}&createdLt=${iso(3)}`)).json();
    expect(json.data.map((c: { id: string }) => c.id)).toEqual([made.comma!.id, made.formula!.id]);
  });

  it("refuses a bad format, date, page or cursor with a JSON 400 naming the parameter", async () => {
    for (const [query, code, param] of [
      ["format=xlsx", "parameter_invalid", "format"],
      ["format=csv&createdGte=yesterday", "parameter_invalid", "createdGte"],
      ["format=csv&limit=0", "parameter_invalid", "limit"],
      ["format=csv&page=2", "parameter_invalid", "page"],
      [`format=csv&startingAfter=${made.paid!.id}`, "parameter_invalid", "startingAfter"],
      ["format=csv&since=2026-05-10", "parameter_unknown", "since"],
    ] as const) {
      const res = await legacy(query);
      expect(res.headers.get("content-type"), query).toMatch(/^application\/json/);
      expect(res.status, query).toBe(400);
      expect(await res.json(), query).toMatchObject({ code, param });
    }
  });
});

describe("the OpenAPI document", () => {
  it("documents the list as JSON alone and the export as an operation of its own answering text/csv", async () => {
    const doc = (await (await fetch(`${app.url}/v1/openapi.json`)).json()) as any;
    const list = doc.paths["/v1/charges"].get;
    expect(Object.keys(list.responses["200"].content)).toEqual(["application/json"]);
    expect(list.parameters.map((p: { name: string }) => p.name)).not.toContain("format");
    const exported = doc.paths["/v1/charges/export.csv"].get;
    expect(exported.operationId).toBe("exportCharges");
    expect(exported.responses["200"].content).toEqual({ "text/csv": { schema: { type: "string" }, example: `${HEADER}\r\n` } });
    // The filters, then the version header (a $ref).
    expect(exported.parameters.map((p: { name?: string }) => p.name ?? "version")).toEqual([
      "status",
      "needsReview",
      "customerId",
      "search",
      "createdGte",
      "createdLt",
      "version",
    ]);
  });
});
