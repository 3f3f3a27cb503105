// GET /v1/openapi.json: OpenAPI 3.1 of every /v1 route, built from what each route declares in its
// `config.doc`: the domain's own zod schemas that validate its body and query at run time, and the
// resource schemas its answers are typed by. Every resource is a named schema (./schemas), referred
// to by $ref wherever it appears, and the events these resources are sent in make the webhooks
// section. Nothing here restates a shape, so the document cannot drift from the code; a /v1 route
// without a doc stops the service from starting.
import { STATUS_CODES } from "node:http";
import type { FastifyInstance, RouteOptions } from "fastify";
import { z } from "zod";
import { EVENT_DESCRIPTIONS, EVENT_TYPES, type EventType } from "../domain/events.js";
import { ERROR_MEANINGS, type ErrorCode } from "../domain/errors.js";
import { errorAnchor, STATUS_OF_CODE } from "../http/errors.js";
import { NAMES } from "./schemas/components.js";
import { ERROR_CODES } from "./schemas/errors.js";
import { EVENTS } from "./schemas/events.js";
import { EXAMPLES } from "./schemas/examples.js";
import { API_VERSION, VERSION_HEADER } from "./version.js";

/** The document's tags, in the order the reference shows them; every operation has one. */
export const TAGS = [
  {
    name: "Charges",
    description:
      "A charge asks a buyer for an amount of USDC for one of your orders; the buyer pays on its hosted page, to an address of its own. Its status follows the chain: PENDING → RECEIVED → COMPLETED, or EXPIRED, or CANCELLED.",
  },
  { name: "Hosted page", description: "What the hosted payment page calls, without a key: the unguessable charge id is the capability." },
  { name: "Customers", description: "The people and companies who pay you; charges and invoices can name one." },
  {
    name: "Refunds",
    description: "Refunds without custody: prepared here, paid from your settlement wallet, completed when the chain shows the transfer.",
  },
  { name: "Invoices", description: "Itemised bills for a customer, paid on their hosted page: DRAFT → OPEN → PAID, or VOID, or UNCOLLECTIBLE." },
  { name: "Payment links", description: "A link to share: each buyer who pays there gets a charge of the link's amount." },
  { name: "Plans", description: "What you bill on a schedule: an amount per period (day, week, month of 30 days, year of 365), with an optional trial." },
  {
    name: "Subscriptions",
    description:
      "A customer's recurring billing on a plan, pulled each period from the buyer's own wallet under a capped, revocable spend permission: INCOMPLETE → TRIALING | ACTIVE ⇄ PAST_DUE → CANCELED, or INCOMPLETE_EXPIRED. Each period is an invoice.",
  },
  { name: "Balance", description: "The ledger: one immutable row per movement of money, read from the chain, and the balance per chain summed from it." },
  { name: "Events", description: "Every change as an event, also delivered to your webhook endpoints: list them, see their deliveries, send them again." },
  { name: "Webhook endpoints", description: "Where your events are delivered, each signed with the endpoint's secret (Standard Webhooks)." },
  {
    name: "Webhooks",
    description:
      "What your endpoint receives: one POST per event, its body the event and its headers the Standard Webhooks signature. Verify it, answer 2xx within 15 s, and dedupe on webhook-id: delivery is at least once, in no set order.",
  },
  { name: "Test helpers", description: "Test mode only: move an object along without waiting." },
  {
    name: "Emails",
    description:
      "The emails written for you (invoices, receipts, refund links, your team's resets and notices), each as it was sent: without SMTP_URL they are kept here, not sent.",
  },
  {
    name: "x402",
    description:
      "Selling an API to software: your x402 address and the facilitator (`{PUBLIC_URL}/x402/supported`, `/verify`, `/settle`, x402 protocol version 2, scheme `exact`, with this API key as `Authorization: Bearer`) that the official x402 middleware calls. Settled payments are ledger payments like a charge's, paid out to your wallet less the fee.",
  },
] as const;

/** A tag of the document. */
export type Tag = (typeof TAGS)[number]["name"];

/** What a /v1 route tells the document about itself. */
export interface RouteDoc {
  operationId: string;
  summary: string;
  /** What it does in full, for the reference (Markdown). */
  description: string;
  tag: Tag;
  /** The JSON body the domain parses (its zod schema). */
  body?: z.ZodType;
  /** A body that works, shown in the document (and checked against `body` by the tests). */
  example?: Record<string, unknown>;
  /** The query the route or the domain parses. */
  query?: z.ZodType;
  /** The success answers by status. */
  ok: Partial<Record<200 | 201 | 202, z.ZodType>>;
  /**
   * A success answer that is a file, not JSON (its `ok` schema is then unused): its media type, and
   * how such a file begins. Such an operation answers nothing else: a JSON answer and a file never
   * share a response, or generated clients type the JSON as "JSON or a string".
   */
  file?: { type: string; example: string };
  /** Error codes of this route beyond those every route of its kind may answer. */
  errors?: readonly ErrorCode[];
}

