// Who is calling, as every door sees it: the client's address, and authentication that stops
// answering an address after too many failures (API.md "Limits for callers without a key").
import type { IncomingHttpHeaders } from "node:http";
import { AppError } from "../domain/errors.js";
import type { RateLimiter } from "./rate-limit.js";

/**
 * The client's address: the socket's peer, or, when `trustProxy` says a proxy in front sets it,
 * the first address of X-Forwarded-For (anyone can send that header: believed only behind a proxy).
 */
export function clientAddress(headers: IncomingHttpHeaders, peer: string | undefined, trustProxy: boolean): string {
  if (trustProxy) {
    const forwarded = headers["x-forwarded-for"];
    const first = (Array.isArray(forwarded) ? forwarded[0] : forwarded)?.split(",")[0]?.trim();
    if (first) return first;
  }
  return peer ?? "unknown";
}

/**
 * Runs `attempt` (an API-key or JWT check) for a caller at `address`: an address that failed too
 * often this minute gets 429 without its credentials being looked at, and each new failure (a
 * credential given but wrong, not a missing one) counts against it.
 */
export async function authenticateFrom<T>(limiter: RateLimiter, address: string, attempt: () => Promise<T>): Promise<T> {
  const key = `ip:${address}`;
  await limiter.check(key, "authFailures");
  try {
    return await attempt();
  } catch (e) {
    if (e instanceof AppError && (e.code === "api_key_invalid" || e.code === "jwt_invalid")) await limiter.penalize(key, "authFailures");
    throw e;
  }
}
