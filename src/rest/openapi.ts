// GET /v1/openapi.json: OpenAPI 3.1 of every /v1 route, built from what each route declares in its
// `config.doc`: the domain's own zod schemas that validate its body and query at run time, and the
// resource schemas its answers are typed by. Nothing here restates a shape, so the document cannot
// drift from the code; a /v1 route without a doc stops the service from starting.
import type { FastifyInstance, RouteOptions } from "fastify";
import { z } from "zod";
import type { ErrorCode } from "../domain/errors.js";
import { ErrorBody, STATUS_OF_CODE } from "../http/errors.js";

/** What a /v1 route tells the document about itself. */
export interface RouteDoc {
  operationId: string;
  summary: string;
  tag: string;
  /** The JSON body the domain parses (its zod schema). */
  body?: z.ZodType;
  /** A body that works, shown in the document (and checked against `body` by the tests). */
  example?: Record<string, unknown>;
  /** The query the route or the domain parses. */
  query?: z.ZodType;
  /** The success answers by status. */
  ok: Partial<Record<200 | 201 | 202, z.ZodType>>;
  /** The media type of a success answer that is a file, not JSON (its `ok` schema is then unused). */
  file?: string;
  /** Another media type the JSON answer is also given in (`?format=…`), as text. */
  alsoAs?: string;
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

/** A deletion's answer. */
export function deletedOf(object: string) {
  return z.object({ id: z.string(), object: z.literal(object), deleted: z.literal(true) });
}

const BAD_INPUT: ErrorCode[] = ["parameter_invalid", "parameter_missing", "parameter_unknown"];
const BAD_BODY: ErrorCode[] = ["body_invalid_json"];
const API_KEY: ErrorCode[] = ["api_key_missing", "api_key_invalid", "api_key_ip_not_allowed"];
const IDEMPOTENCY: ErrorCode[] = ["idempotency_key_reused", "idempotency_key_in_use"];
const ALWAYS: ErrorCode[] = ["rate_limited", "internal_error"];

const RATE_LIMIT_HEADERS = Object.fromEntries(
  [
    ["RateLimit-Limit", "Requests allowed per minute in this route's group."],
    ["RateLimit-Remaining", "Requests left in the current minute."],
    ["RateLimit-Reset", "Seconds until the budget refills."],
  ].map(([name, description]) => [name, { description, schema: { type: "integer" } }]),
);
const REQUEST_ID_HEADER = { "X-Request-Id": { description: "The request's id (also in error bodies and the log).", schema: { type: "string" } } };

/** JSON Schema 2020-12 (what OpenAPI 3.1 uses) of `schema` as a caller sends it or as we answer. */
function jsonSchema(schema: z.ZodType, io: "input" | "output"): Record<string, unknown> {
  const { $schema: _, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: "any" }) as Record<string, unknown>;
  return rest;
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

  /** The OpenAPI 3.1 document of every /v1 route registered so far. */
  document(serverUrl: string): Record<string, unknown> {
    const paths: Record<string, Record<string, unknown>> = {};
    for (const { method, url, auth, doc } of this.routes) {
      const path = url.replace(/:(\w+)/g, "{$1}");
      paths[path] ??= {};
      paths[path][method.toLowerCase()] = this.operation(method, url, auth, doc);
    }
    return {
      openapi: "3.1.0",
      info: {
        title: "Stablegate API",
        version: "1",
        description:
          "Non-custodial USDC payments: charges, customers, events and webhook endpoints. Amounts are decimal strings of USDC (6 decimals), never numbers.",
      },
      servers: [{ url: serverUrl }],
      security: [{ ApiKey: [] }],
      components: {
        securitySchemes: {
          ApiKey: { type: "apiKey", in: "header", name: "X-API-Key", description: "sk_test_… (test mode) or sk_live_… (live mode)." },
          CustomerJwt: { type: "http", scheme: "bearer", bearerFormat: "JWT", description: "A customer JWT signed with one of the merchant's JWT secrets." },
        },
        schemas: { Error: jsonSchema(ErrorBody, "output") },
      },
      paths,
    };
  }

  private operation(method: string, url: string, auth: string, doc: RouteDoc): Record<string, unknown> {
    const mutating = method !== "GET";
    const parameters: Record<string, unknown>[] = [...url.matchAll(/:(\w+)/g)].map(([, name]) => ({
      name,
      in: "path",
      required: true,
      schema: { type: "string", maxLength: 200 },
    }));
    if (doc.query) {
      const query = jsonSchema(doc.query, "input") as { properties?: Record<string, unknown>; required?: string[] };
      for (const [name, schema] of Object.entries(query.properties ?? {})) {
        parameters.push({ name, in: "query", required: query.required?.includes(name) ?? false, schema });
      }
    }
    if (mutating && auth !== "public") {
      parameters.push({
        name: "Idempotency-Key",
        in: "header",
        required: false,
        description: "Makes a retry safe: the first answer is stored for 24 h and replayed (with Idempotent-Replayed: true).",
        schema: { type: "string", maxLength: 255 },
      });
    }
    const errors = new Set<ErrorCode>([...ALWAYS, ...BAD_INPUT, ...(doc.errors ?? [])]);
    if (doc.body) for (const code of BAD_BODY) errors.add(code);
    if (auth === "apiKey") for (const code of API_KEY) errors.add(code);
    if (auth === "customerJwt") errors.add("jwt_invalid");
    if (mutating && auth !== "public") for (const code of IDEMPOTENCY) errors.add(code);
    if (url.includes(":")) errors.add("resource_missing");

    const responses: Record<string, unknown> = {};
    for (const [status, schema] of Object.entries(doc.ok)) {
      responses[status] = {
        description: ({ "201": "Created", "202": "Accepted" } as Record<string, string>)[status] ?? "OK",
        headers: { ...REQUEST_ID_HEADER, ...RATE_LIMIT_HEADERS },
        content: doc.file
          ? { [doc.file]: { schema: { type: "string", format: "binary" } } }
          : { "application/json": { schema: jsonSchema(schema, "output") }, ...(doc.alsoAs && { [doc.alsoAs]: { schema: { type: "string" } } }) },
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
        headers: status === 429 || status === 503 ? { "Retry-After": { schema: { type: "integer" } }, ...REQUEST_ID_HEADER } : REQUEST_ID_HEADER,
        content: { "application/json": { schema: { $ref: "#/components/schemas/Error" } } },
      };
    }
    return {
      operationId: doc.operationId,
      summary: doc.summary,
      tags: [doc.tag],
      ...(auth === "public" ? { security: [] } : auth === "customerJwt" ? { security: [{ CustomerJwt: [] }] } : {}),
      ...(parameters.length > 0 && { parameters }),
      ...(doc.body && {
        requestBody: {
          required: false,
          content: { "application/json": { schema: jsonSchema(doc.body, "input"), ...(doc.example && { example: doc.example }) } },
        },
      }),
      responses,
    };
  }
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