declare module "fastify" {
  interface FastifyContextConfig {
    /** The route's entry in /v1/openapi.json (every /v1 route has one). */
    doc?: RouteDoc;
  }
}

/** A list answer around `item`. */
export function listOf(item: z.ZodType) {
  return z.object({ object: z.literal("list"), data: z.array(item), hasMore: z.boolean() });
}

const BAD_INPUT: ErrorCode[] = ["parameter_invalid", "parameter_missing", "parameter_unknown"];
const BAD_BODY: ErrorCode[] = ["body_invalid_json"];
const API_KEY: ErrorCode[] = ["api_key_missing", "api_key_invalid", "api_key_ip_not_allowed"];
const IDEMPOTENCY: ErrorCode[] = ["idempotency_key_reused", "idempotency_key_in_use"];
const ALWAYS: ErrorCode[] = ["rate_limited", "internal_error"];

const REF = "#/components/schemas/";
const ref = (name: string) => ({ $ref: `${REF}${name}` });

/** Headers every answer may carry, and the webhook signature's, defined once in components. */
const HEADERS = {
  "X-Request-Id": { description: "The request's id (also in error bodies and the log).", schema: { type: "string" } },
  [VERSION_HEADER]: { description: "The API version this answer follows.", schema: { type: "string", examples: [API_VERSION] } },
  "RateLimit-Limit": { description: "Requests allowed per minute in this route's group.", schema: { type: "integer" } },
  "RateLimit-Remaining": { description: "Requests left in the current minute.", schema: { type: "integer" } },
  "RateLimit-Reset": { description: "Seconds until the budget refills.", schema: { type: "integer" } },
  "Retry-After": { description: "Seconds to wait before retrying.", schema: { type: "integer" } },
};
const headers = (...names: (keyof typeof HEADERS)[]) => Object.fromEntries(names.map((n) => [n, { $ref: `#/components/headers/${n}` }]));

const PARAMETERS = {
  IdempotencyKey: {
    name: "Idempotency-Key",
    in: "header",
    required: false,
    description:
      "Makes a retry safe: the first answer is stored for 24 h and replayed (with Idempotent-Replayed: true). An answer refusing the request's input (400 body_invalid_json or parameter_*), a 5xx or a 429 is not stored: the key can carry the request again.",
    schema: { type: "string", maxLength: 255 },
  },
  Version: {
    name: VERSION_HEADER,
    in: "header",
    required: false,
    description: "The API version the caller was written against (YYYY-MM-DD); absent, the current one.",
    schema: { type: "string", pattern: "^\\d{4}-\\d{2}-\\d{2}$", examples: [API_VERSION] },
  },
  WebhookId: {
    name: "webhook-id",
    in: "header",
    required: true,
    description: "The event's id, the same on every attempt: dedupe on it.",
    schema: { type: "string" },
  },
  WebhookTimestamp: {
    name: "webhook-timestamp",
    in: "header",
    required: true,
    description: "When this attempt was signed (Unix seconds): refuse one too far from your clock.",
    schema: { type: "string", pattern: "^\\d+$" },
  },
  WebhookSignature: {
    name: "webhook-signature",
    in: "header",
    required: true,
    description:
      "`v1,` and the base64 HMAC-SHA256 of `{webhook-id}.{webhook-timestamp}.{body}`, keyed with the endpoint secret's decoded bytes (whsec_ is followed by their base64); while a rotated secret overlaps, one such signature per secret, space-separated. The `standardwebhooks` libraries verify it.",
    schema: { type: "string" },
  },
} as const;
const parameter = (name: keyof typeof PARAMETERS) => ({ $ref: `#/components/parameters/${name}` });

type JsonSchema = Record<string, unknown>;

/** JSON Schema 2020-12 (what OpenAPI 3.1 uses) of a body or query, as a caller sends it. */
function inputSchema(schema: z.ZodType): JsonSchema {
  const { $schema: _, ...rest } = z.toJSONSchema(schema, {
    io: "input",
    unrepresentable: "any",
    // zod leaves out the default of a value it converts (a numeral query parameter): it is still the value an absent one takes.
    override: ({ zodSchema, jsonSchema }) => {
      const def = zodSchema._zod.def;
      if (def.type === "default") jsonSchema.default = (def as z.core.$ZodDefaultDef).defaultValue;
    },
  }) as JsonSchema;
  return rest;
}

