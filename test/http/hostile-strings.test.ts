// NUL and unpaired surrogates anywhere in a request are 400 parameter_invalid naming the parameter,
// at every door, and change nothing (.docs/api.md "Errors", text must be valid Unicode): PostgreSQL would
// refuse them mid-write (22021, 22P05). The cases are generated from the routes the input guard
// checks, the domain's zod schemas and the GraphQL schema, so a new route, body field or argument is
// covered without editing this file, and a new POST or PATCH route fails until BODIES names its schema.
import { reauthenticateSchema } from "../../src/domain/reauthentication-requests.js";
import { signInSchema, switchModeSchema } from "../../src/domain/session-requests.js";
import { forgotPasswordSchema, resetPasswordSchema } from "../../src/domain/password-reset-requests.js";
import { acceptInvitationSchema } from "../../src/domain/invitation-requests.js";
import {
  getNamedType,
  type GraphQLField,
  type GraphQLInputType,
  type GraphQLObjectType,
  isCompositeType,
  isEnumType,
  isInputObjectType,
  isListType,
  isNonNullType,
} from "graphql";
import { SignJWT } from "jose";
import { afterAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { selectSchema } from "../../src/domain/chain-selection-requests.js";
import { createSchema as chargeCreateSchema } from "../../src/domain/charges/requests.js";
import { jwtBodySchema, createSchema as customerCreateSchema, updateSchema as customerUpdateSchema } from "../../src/domain/customer-requests.js";
import { testWebhookSchema } from "../../src/domain/test-webhook-requests.js";
import { testPaySchema } from "../../src/domain/test-payment-requests.js";
import { createSchema as invoiceCreateSchema, updateSchema as invoiceUpdateSchema } from "../../src/domain/invoice-requests.js";
import { createSchema as linkCreateSchema, updateSchema as linkUpdateSchema } from "../../src/domain/payment-link-requests.js";
import { createSchema as planCreateSchema, updateSchema as planUpdateSchema } from "../../src/domain/plan-requests.js";
import {
  authorizeSchema,
  cancelSchema as subscriptionCancelSchema,
  createSchema as subscriptionCreateSchema,
  manageCancelSchema,
  updateSchema as subscriptionUpdateSchema,
} from "../../src/domain/subscription-requests.js";
import { claimSchema as refundClaimSchema, createSchema as refundCreateSchema } from "../../src/domain/refund-requests.js";
import { authorizationSchema } from "../../src/domain/authorizations.js";
import { facilitatorRequestSchema } from "../../src/domain/x402/requests.js";
import {
  createSchema as endpointCreateSchema,
  rotateSchema as endpointRotateSchema,
  updateSchema as endpointUpdateSchema,
} from "../../src/domain/webhook-endpoint-requests.js";
import { schema } from "../../src/graphql/schema.js";
import { guardedRoutes } from "../../src/http/input-guard.js";
import { type Call, expectError, startApp, WALLET } from "../helpers/harness.js";
import { sseSubscribe, subscribe, wsClient } from "../helpers/live.js";

const HOSTILE = { NUL: "bad\u0000text", "lone surrogate": "bad\ud800text" };
/** What a URL can carry: a lone surrogate has no UTF-8 form, so it cannot be percent-encoded. */
const URL_NUL = "%00";
const MESSAGE = /contains a NUL character or an unpaired surrogate; send valid UTF-8 text$/;

/** The hosted pages refuse a buyer's bad request with their error page (src/pay/buyer-error.ts), never the API's JSON body. */
function expectBuyerRefusal(res: Call): void {
  expect(res.status, res.text.slice(0, 200)).toBe(400);
  expect(res.headers.get("content-type")).toMatch(/^text\/html/);
  expect(res.text).toContain("<h1>This request could not be handled</h1>");
}

// Routes are read while the tests are collected, so the service starts here rather than in beforeAll.
const app = await startApp();
afterAll(() => app.stop());

const customer = (await app.call("POST", "/v1/customers", { body: { email: "fixture@example.com", name: "Fixture" } })).body;
const charge = (await app.call("POST", "/v1/charges", { body: { orderId: "fixture-order", amount: "1.00", customerId: customer.id } })).body;
const event = (await app.call("GET", "/v1/events?limit=1")).body.data[0];
const endpoint = (await app.call("POST", "/v1/webhook_endpoints", { body: { url: "http://127.0.0.1:9/fixture" } })).body;
const lineItems = [{ description: "Fixture line", quantity: 1, unitAmount: "1.00" }];
const invoice = (await app.call("POST", "/v1/invoices", { body: { customerId: customer.id, lineItems } })).body;
const link = (await app.call("POST", "/v1/payment_links", { body: { name: "Fixture link", amount: "1.00" } })).body;
const plan = (await app.call("POST", "/v1/plans", { body: { name: "Fixture plan", amount: "1.00", interval: "month" } })).body;
const subscription = (await app.call("POST", "/v1/subscriptions", { body: { customerId: customer.id, planId: plan.id } })).body;

/** Signs a customer JWT with the merchant's test secret. */
async function customerJwt(claims: Record<string, unknown>): Promise<string> {
  const { id, secret } = app.merchant.jwtSecrets.test;
  return new SignJWT(claims).setProtectedHeader({ alg: "HS256", kid: id }).setIssuedAt().setExpirationTime("10m").sign(new TextEncoder().encode(secret));
}
// Every REST call carries a key and a JWT, so each reaches the handler it would with valid text.
const authorization = `Bearer ${await customerJwt({ email: "jwt-fixture@example.com" })}`;

/** Rows a write would add or change: none may move when a request is refused. */
async function rows() {
  const p = app.db.prisma;
  const [customers, charges, events, updated, endpoints, endpointUpdated, invoices, links, plans, subscriptions] = await Promise.all([
    p.customer.count(),
    p.charge.count(),
    p.event.count(),
    p.customer.aggregate({ _max: { updatedAt: true } }),
    p.webhookEndpoint.count(),
    p.webhookEndpoint.aggregate({ _max: { updatedAt: true } }),
    p.invoice.aggregate({ _count: { _all: true }, _max: { updatedAt: true } }),
    p.paymentLink.aggregate({ _count: { _all: true }, _max: { updatedAt: true } }),
    p.plan.aggregate({ _count: { _all: true }, _max: { updatedAt: true } }),
    p.subscription.aggregate({ _count: { _all: true }, _max: { updatedAt: true } }),
  ]);
  return {
    customers,
    charges,
    events,
    lastUpdate: updated._max.updatedAt,
    endpoints,
    lastEndpointUpdate: endpointUpdated._max.updatedAt,
    invoices: [invoices._count._all, invoices._max.updatedAt],
    links: [links._count._all, links._max.updatedAt],
    plans: [plans._count._all, plans._max.updatedAt],
    subscriptions: [subscriptions._count._all, subscriptions._max.updatedAt],
  };
}

/** A param path as the API names it: `address.line1`, `ids[0]`. */
function paramOf(path: readonly (string | number)[]): string {
  return path.map((p, i) => (typeof p === "number" ? `[${p}]` : i === 0 ? p : `.${p}`)).join("");
}

/** A copy of `target` with `value` at `path`, creating the objects and lists on the way. */
function setIn(target: unknown, path: readonly (string | number)[], value: unknown): any {
  if (path.length === 0) return value;
  const [head, ...rest] = path;
  const copy: any = typeof head === "number" ? [...((target as unknown[]) ?? [])] : { ...((target as object) ?? {}) };
  copy[head!] = setIn(copy[head!], rest, value);
  return copy;
}

/** One hostile request and the param its 400 must name. */
interface Case {
  name: string;
  param: string;
}

/** Each text field, or metadata-like record (whose keys are text too), a zod input schema accepts. */
function zodLeaves(type: z.core.$ZodType, path: string[] = []): { path: string[]; record: boolean }[] {
  const def = type._zod.def as z.core.$ZodTypeDef & { innerType?: z.core.$ZodType; in?: z.core.$ZodType; shape?: Record<string, z.core.$ZodType> };
  switch (def.type) {
    case "optional":
    case "nullable":
    case "default":
      return zodLeaves(def.innerType!, path);
    case "pipe":
      return zodLeaves(def.in!, path);
    case "object":
      return Object.entries(def.shape!).flatMap(([key, field]) => zodLeaves(field, [...path, key]));
    case "record":
      return [{ path, record: true }];
    case "array":
      // Through the first item: every item has the same fields.
      return zodLeaves((def as unknown as { element: z.core.$ZodType }).element, [...path, 0] as string[]);
    default:
      // Numbers and enums too: a bad string must be named before its type is judged.
      return [{ path, record: false }];
  }
}

/** Each way to put `bad` into an input whose leaves are `leaves`: the value, and a record's key and value. */
function hostileInputs(leaves: { path: (string | number)[]; record: boolean }[], bad: string) {
  return leaves.flatMap(({ path, record }) =>
    record
      ? [
          { at: path, value: { [bad]: "v" } as unknown, param: paramOf(path), what: "key" },
          { at: path, value: { cart: bad }, param: paramOf([...path, "cart"]), what: "value" },
        ]
      : [{ at: path, value: bad as unknown, param: paramOf(path), what: "value" }],
  );
}

describe("REST and the hosted page", () => {
  /** The JSON body schema of every route that takes one (null: none), and a body it would accept. */
  const x402Requirements = { scheme: "exact", network: "eip155:31337", amount: "10000", asset: WALLET, payTo: WALLET, maxTimeoutSeconds: 60 };
  const x402Request = {
    x402Version: 2,
    paymentPayload: {
      x402Version: 2,
      accepted: x402Requirements,
      payload: {
        signature: `0x${"00".repeat(65)}`,
        authorization: { from: WALLET, to: WALLET, value: "10000", validAfter: "0", validBefore: "1", nonce: `0x${"00".repeat(32)}` },
      },
    },
    paymentRequirements: x402Requirements,
  };
  const BODIES: Record<string, { schema: z.core.$ZodType; valid: Record<string, unknown>; form?: true } | null> = {
    "POST /v1/customers": { schema: customerCreateSchema, valid: { email: "hostile@example.com", name: "Hostile" } },
    "PATCH /v1/customers/:id": { schema: customerUpdateSchema, valid: {} },
    "POST /v1/customers/jwt": { schema: jwtBodySchema, valid: {} },
    "POST /v1/charges": { schema: chargeCreateSchema, valid: { orderId: "hostile-order", amount: "1.00" } },
    "POST /v1/webhooks/test": { schema: testWebhookSchema, valid: { type: "charge.created" } },
    "POST /v1/events/:id/resend": null,
    "POST /v1/webhook_endpoints": { schema: endpointCreateSchema, valid: { url: "http://127.0.0.1:9/hostile" } },
    "PATCH /v1/webhook_endpoints/:id": { schema: endpointUpdateSchema, valid: {} },
    "POST /v1/webhook_endpoints/:id/rotate_secret": { schema: endpointRotateSchema, valid: {} },
    "POST /v1/public/charges/:id/chain": { schema: selectSchema, valid: { chainId: 31337 } },
    "POST /pay/:id/chain": { schema: selectSchema, valid: { chainId: "31337" }, form: true },
    "POST /pay/:id/test-payment": null,
    "POST /v1/test_helpers/charges/:id/expire": null,
    "POST /v1/test_helpers/charges/:id/pay": { schema: testPaySchema, valid: { amount: "1.00" } },
    "POST /v1/test_helpers/subscriptions/:id/advance": null,
    "POST /v1/charges/:id/mark_reviewed": null,
    "POST /v1/charges/:id/refunds": { schema: refundCreateSchema, valid: {} },
    "POST /v1/refunds/:id/cancel": null,
    "POST /v1/refunds/:id/send": null,
    "POST /v1/refunds/:id/authorization": {
      schema: authorizationSchema,
      valid: {
        from: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8",
        value: "1",
        validAfter: "0",
        validBefore: "1",
        nonce: `0x${"00".repeat(32)}`,
        signature: `0x${"00".repeat(65)}`,
      },
    },
    "POST /v1/public/charges/:id/authorizations": {
      schema: authorizationSchema,
      valid: {
        from: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8",
        value: "1",
        validAfter: "0",
        validBefore: "1",
        nonce: `0x${"00".repeat(32)}`,
        signature: `0x${"00".repeat(65)}`,
      },
    },
    "POST /pay/refunds/:id": {
      schema: refundClaimSchema.extend({ token: z.string() }),
      valid: { token: "t", address: "0x", confirmAddress: "0x" },
      form: true,
    },
    "POST /dashboard/session": { schema: signInSchema, valid: { email: "hostile@example.com", password: "not the password" } },
    "PATCH /dashboard/session": { schema: switchModeSchema, valid: { mode: "test" } },
    "POST /dashboard/password/forgot": { schema: forgotPasswordSchema, valid: { email: "hostile@example.com" } },
    "POST /dashboard/password/reset": { schema: resetPasswordSchema, valid: { token: "pwr_unknown", password: "a long enough password" } },
    "POST /dashboard/invitations/accept": { schema: acceptInvitationSchema, valid: { token: "invt_unknown", password: "a long enough password" } },
    "POST /dashboard/session/reauthenticate": { schema: reauthenticateSchema, valid: { password: "not the password" } },
    "POST /v1/invoices": { schema: invoiceCreateSchema, valid: { customerId: customer.id, lineItems } },
    "PATCH /v1/invoices/:id": { schema: invoiceUpdateSchema, valid: {} },
    "POST /v1/invoices/:id/finalize": null,
    "POST /v1/invoices/:id/void": null,
    "POST /v1/invoices/:id/mark_uncollectible": null,
    "POST /v1/invoices/:id/send": null,
    "POST /pay/invoices/:id/pay": null,
    "POST /v1/payment_links": { schema: linkCreateSchema, valid: { name: "Hostile link", amount: "1.00" } },
    "PATCH /v1/payment_links/:id": { schema: linkUpdateSchema, valid: {} },
    "POST /pay/l/:id": null,
    "POST /v1/plans": { schema: planCreateSchema, valid: { name: "Hostile plan", amount: "1.00", interval: "month" } },
    "PATCH /v1/plans/:id": { schema: planUpdateSchema, valid: {} },
    "POST /v1/subscriptions": { schema: subscriptionCreateSchema, valid: { customerId: customer.id, planId: plan.id } },
    "PATCH /v1/subscriptions/:id": { schema: subscriptionUpdateSchema, valid: {} },
    "POST /v1/subscriptions/:id/cancel": { schema: subscriptionCancelSchema, valid: {} },
    "POST /pay/unsubscribe": null,
    "POST /pay/subscribe/:id/authorize": {
      schema: authorizeSchema,
      valid: { chainId: 31337, payer: WALLET, permission: {}, signature: "0x00", permit: null },
    },
    "POST /pay/subscribe/:id/manage/cancel": { schema: manageCancelSchema, valid: { token: "t", at: "now" }, form: true },
    "POST /x402/verify": { schema: facilitatorRequestSchema, valid: x402Request },
    "POST /x402/settle": { schema: facilitatorRequestSchema, valid: x402Request },
  };

  const routes = guardedRoutes().filter((r) => r.method !== "HEAD" && r.method !== "OPTIONS");
  /** The route's URL with real ids, except `hostile` in place of `param`. */
  const fill = (url: string, param?: string, hostile?: string) =>
    url.replace(/:(\w+)/g, (_, name: string) => {
      if (name === param) return hostile!;
      if (name === "orderId") return charge.orderId;
      if (url.includes("/webhook_endpoints")) return endpoint.id;
      if (url.includes("/invoices")) return invoice.id;
      if (url.includes("/payment_links") || url.includes("/l/")) return link.id;
      if (url.includes("/plans")) return plan.id;
      if (url.includes("/subscriptions")) return subscription.id;
      return url.includes("/customers") ? customer.id : url.includes("/events") ? event.id : charge.id;
    });

  type RestCase = Case & { method: string; path: string; body?: unknown; form?: string };
  const cases: RestCase[] = routes.flatMap(({ method, url }) => {
    const route = `${method} ${url}`;
    const params = [...url.matchAll(/:(\w+)/g)].map((m) => m[1]!);
    const out: RestCase[] = [
      ...params.map((p) => ({ name: `${route}: path ${p} NUL`, method, path: fill(url, p, URL_NUL), param: p })),
      ...["query", "email"].map((q) => ({ name: `${route}: ?${q}= NUL`, method, path: `${fill(url)}?${q}=${URL_NUL}`, param: q })),
    ];
    if (method !== "POST" && method !== "PATCH" && method !== "PUT") return out;
    const body = BODIES[route];
    if (body === undefined) throw new Error(`${route} takes a body: add its schema to BODIES`);
    if (body === null) return out;
    for (const [kind, bad] of Object.entries(HOSTILE)) {
      for (const { at, value, param, what } of hostileInputs(zodLeaves(body.schema), bad)) {
        out.push({ name: `${route}: body ${param} ${what} ${kind}`, method, path: fill(url), body: setIn(body.valid, at, value), param });
      }
    }
    if (body.form) {
      for (const { path } of zodLeaves(body.schema)) {
        const form = new URLSearchParams({ ...(body.valid as Record<string, string>), [paramOf(path)]: HOSTILE.NUL }).toString();
        out.push({ name: `${route}: form ${paramOf(path)} NUL`, method, path: fill(url), form, param: paramOf(path) });
      }
    }
    return out;
  });

  const send = (c: RestCase): Promise<Call> =>
    app.call(c.method, c.path, {
      body: c.body,
      raw: c.form,
      headers: { authorization, ...(c.form !== undefined && { "content-type": "application/x-www-form-urlencoded" }) },
    });

  it("covers every guarded route and every field of every body schema", () => {
    expect(routes.length).toBeGreaterThanOrEqual(20);
    expect(routes.map((r) => `${r.method} ${r.url}`)).toEqual(expect.arrayContaining(Object.keys(BODIES)));
    const fields = Object.values(BODIES).reduce((n, b) => n + (b ? zodLeaves(b.schema).length : 0), 0);
    console.info(
      `REST: ${routes.length} routes, ${fields} body fields across ${Object.values(BODIES).filter(Boolean).length} bodies, ${cases.length} hostile requests`,
    );
  });

  it.each(cases.map((c) => [c.name, c] as const))("%s → 400 parameter_invalid", async (_name, c) => {
    const before = await rows();
    const res = await send(c);
    if (c.path.startsWith("/pay/")) expectBuyerRefusal(res);
    else {
      expectError(res, 400, "parameter_invalid", c.param);
      expect(res.body.message).toMatch(MESSAGE);
    }
    expect(await rows()).toEqual(before);
  });

  it.each(routes.filter((r) => r.url.includes(":")).map((r) => [r.method, r.url]))(
    "%s %s: a malformed percent-encoding in the path is a 400 error body",
    async (method, url) => {
      const res = await app.call(method, fill(url, url.match(/:(\w+)/)![1], "%ED%A0%80"));
      expectError(res, 400, "parameter_invalid");
    },
  );
});

describe("customer JWT claims", () => {
  const valid = { email: "claims@example.com", name: "Claims", phone: "+49" };
  const cases = Object.keys(valid).flatMap((claim) => Object.entries(HOSTILE).map(([kind, bad]) => [claim, kind, bad]));

  it.each(cases)("%s claim with %s → 400 parameter_invalid", async (claim, _kind, bad) => {
    const before = await rows();
    const token = await customerJwt({ ...valid, [claim]: bad });
    const res = await app.call("POST", "/v1/customers/jwt", { key: null, body: {}, headers: { authorization: `Bearer ${token}` } });
    expectError(res, 400, "parameter_invalid", `jwt.${claim}`);
    expect(res.body.message).toMatch(MESSAGE);
    expect(await rows()).toEqual(before);
  });
});

describe("GraphQL", () => {
  type Leaf = { path: (string | number)[]; record: boolean };

  /** Each String, ID or Metadata leaf of an argument type (lists through their first item). */
  function graphqlLeaves(type: GraphQLInputType, path: (string | number)[]): Leaf[] {
    if (isNonNullType(type)) return graphqlLeaves(type.ofType, path);
    if (isListType(type)) return graphqlLeaves(type.ofType, [...path, 0]);
    if (isInputObjectType(type)) return Object.values(type.getFields()).flatMap((f) => graphqlLeaves(f.type, [...path, f.name]));
    if (isEnumType(type)) return [];
    if (type.name === "String" || type.name === "ID") return [{ path, record: false }];
    if (type.name === "Metadata") return [{ path, record: true }];
    return [];
  }

  /** A value the type accepts: required fields filled, everything optional left out. */
  function sample(type: GraphQLInputType): unknown {
    if (isNonNullType(type)) return sample(type.ofType);
    if (isListType(type)) return [];
    if (isInputObjectType(type)) {
      const required = Object.values(type.getFields()).filter((f) => isNonNullType(f.type) && f.defaultValue === undefined);
      return Object.fromEntries(required.map((f) => [f.name, sample(f.type)]));
    }
    if (isEnumType(type)) return type.getValues()[0]!.name;
    return ({ Int: 1, Float: 1, Boolean: true, Metadata: {} } as Record<string, unknown>)[type.name] ?? "x";
  }

  /** `base` with a sample item wherever `path` enters a list, so a hostile field comes with its item's required ones. */
  function itemsAlong(type: GraphQLInputType, base: unknown, path: readonly (string | number)[]): unknown {
    if (isNonNullType(type)) return itemsAlong(type.ofType, base, path);
    if (path.length === 0) return base;
    const [head, ...rest] = path;
    if (isListType(type)) {
      const list = [...((base as unknown[] | undefined) ?? [])];
      list[head as number] = itemsAlong(type.ofType, list[head as number] ?? sample(type.ofType), rest);
      return list;
    }
    if (!isInputObjectType(type)) return base;
    const object = (base ?? {}) as Record<string, unknown>;
    return { ...object, [head!]: itemsAlong(type.getFields()[head as string]!.type, object[head as string], rest) };
  }

  /** `value` as a GraphQL literal of `type`. */
  function literal(type: GraphQLInputType, value: unknown): string {
    if (value === null || value === undefined) return "null";
    if (isNonNullType(type)) return literal(type.ofType, value);
    if (isListType(type)) return `[${(value as unknown[]).map((v) => literal(type.ofType, v)).join(", ")}]`;
    if (isEnumType(type)) return String(value);
    if (isInputObjectType(type) || type.name === "Metadata") {
      const fields = isInputObjectType(type) ? type.getFields() : {};
      const entries = Object.entries(value as object).map(([k, v]) => `${k}: ${fields[k] ? literal(fields[k].type, v) : JSON.stringify(v)}`);
      return `{${entries.join(", ")}}`;
    }
    // JSON's string escapes (\u0000) are GraphQL's too.
    return JSON.stringify(value);
  }

  type Operation = { root: "query" | "mutation" | "subscription"; field: GraphQLField<unknown, unknown> };
  const roots = { query: schema.getQueryType(), mutation: schema.getMutationType(), subscription: schema.getSubscriptionType() };
  const operations: Operation[] = Object.entries(roots).flatMap(([root, type]) =>
    Object.values((type as GraphQLObjectType).getFields())
      .filter((field) => field.args.length > 0)
      .map((field) => ({ root: root as Operation["root"], field })),
  );

  const selection = (field: Operation["field"]) => (isCompositeType(getNamedType(field.type)) ? " { __typename }" : "");
  /** The operation with every argument as a variable of the same name. */
  const withVariables = ({ root, field }: Operation) =>
    `${root}(${field.args.map((a) => `$${a.name}: ${a.type}`).join(", ")}) { ${field.name}(${field.args.map((a) => `${a.name}: $${a.name}`).join(", ")})${selection(field)} }`;
  /** The operation with `args` written inline. */
  const inline = ({ root, field }: Operation, args: Record<string, unknown>) => {
    const written = field.args.filter((a) => args[a.name] !== undefined).map((a) => `${a.name}: ${literal(a.type, args[a.name])}`);
    return `${root} { ${field.name}(${written.join(", ")})${selection(field)} }`;
  };
  const required = ({ field }: Operation) => Object.fromEntries(field.args.filter((a) => isNonNullType(a.type)).map((a) => [a.name, sample(a.type)]));

  type GraphQLCase = Case & { query: string; variables?: Record<string, unknown> };
  const withText = operations.map((op) => ({ op, leaves: op.field.args.flatMap((a) => graphqlLeaves(a.type, [a.name])) })).filter((o) => o.leaves.length > 0);
  const cases: GraphQLCase[] = withText.flatMap(({ op, leaves }) => {
    const out: GraphQLCase[] = [];
    for (const [kind, bad] of Object.entries(HOSTILE)) {
      for (const { at, value, param, what } of hostileInputs(leaves, bad)) {
        const arg = op.field.args.find((a) => a.name === at[0])!;
        const base = { ...required(op), [arg.name]: itemsAlong(arg.type, required(op)[arg.name], at.slice(1)) };
        const variables = setIn(base, at, value);
        out.push({ name: `${op.root} ${op.field.name}: $${param} ${what} ${kind}`, query: withVariables(op), variables, param });
        // A lone surrogate cannot be written in a GraphQL string (a syntax error), nor NUL in a name (a key).
        if (bad === HOSTILE.NUL && what === "value")
          out.push({ name: `${op.root} ${op.field.name}: inline ${param} NUL`, query: inline(op, variables), param });
      }
    }
    return out;
  });

  it("covers every argument that takes text", () => {
    expect(withText.length).toBeGreaterThanOrEqual(15);
    const leaves = withText.reduce((n, o) => n + o.leaves.length, 0);
    console.info(`GraphQL: ${operations.length} fields with arguments, ${withText.length} with ${leaves} text leaves, ${cases.length} hostile operations`);
  });

  /** Sends the operation over HTTP and expects it refused, naming `param`, with nothing written. */
  async function expectRefused(query: string, variables: Record<string, unknown> | undefined, param: string) {
    const before = await rows();
    const res = await app.call("POST", "/graphql", { body: { query, variables } });
    expect(res.status, res.text).toBeLessThan(500);
    expect(res.body.errors, res.text).toHaveLength(1);
    expect(res.body.errors[0].extensions).toEqual({ code: "parameter_invalid", param, statusCode: 400 });
    expect(res.body.errors[0].message).toMatch(MESSAGE);
    expect(await rows()).toEqual(before);
  }

  it.each(cases.map((c) => [c.name, c] as const))("%s → parameter_invalid", (_name, { query, variables, param }) => expectRefused(query, variables, param));

  it.each([
    [
      "a list inside metadata",
      'mutation { createCustomer(input: {email: "l@example.com", name: "L", metadata: {cart: ["ok", "\\u0000"]}}) { id } }',
      "input.metadata.cart[1]",
    ],
    ["a variable's default value", 'query($id: ID! = "\\u0000") { customer(id: $id) { id } }', "id"],
  ])("a literal in %s is named by its path", (_where, query, param) => expectRefused(query, undefined, param));

  it("over WebSocket and SSE too", async () => {
    const query = `subscription($id: ID!) { chargeUpdated(id: $id) { id } }`;
    const mutation = `mutation($input: UpdateCustomerInput!) { updateCustomer(id: "${customer.id}", input: $input) { id } }`;
    const client = wsClient(app.url, app.testKey);
    const ws = [subscribe(client, query, { id: HOSTILE["lone surrogate"] }), subscribe(client, mutation, { input: { metadata: { cart: HOSTILE.NUL } } })];
    const sse = sseSubscribe(app.url, query, { id: HOSTILE.NUL }, app.testKey);
    for (const r of [...ws, sse]) await r.ended();
    const extensions = [...ws, sse].map((r) => (r.errors[0] as any[])[0].extensions);
    expect(extensions).toEqual([
      { code: "parameter_invalid", param: "id", statusCode: 400 },
      { code: "parameter_invalid", param: "input.metadata.cart", statusCode: 400 },
      { code: "parameter_invalid", param: "id", statusCode: 400 },
    ]);
    await client.dispose();
  });
});
