// /metrics as Prometheus reads it (a text-format parser, not a regexp): this process's requests by
// route pattern and status with their latency, its live connections, and what the database says an
// operator watches (open charges, the webhook outbox).
import parsePrometheus from "parse-prometheus-text-format";
import { afterAll, beforeAll, expect, it } from "vitest";
import { waitFor } from "../helpers/chain.js";
import { startApp, type TestApp } from "../helpers/harness.js";
import { subscribe, wsClient } from "../helpers/live.js";

let app: TestApp;
beforeAll(async () => {
  app = await startApp();
}, 60_000);
afterAll(() => app?.stop());

async function scrape() {
  const res = await app.call("GET", "/metrics", { key: null });
  expect(res.status).toBe(200);
  return parsePrometheus(res.text);
}
const sample = (families: Awaited<ReturnType<typeof scrape>>, name: string, labels: Record<string, string>) =>
  families.find((f) => f.name === name)?.metrics.find((m) => Object.entries(labels).every(([k, v]) => m.labels?.[k] === v));

it("counts requests by route pattern and status, never by raw URL", async () => {
  for (let i = 0; i < 3; i++) expect((await app.call("POST", "/v1/charges", { body: { orderId: `m-${i}`, amount: "5" } })).status).toBe(201);
  await app.call("GET", "/v1/charges/chrg_doesnotexist");
  await app.call("GET", "/no/such/path/1");
  await app.call("GET", "/no/such/path/2");
  const families = await scrape();
  expect(Number(sample(families, "stablegate_http_requests_total", { method: "POST", route: "/v1/charges", status: "201" })?.value)).toBe(3);
  expect(Number(sample(families, "stablegate_http_requests_total", { route: "/v1/charges/:id", status: "404" })?.value)).toBe(1);
  expect(Number(sample(families, "stablegate_http_requests_total", { route: "unmatched", status: "404" })?.value)).toBe(2);
  const latency = families.find((f) => f.name === "stablegate_http_request_duration_seconds");
  expect(latency?.type).toBe("HISTOGRAM");
  // Open charges from the database: three PENDING, no chain picked yet.
  expect(sample(families, "stablegate_charges_open", { chain_id: "none", status: "PENDING" })?.value).toBe("3");
  expect(sample(families, "stablegate_webhook_outbox_pending", {})?.value).toBe("0");
  // Every database figure is there, with no samples where there is nothing to report.
  for (const name of [
    "stablegate_relayer_transactions",
    "stablegate_charges_needing_review",
    "stablegate_relayer_stuck_transactions",
    "stablegate_chain_lag_blocks",
  ]) {
    expect(families.find((f) => f.name === name)?.type, name).toBe("GAUGE");
  }
});

it("counts GraphQL operations by type and outcome", async () => {
  await app.gql("{ charges(first: 1) { totalCount } }");
  await app.gql('{ charge(id: "chrg_nope") { id } }');
  await app.gql('mutation { createCustomer(input: { email: "m@example.com", name: "M" }) { id } }');
  const families = await scrape();
  expect(sample(families, "stablegate_graphql_operations_total", { type: "query", outcome: "ok" })?.value).toBe("1");
  expect(sample(families, "stablegate_graphql_operations_total", { type: "query", outcome: "error" })?.value).toBe("1");
  expect(sample(families, "stablegate_graphql_operations_total", { type: "mutation", outcome: "ok" })?.value).toBe("1");
});

it("reports this process's open live connections and subscriptions", async () => {
  const client = wsClient(app.url, app.testKey);
  const charge = (await app.call("POST", "/v1/charges", { body: { orderId: "m-live", amount: "5" } })).body;
  const updates = subscribe(client, `subscription($id: ID!) { chargeUpdated(id: $id) { status } }`, { id: charge.id });
  await updates.waitFor(1);
  const open = await scrape();
  expect(sample(open, "stablegate_live_connections", { caller: "key" })?.value).toBe("1");
  expect(Number(sample(open, "stablegate_live_subscriptions", {})?.value)).toBeGreaterThanOrEqual(1);
  expect(sample(open, "stablegate_pubsub_resyncs_total", {})?.value).toBe("0");
  await client.dispose();
  await waitFor("the connection to close", async () => sample(await scrape(), "stablegate_live_connections", { caller: "key" })?.value === "0");
});
