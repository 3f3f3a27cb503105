// What every /v1 route (and the hosted page) shares: who is calling (API key, customer JWT, or
// nobody), the rate limit, and Idempotency-Key handling. Handlers then only parse, call the domain
// and shape the answer.
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { z } from "zod";
import type { Prisma } from "../db/client.js";
import type { ChainSet } from "../chain/chains.js";
import type { DevnetInfo } from "../chain/devnet.js";
import type { AuthorizationReaders } from "../domain/authorizations.js";
import type { ApiKeyAuthenticator } from "../domain/api-keys.js";
import type { ChargeSettings } from "../domain/charges/settings.js";
import { verifyCustomerJwt } from "../domain/customer-jwt.js";
import type { CustomerClaims } from "../domain/customers.js";
import { AppError, type ErrorCode } from "../domain/errors.js";
import { inScope, type Scope } from "../domain/scope.js";
import type { Actor } from "../domain/security-events.js";
import { parseInput } from "../domain/validation.js";
import type { Bulkhead, Release } from "../http/bulkhead.js";
import { apiKeyOf, authenticateFrom, clientAddress, requestClient } from "../http/callers.js";
import { type HostedPages, pageTokenOf } from "../http/hosted-pages.js";
import { hasSessionCookie } from "../http/session-cookie.js";
import type { RateLimiter, RateLimitState, RouteGroup } from "../http/rate-limit.js";
import { toAppError } from "../http/errors.js";
import { type HeldKey, type IdempotencyStore, requestFingerprint } from "./idempotency.js";
import { API_VERSION, checkVersion, VERSION_HEADER } from "./version.js";

declare module "fastify" {
  interface FastifyContextConfig {
    /** Rate-limit bucket; routes without one are not /v1 API routes. */
    group?: RouteGroup;
    /** How the caller proves who it is; API key unless stated. `public`: nobody (the hosted page). */
    auth?: "apiKey" | "customerJwt" | "public";
    /** The GraphQL endpoint: without an X-API-Key or a session cookie its caller spends the address's public budget. */
    graphql?: boolean;
  }
  interface FastifyRequest {
    scope: Scope | null;
    /** The client's address (X-Forwarded-For's first entry only with TRUST_PROXY), read once. */
    clientAddress: string;
    /** The charge whose hosted page this request says it comes from (a valid page token), or null. */
    pageCharge: string | null;
    jwtClaims: CustomerClaims | null;
    /** The Idempotency-Key this request holds while it runs, or null. */
    idempotency: HeldKey | null;
    /** Whether the answer refuses the request's input (400 body_invalid_json or parameter_*): such an answer is never stored under its key. */
    inputRefused: boolean;
  }
}

export interface RestDeps {
  prisma: Prisma;
  authenticator: ApiKeyAuthenticator;
  rateLimiter: RateLimiter;
  idempotency: IdempotencyStore;
  charges: ChargeSettings;
  chains: ChainSet;
  /** Each chain's USDC, as EIP-3009 authorizations are checked against it. */
  authorizations: AuthorizationReaders;
  /** Proxies in front that append to X-Forwarded-For (TRUST_PROXY). */
  trustProxy: number;
  /** The share of the database that requests without an API key may use. */
  anonymous: Bulkhead;
  /** The hosted pages' tokens and their lane, ahead of the anonymous shedding. */
  hostedPages: HostedPages;
  /** SUBSCRIPTION_RETRY_SCHEDULE (ms): the test helper's advance runs failures as the worker does. */
  subscriptionRetrySchedule: readonly number[];
  /** The devnet this process runs (its funded test wallet pays the test helper's payments), or null. */
  devnet: DevnetInfo | null;
}

const MUTATING = new Set(["POST", "PATCH", "DELETE"]);
/**
 * The codes of input refused before anything changed, by the door or by the domain's validation
 * (a request that fails changes nothing): like Stripe, a key is saved only for a request that ran,
 * so the corrected request may reuse the key.
 */
const REFUSED_INPUT = new Set<ErrorCode>(["body_invalid_json", "parameter_missing", "parameter_invalid", "parameter_unknown"]);
/** The query of a route whose doc declares none. */
const NO_QUERY = z.strictObject({});

/**
 * Gives a bulkhead place back once the answer is sent or the client has gone away, whichever comes
 * first. A response's `close` fires in both cases; Fastify's onResponse does not fire for a client
 * that left mid-handler, and a place kept by one would be lost to the lane for good (a hosted page
 * that reloads twice in a row aborts its first request).
 */
function holdUntilClosed(reply: FastifyReply, release: Release): void {
  if (reply.raw.closed || reply.raw.destroyed) return release();
  reply.raw.once("close", release);
}

/** The authenticated scope of a /v1 request (set by the preHandler). */
export function scopeOf(req: FastifyRequest): Scope {
  if (!req.scope) throw new Error("route is missing its auth config");
  return req.scope;
}

/** An API key's request as the security history's actor: no user, the request's address and browser. */
export function apiKeyActor(req: FastifyRequest): Actor {
  return { userId: null, email: null, ...requestClient(req) };
}

