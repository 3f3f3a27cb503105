// Who is calling, as every door sees it: the client's address, and authentication that stops
// answering an address after too many failures (.docs/api.md "Idempotency and rate limits").
import type { IncomingHttpHeaders } from "node:http";
import type { FastifyRequest } from "fastify";
import { AppError, type ErrorCode } from "../domain/errors.js";
import type { Client } from "../domain/security-events.js";
import type { RateLimiter } from "./rate-limit.js";

/**
 * The client's address: the socket's peer, or, behind `proxies` proxies that each append the
 * address they saw to X-Forwarded-For, the entry the outermost one appended. Entries before it
 * came from the client and may be forged (a spoofed address would dodge its budget and pass an
 * API key's allowlist), so they are never used.
 */
export function clientAddress(headers: IncomingHttpHeaders, peer: string | undefined, proxies: number): string {
  const forwarded = headers["x-forwarded-for"];
  const entries =
    proxies > 0
      ? (Array.isArray(forwarded) ? forwarded.join(",") : (forwarded ?? ""))
          .split(",")
          .map((e) => e.trim())
          .filter(Boolean)
      : [];
  if (entries.length > 0) return entries[Math.max(0, entries.length - proxies)]!;
  return peer ?? "unknown";
}

/** The errors that count as a failed authentication. */
const FAILURES = new Set<ErrorCode>(["api_key_invalid", "api_key_ip_not_allowed", "jwt_invalid", "session_invalid", "sign_in_failed", "csrf_token_invalid"]);

/**
 * Runs `attempt` (an API-key or JWT check) for a caller at `address`: an address that failed too
 * often this minute gets 429 without its credentials being looked at, and each new failure (a
 * credential given but wrong or used from an address its key does not allow, not a missing one)
 * counts against it.
 */
export async function authenticateFrom<T>(limiter: RateLimiter, address: string, attempt: () => Promise<T>): Promise<T> {
  const key = `ip:${address}`;
  await limiter.check(key, "authFailures");
  try {
    return await attempt();
  } catch (e) {
    if (e instanceof AppError && FAILURES.has(e.code)) await limiter.penalize(key, "authFailures");
    throw e;
  }
}

/**
 * The API key a request sends: in X-API-Key, or as `Authorization: Bearer <key>` as Stripe takes it.
 * Another Authorization scheme (a proxy's Basic credentials) is not ours and is left alone; a Bearer
 * that is not a key (a customer JWT) fails like any wrong key. Both headers naming different keys
 * is a 400: which one was meant cannot be guessed.
 */
export function apiKeyOf(headers: IncomingHttpHeaders): string | undefined {
  const first = (v: string | string[] | undefined) => (Array.isArray(v) ? v[0] : v);
  const key = first(headers["x-api-key"]);
  const authorization = first(headers.authorization);
  if (authorization === undefined || !/^Bearer(\s|$)/i.test(authorization)) return key;
  const bearer = authorization.slice("Bearer".length).trim();
  if (key !== undefined && key !== bearer) {
    throw new AppError("parameter_invalid", "X-API-Key and Authorization: Bearer name different API keys: send the key in one of them", "Authorization");
  }
  return bearer;
}

/** Where a request comes from as the security history records it: the client's address and User-Agent. */
export function requestClient(req: FastifyRequest): Client & { ip: string } {
  const agent = req.headers["user-agent"];
  return { ip: req.clientAddress, userAgent: typeof agent === "string" ? agent : null };
}