/**
 * JSON Schema of every named schema and of `answers` as the API sends them, converted together so
 * that each named schema is a $ref to components.schemas wherever it appears.
 */
function outputSchemas(answers: Iterable<z.ZodType>): { components: Record<string, JsonSchema>; inline: Map<z.ZodType, JsonSchema> } {
  const registry = z.registry<{ id: string }>();
  for (const [schema, id] of NAMES) registry.add(schema, { id });
  const anonymous = new Map<z.ZodType, string>();
  for (const schema of answers) if (!NAMES.has(schema) && !anonymous.has(schema)) anonymous.set(schema, `answer ${anonymous.size}`);
  for (const [schema, id] of anonymous) registry.add(schema, { id });
  const { schemas } = z.toJSONSchema(registry, { io: "output", unrepresentable: "any", uri: (id) => `${REF}${id}` }) as { schemas: Record<string, JsonSchema> };
  const strip = ({ $schema: _, $id: __, ...rest }: JsonSchema) => rest;
  const text = JSON.stringify(schemas);
  // An answer's shape inside another's would be a $ref to nothing: name it instead.
  if ("__shared" in schemas || /"\$ref":"#\/components\/schemas\/answer /.test(text))
    throw new Error("an answer schema is part of another: name it (schemas/components.ts)");
  const components = Object.fromEntries([...NAMES.values()].sort().map((id) => [id, strip(schemas[id]!)]));
  const inline = new Map([...NAMES].map(([schema, id]) => [schema, ref(id)] as [z.ZodType, JsonSchema]));
  for (const [schema, id] of anonymous) inline.set(schema, strip(schemas[id]!));
  return { components, inline };
}

/**
 * A value of `schema` for the document's examples: a named schema's own example (./schemas/examples.ts),
 * else one made from its parts (the first choice of a union, the required fields of an object).
 */
function exampleOf(schema: JsonSchema, components: Record<string, JsonSchema>): unknown {
  if (typeof schema.$ref === "string") {
    const name = schema.$ref.slice(REF.length);
    return EXAMPLES[name] ?? exampleOf(components[name]!, components);
  }
  if ("const" in schema) return schema.const;
  if (Array.isArray(schema.enum)) return schema.enum[0];
  if (Array.isArray(schema.examples)) return schema.examples[0];
  const choices = (schema.anyOf ?? schema.oneOf) as JsonSchema[] | undefined;
  if (choices)
    return exampleOf(
      choices.find((c) => c.type !== "null")!,
      components,
    );
  const type = [schema.type].flat().find((t) => t !== "null");
  switch (type) {
    case "object": {
      const properties = (schema.properties ?? {}) as Record<string, JsonSchema>;
      const required = (schema.required ?? []) as string[];
      return Object.fromEntries(required.map((name) => [name, exampleOf(properties[name]!, components)]));
    }
    case "array":
      return [exampleOf(schema.items as JsonSchema, components)];
    case "integer":
    case "number":
      // 1 unless the bounds say otherwise (an output integer's are only the safe range).
      return typeof schema.minimum === "number" && schema.minimum > 1 ? schema.minimum : 1;
    case "boolean":
      return false;
    case "string":
      return "…";
    default:
      return null;
  }
}

/** The document's introduction: what the API is, how to call it, and every error code (docUrl's targets). */
function introduction(): string {
  const codes = ERROR_CODES.map((code) => `- <a id="${errorAnchor(code)}"></a>\`${code}\` (${STATUS_OF_CODE[code]}): ${ERROR_MEANINGS[code]}`);
  return [
    "Non-custodial USDC payments: charges and their hosted pages, customers, refunds, invoices, payment links, the ledger, events and webhooks.",
    "",
    "Authenticate with `X-API-Key: sk_test_…` (test mode) or `sk_live_…` (live mode), or the same key as `Authorization: Bearer sk_…`: the key fixes the merchant and the mode. A JSON body is taken as typed: amounts are decimal strings of USDC (6 decimals), never numbers (a float cannot carry money exactly), and integers are JSON integers, never numeric strings; query parameters are text, their integers read from digits. An address's parts are strings, `\"\"` when not given. Lists are newest first, `limit` 1–100 (default 10), paged by `startingAfter` / `endingBefore` (the id of the last or first record you got: pages never overlap or skip, even while records are written). Every POST, PATCH and DELETE takes an `Idempotency-Key`; a request whose input is refused (400 `body_invalid_json` or `parameter_*`) stores nothing under it, so the corrected request may reuse it. A query parameter a route does not document is refused (400 `parameter_unknown`), never ignored; the one exception is the lists' legacy `format=csv`, kept for older clients (use the `export.csv` operations). Pin the API version with the `Stablegate-Version` header; every answer names the version it followed.",
    "",
    "Guides (concepts, webhooks, going live, operations) are in the `.docs/` folder of the Stablegate repository.",
    "",
    "The `webhooks` section describes the POST your endpoints receive for each event type; its body is the event, whose `data` is the resource by the same schema as the API's answers.",
    "",
    "## Errors",
    "",
    "Every error answer is the `Error` body: act on its `code` (below), never on its message; `param` names the parameter at fault and `docUrl` links here.",
    "",
    ...codes,
  ].join("\n");
}

/** A file answer's schema: text (a CSV) as a string, anything else (a PDF) as bytes. */
function fileSchema(type: string): JsonSchema {
  return type.startsWith("text/") ? { type: "string" } : { type: "string", format: "binary" };
}

/** Collects the documented routes as they are registered; `document()` builds the OpenAPI object. */
export class ApiDocument {
  private readonly routes: { method: string; url: string; auth: string; doc: RouteDoc }[] = [];

  constructor(server: FastifyInstance) {
    server.addHook("onRoute", (route: RouteOptions) => {
      const doc = route.config?.doc;
      const methods = [route.method].flat().filter((m) => m !== "HEAD");
      if (!doc) {
        if (route.url.startsWith("/v1/") && route.url !== "/v1/openapi.json") throw new Error(`${methods} ${route.url} has no config.doc for /v1/openapi.json`);
        return;
      }
      for (const method of methods) this.routes.push({ method, url: route.url, auth: route.config?.auth ?? "apiKey", doc });
    });
  }

  /** The OpenAPI 3.1 document of every /v1 route registered so far, and of the webhooks. */
  document(serverUrl: string): Record<string, unknown> {
    const answers = this.routes.flatMap(({ doc }) => (doc.file ? [] : Object.values(doc.ok)));
    const schemas = outputSchemas(answers);
    const paths: Record<string, Record<string, unknown>> = {};
    for (const { method, url, auth, doc } of this.routes) {
      const path = url.replace(/:(\w+)/g, "{$1}");
      paths[path] ??= {};
      paths[path][method.toLowerCase()] = this.operation(method, url, auth, doc, schemas);
    }
    return {
      openapi: "3.1.0",
      info: {
        title: "Stablegate API",
        version: API_VERSION,
        description: introduction(),
        // Self-hosted: whoever runs this instance answers for it, at its address.
        contact: { name: "The operator of this Stablegate instance", url: serverUrl },
        license: { name: "MIT", identifier: "MIT" },
      },
      servers: [{ url: serverUrl, description: "This instance (PUBLIC_URL)." }],
      tags: TAGS,
      security: [{ ApiKey: [] }, { ApiKeyBearer: [] }],
      paths,
      webhooks: Object.fromEntries(EVENT_TYPES.map((type) => [type, { post: webhook(type) }])),
      components: {
        securitySchemes: {
          ApiKey: { type: "apiKey", in: "header", name: "X-API-Key", description: "sk_test_… (test mode) or sk_live_… (live mode)." },
          ApiKeyBearer: { type: "http", scheme: "bearer", description: "The same API key as `Authorization: Bearer sk_…`." },
          CustomerJwt: { type: "http", scheme: "bearer", bearerFormat: "JWT", description: "A customer JWT signed with one of the merchant's JWT secrets." },
        },
        schemas: schemas.components,
        parameters: PARAMETERS,
        headers: HEADERS,
      },
    };
  }

  private operation(method: string, url: string, auth: string, doc: RouteDoc, schemas: ReturnType<typeof outputSchemas>): Record<string, unknown> {
    const mutating = method !== "GET";
    const parameters: Record<string, unknown>[] = [...url.matchAll(/:(\w+)/g)].map(([, name]) => ({
      name,
      in: "path",
      required: true,
      schema: { type: "string", maxLength: 200 },
    }));
    if (doc.query) {
      const query = inputSchema(doc.query) as { properties?: Record<string, JsonSchema>; required?: string[] };
      for (const [name, { description, ...schema }] of Object.entries(query.properties ?? {})) {
        parameters.push({ name, in: "query", required: query.required?.includes(name) ?? false, ...(description !== undefined && { description }), schema });
      }
    }
    parameters.push(parameter("Version"));
    if (mutating && auth !== "public") parameters.push(parameter("IdempotencyKey"));
    const errors = new Set<ErrorCode>([...ALWAYS, ...BAD_INPUT, ...(doc.errors ?? [])]);
    if (doc.body) for (const code of BAD_BODY) errors.add(code);
    if (auth === "apiKey") for (const code of API_KEY) errors.add(code);
    if (auth === "customerJwt") errors.add("jwt_invalid");
    if (mutating && auth !== "public") for (const code of IDEMPOTENCY) errors.add(code);
    if (url.includes(":")) errors.add("resource_missing");

    const responses: Record<string, unknown> = {};
    for (const [status, schema] of Object.entries(doc.ok)) {
      const json = schemas.inline.get(schema) ?? {};
      responses[status] = {
        description: ({ "201": "Created", "202": "Accepted" } as Record<string, string>)[status] ?? "OK",
        headers: headers("X-Request-Id", VERSION_HEADER, "RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset"),
        content: doc.file
          ? { [doc.file.type]: { schema: fileSchema(doc.file.type), example: doc.file.example } }
          : { "application/json": { schema: json, example: exampleOf(json, schemas.components) } },
      };
    }
    const byStatus = new Map<number, ErrorCode[]>();
    for (const code of errors) byStatus.set(STATUS_OF_CODE[code], [...(byStatus.get(STATUS_OF_CODE[code]) ?? []), code]);
    // A missing record named in the body is a 400 resource_missing.
    if (doc.errors?.includes("resource_missing") || doc.body) byStatus.get(400)?.push("resource_missing");
    // Answered by a process shutting down: retry, another one answers.
    byStatus.set(503, ["internal_error"]);
    // The HTTP exchange itself: a request that times out, an Expect other than 100-continue, headers too large.
    for (const [status, code] of [
      [408, "parameter_invalid"],
      [417, "parameter_invalid"],
      [431, "parameter_invalid"],
    ] as const)
      byStatus.set(status, [code]);
    for (const [status, codes] of [...byStatus].sort(([a], [b]) => a - b)) {
      responses[status] = {
        description: `code: ${[...new Set(codes)].join(", ")}`,
        headers: status === 429 || status === 503 ? headers("Retry-After", "X-Request-Id", VERSION_HEADER) : headers("X-Request-Id", VERSION_HEADER),
        content: { "application/json": { schema: ref("Error") } },
      };
    }
    return {
      operationId: doc.operationId,
      summary: doc.summary,
      description: doc.description,
      tags: [doc.tag],
      ...(auth === "public" ? { security: [] } : auth === "customerJwt" ? { security: [{ CustomerJwt: [] }] } : {}),
      parameters,
      ...(doc.body && {
        requestBody: {
          required: false,
          content: { "application/json": { schema: inputSchema(doc.body), ...(doc.example && { example: doc.example }) } },
        },
      }),
      responses,
    };
  }
}

/** The POST an endpoint receives for an event of `type`. */
function webhook(type: EventType): Record<string, unknown> {
  const name = NAMES.get(EVENTS[type])!;
  return {
    operationId: `on${name.replace(/Event$/, "")}`,
    summary: type,
    description: `${EVENT_DESCRIPTIONS[type]}\n\nSent to every enabled endpoint of the mode whose \`events\` include ${type} (or are empty), signed with its secret.`,
    tags: ["Webhooks" satisfies Tag],
    // Nothing to authenticate with: the receiver checks the signature.
    security: [],
    parameters: [parameter("WebhookId"), parameter("WebhookTimestamp"), parameter("WebhookSignature")],
    requestBody: { required: true, content: { "application/json": { schema: ref(name) } } },
    responses: {
      "2XX": { description: "Received: the delivery succeeded (the body is ignored)." },
      "410": { description: "Gone: the endpoint is disabled and gets no more deliveries." },
      default: {
        description:
          "Anything else, a redirect, or no answer within 15 s: retried after 5 s, 5 min, 30 min, 2 h, 5 h, 10 h and 10 h (±10%), then the delivery is failed.",
      },
    },
  };
}

/** Registers GET /v1/openapi.json (no key needed: the document holds no secret). */
export function openApiRoute(server: FastifyInstance, api: ApiDocument, publicUrl: string): void {
  let cached: string | null = null;
  // Anyone may read it, within the per-address budget of callers without a key.
  server.get("/v1/openapi.json", { config: { group: "read", auth: "public" } }, async (_req, reply) => {
    cached ??= JSON.stringify(api.document(publicUrl));
    return reply.type("application/json; charset=utf-8").header("Cache-Control", "public, max-age=300").send(cached);
  });
}
