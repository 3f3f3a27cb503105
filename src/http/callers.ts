// Who is calling, as every door sees it: the client's address, and authentication that stops
// answering an address after too many failures (API.md "Limits for callers without a key").
import type { IncomingHttpHeaders } from "node:http";
import { AppError, type ErrorCode } from "../domain/errors.js";
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
