// A client of the API as an integrator writes one: its types are what openapi-typescript generates
// from GET /v1/openapi.json (.ci/lint-openapi.mjs writes them to ./openapi.ts next to this file and
// compiles both under strict and exactOptionalPropertyTypes), by hand with fetch and with
// openapi-fetch. No casts: the document alone types every answer, query and webhook; each expected
// error (@ts-expect-error) is a mistake the document's types catch.
import createClient from "openapi-fetch";
import type { components, operations, paths, webhooks } from "./openapi.js";

type Schemas = components["schemas"];
type Query<Op extends keyof operations> = NonNullable<operations[Op]["parameters"]["query"]>;
type Body<Op extends keyof operations> = NonNullable<operations[Op]["requestBody"]>["content"]["application/json"];
/** The JSON an endpoint receives for an event of type `T`. */
type Webhook<T extends keyof webhooks> = webhooks[T]["post"]["requestBody"]["content"]["application/json"];

const BASE = "http://localhost:4000";

/** A failed call, with the API's machine-readable code. */
class ApiError extends Error {
  constructor(readonly body: Schemas["Error"]) {
    super(`${body.code}: ${body.message} (${body.docUrl})`);
  }
}

/** Calls the API with `key`; the answer is the JSON of the status it expects (untyped, as fetch gives it), or an ApiError. */
async function call(key: string, method: string, path: string, expected: number, body?: object) {
  const res = await fetch(`${BASE}${path}`, {
    method,
    headers: { "X-API-Key": key, "Content-Type": "application/json" },
    ...(body && { body: JSON.stringify(body) }),
  });
  if (res.status === expected) return res.json();
  const error: Schemas["Error"] = await res.json();
  throw new ApiError(error);
}

/** Whether to retry: the codes are an enum, so a typo here would not compile. */
function retryable(error: ApiError): boolean {
  const codes: Schemas["Error"]["code"][] = ["rate_limited", "idempotency_key_in_use", "internal_error"];
  return codes.includes(error.body.code);
}

/** Creates a charge; the answer is a Charge. */
export async function createCharge(key: string, body: Body<"createCharge">): Promise<Schemas["Charge"]> {
  const charge: operations["createCharge"]["responses"][201]["content"]["application/json"] = await call(key, "POST", "/v1/charges", 201, body);
  return charge;
}

/** The query string of a list: `limit` is an integer, sent as its numeral. */
function queryString(query: Query<"listCharges">): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) if (value !== undefined) params.set(name, String(value));
  return params.toString();
}

/** Every charge that needs review, a page of 100 at a time. */
export async function chargesToReview(key: string): Promise<Schemas["Charge"][]> {
  const out: Schemas["Charge"][] = [];
  let startingAfter: string | undefined;
  for (;;) {
    const query: Query<"listCharges"> = { limit: 100, needsReview: "true", ...(startingAfter !== undefined && { startingAfter }) };
    const page: operations["listCharges"]["responses"][200]["content"]["application/json"] = await fetch(`${BASE}/v1/charges?${queryString(query)}`, {
      headers: { Authorization: `Bearer ${key}` },
    }).then((res) => res.json());
    out.push(...page.data);
    const last = page.data.at(-1);
    if (!page.hasMore || !last) return out;
    startingAfter = last.id;
  }
}

// @ts-expect-error limit is an integer, not a numeral
const numeral: Query<"listCharges"> = { limit: "100" };
// @ts-expect-error exactOptionalPropertyTypes: an unset parameter is left out, not undefined
const unset: Query<"listCharges"> = { limit: undefined };

/** Adds an endpoint and keeps its secret, which the answer always has (and only this one). */
export async function addEndpoint(key: string, url: string): Promise<string> {
  const body: Body<"createWebhookEndpoint"> = { url, events: ["charge.completed"] };
  const created: Schemas["WebhookEndpointWithSecret"] = await call(key, "POST", "/v1/webhook_endpoints", 201, body);
  const secret: string = created.secret;
  const listed: Schemas["WebhookEndpoint"] = created;
  // @ts-expect-error a listed endpoint has no secret
  const leaked: string = listed.secret;
  return secret;
}

/** What a receiver does with each event: narrowed on `type`, `data` is the resource it reports. */
export function onEvent(event: Schemas["Event"]): string {
  switch (event.type) {
    case "charge.completed":
      return `${event.data.orderId}: paid ${event.data.amountReceived ?? "0.00"}, ${event.data.overpaidAmount ?? "0.00"} over`;
    case "charge.received":
    case "charge.partial":
      return (event.data.payments ?? []).map((p) => `${p.amount} from ${p.from} in ${p.txHash}`).join("\n");
    case "customer.deleted":
      return `forget ${event.data.email}`;
    case "refund.completed":
      return `refunded ${event.data.amount} in ${event.data.txHash ?? "?"}`;
    case "invoice.paid":
      return `${event.data.number ?? event.data.id} paid`;
    default:
      return event.type;
  }
}

/** A webhook's body, typed by its entry in the document's webhooks section. */
export function onChargeCompleted(raw: string): string {
  const event: Webhook<"charge.completed"> = JSON.parse(raw);
  const charge: Schemas["Charge"] = event.data;
  // @ts-expect-error the webhook of charge.completed carries no other type
  const other: Webhook<"charge.completed">["type"] = "charge.expired";
  return `${charge.id} ${charge.status}`;
}

/** openapi-fetch, typed by the document's paths. */
const typed = (key: string) => createClient<paths>({ baseUrl: BASE, headers: { "X-API-Key": key } });

/**
 * The ids of a page of charges that need review, and the whole period as CSV: each its own
 * operation, so the list's `data` is typed as a list (not "a list or CSV text") and the export's as text.
 */
export async function reviewQueue(key: string): Promise<{ ids: string[]; csv: string }> {
  const client = typed(key);
  const { data: page, error } = await client.GET("/v1/charges", { params: { query: { needsReview: "true", limit: 100 } } });
  if (error) throw new ApiError(error);
  const ids: string[] = page.data.map((charge) => charge.id);
  const total: number | undefined = page.total;
  const { data: csv } = await client.GET("/v1/charges/export.csv", {
    params: { query: { needsReview: "true", createdGte: "2026-11-01T00:00:00Z" } },
    parseAs: "text",
  });
  // @ts-expect-error the export has every matching charge: no paging
  await client.GET("/v1/charges/export.csv", { params: { query: { page: 2 } }, parseAs: "text" });
  return { ids: total === 0 ? [] : ids, csv: csv ?? "" };
}

/** The ledger's rows of one charge, a page at a time, and their CSV for an accountant. */
export async function ledgerOf(key: string, chargeId: string): Promise<{ amounts: string[]; csv: string }> {
  const client = typed(key);
  const { data: page } = await client.GET("/v1/balance_transactions", { params: { query: { chargeId } } });
  const amounts: string[] = page ? page.data.map((row) => row.amount) : [];
  const { data: csv } = await client.GET("/v1/balance_transactions/export.csv", { params: { query: { chargeId } }, parseAs: "text" });
  return { amounts, csv: csv ?? "" };
}

export { ApiError, numeral, retryable, unset };