/** Installs authentication, rate limiting and idempotency for routes that declare a `group`. */
export function installApiPlumbing(app: FastifyInstance, deps: RestDeps): void {
  app.decorateRequest("scope", null);
  app.decorateRequest("jwtClaims", null);
  app.decorateRequest("idempotency", null);
  app.decorateRequest("inputRefused", false);
  app.decorateRequest("pageCharge", null);
  app.decorateRequest("clientAddress", "");

  // An address that spent its budget is refused before its body is read or parsed: under a flood,
  // refusing must cost next to nothing. A hosted page's own request (its token checks out: one HMAC)
  // is not shed here; whether it is about the token's charge is judged once that is known.
  app.addHook("onRequest", async (req) => {
    req.clientAddress = clientAddress(req.headers, req.socket.remoteAddress, deps.trustProxy);
    const { auth, graphql } = req.routeOptions.config;
    if (auth !== "public" && !(graphql && req.headers["x-api-key"] === undefined && !hasSessionCookie(req.headers))) return;
    req.pageCharge = deps.hostedPages.chargeOf(pageTokenOf(req.headers, req.url));
    if (req.pageCharge === null) deps.anonymous.refuseWhenSaturated();
    await deps.rateLimiter.check(`ip:${req.clientAddress}`, "public");
  });

  // After the budget check, and before the body is read: a version this build does not speak is refused outright.
  app.addHook("onRequest", async (req) => {
    if (isApiPath(req.url)) checkVersion(header(req, VERSION_HEADER.toLowerCase()));
  });
  // onSend sees every answer, errors and idempotent replays included.
  app.addHook("onSend", async (req, reply, payload) => {
    if (isApiPath(req.url)) reply.header(VERSION_HEADER, API_VERSION);
    return payload;
  });

  // A body, when there is one, is a JSON object: refused as the malformed body it is (before the
  // caller is even identified, as unparsable JSON is), never read as an empty one.
  app.addHook("preValidation", async (req) => {
    if (req.routeOptions.config.group && isApiPath(req.url)) assertJsonObject(req.body);
  });

  app.addHook("preHandler", async (req, reply) => {
    const { group, auth = "apiKey" } = req.routeOptions.config;
    if (!group) return;
    const address = req.clientAddress;
    const limiter = deps.rateLimiter;
    let limit: RateLimitState;
    if (auth === "public") {
      // No caller identity: the budget is per client address.
      limit = await limiter.consume(`ip:${address}`, "public");
      // A page's request about its own charge takes the hosted pages' lane; any other, the anonymous one.
      const charge = (req.params as { id?: string } | undefined)?.id;
      holdUntilClosed(reply, req.pageCharge !== null && req.pageCharge === charge ? await deps.hostedPages.enter(charge) : await deps.anonymous.enter());
    } else if (auth === "customerJwt") {
      const verified = await authenticateFrom(limiter, address, () => verifyCustomerJwt(deps.prisma, header(req, "authorization")));
      req.scope = verified.scope;
      req.jwtClaims = verified.claims;
      // A browser speaks for one customer: per address and per email, never the merchant's whole budget.
      await limiter.consume(`ip:${address}`, "public");
      const { merchantId, livemode } = verified.scope;
      limit = await limiter.consume(`jwt:${merchantId}:${livemode}:${verified.claims.email.toLowerCase()}`, group);
      holdUntilClosed(reply, await deps.anonymous.enter());
    } else {
      const principal = await authenticateFrom(limiter, address, () => deps.authenticator.authenticate(apiKeyOf(req.headers), address));
      req.scope = inScope(principal);
      limit = await limiter.consume(principal.credentialId, group);
    }
    reply.header("RateLimit-Limit", limit.limit).header("RateLimit-Remaining", limit.remaining).header("RateLimit-Reset", limit.reset);
    // A /v1 route takes the query its doc declares (parsed strictly by the handler) or none: an
    // unknown parameter is a 400 parameter_unknown everywhere, as on lists, never silently ignored.
    const { doc } = req.routeOptions.config;
    if (doc && !doc.query) parseInput(NO_QUERY, req.query);

    const key = header(req, "idempotency-key");
    // Idempotency records belong to a merchant: public routes have none (and are safe to repeat).
    if (key === undefined || !MUTATING.has(req.method) || !req.scope) return;
    const claim = await deps.idempotency.claim(req.scope, key, requestFingerprint(req.method, req.url, req.body));
    if (claim.kind === "replay") return replay(reply, claim.status, claim.body);
    req.idempotency = claim.held;
  });

  // Runs before the error handler shapes the answer: the error's code is still at hand.
  app.addHook("onError", async (req, _reply, err) => {
    if (req.idempotency && REFUSED_INPUT.has(toAppError(err).code)) req.inputRefused = true;
  });

  app.addHook("onSend", async (req, reply, payload) => {
    if (!req.idempotency || !req.scope) return payload;
    const { statusCode } = reply;
    // 5xx and 429 say nothing about the request itself, and refused input changed nothing: a
    // retry with the same key runs (the corrected request too). Anything else is the key's answer.
    if (statusCode >= 500 || statusCode === 429 || req.inputRefused) await deps.idempotency.release(req.scope, req.idempotency);
    else await deps.idempotency.complete(req.scope, req.idempotency, statusCode, String(payload));
    return payload;
  });
}

function replay(reply: FastifyReply, status: number, body: string): FastifyReply {
  return reply.code(status).header("content-type", "application/json; charset=utf-8").header("Idempotent-Replayed", "true").send(body);
}

/** Refuses a body that is present but not a JSON object (`null`, an array, a string, a number, a boolean). */
function assertJsonObject(body: unknown): void {
  if (body === undefined || (typeof body === "object" && body !== null && !Array.isArray(body))) return;
  const received = body === null ? "null" : Array.isArray(body) ? "an array" : `a ${typeof body}`;
  throw new AppError("body_invalid_json", `The request body must be a JSON object such as {"name": "value"}; received ${received}`);
}

/** Whether `url` is a REST /v1 address (whose answers carry the version header). */
function isApiPath(url: string): boolean {
  return url.startsWith("/v1/");
}

function header(req: FastifyRequest, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
}
