// A wrong or missing variable or argument (.docs/api.md "REST conventions"): 400 parameter_invalid naming
// it in extensions.param, never internal_error, over POST, GET, WebSocket and SSE alike, with nothing
// run or written and nothing logged above info. Variables are named by their path without `$`
// (`i.lineItems[0].quantity`), literals by the argument path (`input.lineItems[0].quantity`).
import { GraphQLError, type OperationDefinitionNode, parse } from "graphql";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config.js";
import { createMerchant } from "../../src/domain/merchants.js";
import { maskError } from "../../src/graphql/yoga.js";
import { buildTestApp, freshDatabase, type TestService, UNLIMITED_ADDRESS, WALLET } from "../helpers/harness.js";
import { sseSubscribe, subscribe, wsClient } from "../helpers/live.js";
import { recordingLogger } from "../helpers/logs.js";

const log = recordingLogger();
let app: TestService;
let url: string;
let key: string;
let drop: () => Promise<void>;

beforeAll(async () => {
  const fresh = await freshDatabase();
  drop = fresh.drop;
  const config = loadConfig({ NODE_ENV: "test", LOG_LEVEL: "debug", REDIS_URL: process.env.REDIS_URL, PORT: "0", ...UNLIMITED_ADDRESS });
  app = await buildTestApp(config, { db: fresh.db, logger: log.logger });
  url = await app.start(0);
  key = (await createMerchant(fresh.db.prisma, { name: "Parameter Shop", testWallet: WALLET, liveWallet: WALLET }, { feeBps: 100 })).apiKeys.test.secret;
});
afterAll(async () => {
  await app?.stop();
  await drop?.();
});

const CREATE_CUSTOMER = "mutation($i: CreateCustomerInput!) { createCustomer(input: $i) { id } }";
const CREATE_INVOICE = "mutation($i: CreateInvoiceInput!) { createInvoice(input: $i) { id } }";
const CUSTOMERS = "query($n: Int) { customers(first: $n) { totalCount } }";
const CUSTOMER = "query($id: ID!) { customer(id: $id) { id } }";
const NODES = "query($ids: [ID!]!) { nodes(ids: $ids) { id } }";
const CHARGES = "query($s: ChargeStatus, $r: Boolean) { charges(first: 1, status: $s, needsReview: $r) { totalCount } }";
const customer = { email: "p@params.example", name: "P" };
const line = { description: "A thing", quantity: 1, unitAmount: "1.00" };

/** Sends an operation over POST (or GET); the status and parsed body. */
async function send(body: { query: string; variables?: Record<string, unknown> }, opts: { method?: "GET" | "POST"; accept?: string } = {}) {
  const headers: Record<string, string> = { "x-api-key": key, ...(opts.accept && { accept: opts.accept }) };
  const res =
    opts.method === "GET"
      ? await fetch(`${url}/graphql?query=${encodeURIComponent(body.query)}&variables=${encodeURIComponent(JSON.stringify(body.variables ?? {}))}`, { headers })
      : await fetch(`${url}/graphql`, { method: "POST", headers: { ...headers, "content-type": "application/json" }, body: JSON.stringify(body) });
  return { status: res.status, body: (await res.json()) as { data?: unknown; errors?: { message: string; extensions: Record<string, unknown> }[] } };
}

/** Expects `res` refused as a whole: HTTP 400, one parameter_invalid naming `param`, no data. */
function expectRefused(res: Awaited<ReturnType<typeof send>>, param: string) {
  expect(res.status, JSON.stringify(res.body)).toBe(400);
  expect(res.body.errors).toHaveLength(1);
  expect(res.body.errors![0]!.extensions).toEqual({ code: "parameter_invalid", param, statusCode: 400 });
  expect(res.body.data).toBeUndefined();
}

const customers = () => app.services.prisma.customer.count();

describe("a variable of the wrong type, or missing", () => {
  it.each([
    ["a number for a String inside an input object", CREATE_CUSTOMER, { i: { ...customer, name: 25 } }, "i.name"],
    ["a string for an Int", CUSTOMERS, { n: "abc" }, "n"],
    ["a fraction for an Int", CUSTOMERS, { n: 1.5 }, "n"],
    ["an object for an ID", CUSTOMER, { id: { a: 1 } }, "id"],
    ["a string for a Boolean", CHARGES, { r: "yes" }, "r"],
    ["a value the enum does not have", CHARGES, { s: "pending" }, "s"],
    ["a wrong item in a list", NODES, { ids: ["cus_x", 2.5] }, "ids[1]"],
    [
      "a wrong field in a list of input objects",
      CREATE_INVOICE,
      { i: { customerId: "cus_x", lineItems: [line, { ...line, quantity: "2" }] } },
      "i.lineItems[1].quantity",
    ],
    ["a value a custom scalar refuses (Metadata)", CREATE_CUSTOMER, { i: { ...customer, metadata: [1] } }, "i.metadata"],
    ["a string for an input object", CREATE_CUSTOMER, { i: "x" }, "i"],
    ["a required variable left out", CUSTOMER, {}, "id"],
    ["null for a non-null variable", CUSTOMER, { id: null }, "id"],
    ["a required input field left out", CREATE_CUSTOMER, { i: { email: customer.email } }, "i.name"],
    ["an input field the type does not have", CREATE_CUSTOMER, { i: { ...customer, nope: 1 } }, "i.nope"],
  ])("%s is 400 parameter_invalid naming it", async (_what, query, variables, param) => {
    const before = await customers();
    const res = await send({ query, variables });
    expectRefused(res, param);
    expect(res.body.errors![0]!.message).toContain(`Variable "$${param.split(/[.[]/)[0]}"`);
    expect(await customers()).toBe(before);
  });

  it("is refused the same over GET", async () => {
    expectRefused(await send({ query: CUSTOMERS, variables: { n: "abc" } }, { method: "GET" }), "n");
  });

  it("is refused over WebSocket and SSE, without yoga's HTTP details", async () => {
    const query = "subscription($id: ID!) { chargeUpdated(id: $id) { id } }";
    const client = wsClient(url, key);
    const ws = [subscribe(client, query, { id: { a: 1 } }), subscribe(client, query, {}), subscribe(client, "subscription { chargeUpdated { id } }")];
    const sse = sseSubscribe(url, query, { id: [1, 2] }, key);
    for (const r of [...ws, sse]) await r.ended();
    expect([...ws, sse].map((r) => (r.errors[0] as { extensions: unknown }[])[0]!.extensions)).toEqual([
      { code: "parameter_invalid", param: "id", statusCode: 400 },
      { code: "parameter_invalid", param: "id", statusCode: 400 },
      { code: "parameter_invalid", param: "id", statusCode: 400 },
      { code: "parameter_invalid", param: "id", statusCode: 400 },
    ]);
    expect(client.closes).toEqual([]);
    await client.dispose();
  });
});

describe("an argument of the wrong type, or missing, in the document", () => {
  it.each([
    ["a string for an Int", `{ customers(first: "x") { totalCount } }`, "first"],
    [
      "a wrong field deep in an input",
      `mutation { createInvoice(input: {customerId: "cus_x", lineItems: [{description: "a", quantity: 1, unitAmount: "1.00"}, {description: "b", quantity: "2", unitAmount: "1.00"}]}) { id } }`,
      "input.lineItems[1].quantity",
    ],
    ["a required input field left out", `mutation { createCustomer(input: {email: "a@b.co"}) { id } }`, "input.name"],
    ["an input field the type does not have", `mutation { createCustomer(input: {email: "a@b.co", name: "A", nope: 1}) { id } }`, "input.nope"],
    ["a value the enum does not have", `{ charges(status: pending) { totalCount } }`, "status"],
    ["a required argument left out", `{ customer { id } }`, "id"],
    ["a directive's required argument left out", `{ customers(first: 1) @include { totalCount } }`, "if"],
    ["a variable where its type does not fit", `query($n: String) { customers(first: $n) { totalCount } }`, "n"],
    ["a variable's default of the wrong type", `query($n: Int = "x") { customers(first: $n) { totalCount } }`, "n"],
  ])("%s is 400 parameter_invalid naming it", async (_what, query, param) => {
    const before = await customers();
    expectRefused(await send({ query }), param);
    expect(await customers()).toBe(before);
  });

  it("is 400 whatever the Accept header, and over GET", async () => {
    const query = `{ customers(first: "x") { totalCount } }`;
    for (const accept of ["application/json", "application/graphql-response+json", "*/*"]) expectRefused(await send({ query }, { accept }), "first");
    expectRefused(await send({ query }, { method: "GET" }), "first");
  });

  it("leaves other validation errors as GraphQL words them", async () => {
    const res = await send({ query: "{ nope }" });
    expect(res.body.errors).toEqual([expect.objectContaining({ extensions: { code: "GRAPHQL_VALIDATION_FAILED" } })]);
  });
});

describe("what the operator is told", () => {
  it("nothing above info for any of the above", async () => {
    await send({ query: CREATE_CUSTOMER, variables: { i: { ...customer, metadata: [1] } } });
    expect(log.lines().filter((l) => l.level > 30)).toEqual([]);
    expect(log.text()).not.toMatch(/graphql resolver failed|internal_error/);
  });

  it("the executor's own check of a variable, were one to get past the plugin, is parameter_invalid naming the variable, not logged", () => {
    const operation = parse("query($i: CreateCustomerInput!) { __typename }").definitions[0] as OperationDefinitionNode;
    const error = new GraphQLError('Variable "$i" got invalid value [1] at "i.metadata"; Expected type "Metadata". Metadata must be an object', {
      nodes: operation.variableDefinitions![0],
      originalError: new TypeError("Metadata must be an object"),
    });
    const quiet = recordingLogger();
    const masked = maskError(error, quiet.logger);
    expect(masked.message).toBe(error.message);
    expect(masked.extensions).toMatchObject({ code: "parameter_invalid", param: "i", statusCode: 400 });
    expect(quiet.lines()).toEqual([]);
  });
});
