// Request budgets per minute (.docs/api.md "REST conventions" and "Idempotency and rate limits"): per API
// key and route group; per client address for callers without a key; and failed authentications
// per client address. Redis-backed when configured so every API process shares one budget; in
// memory otherwise, and as Redis's fallback.
import type { Redis } from "ioredis";
import { type IRateLimiterOptions, RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from "rate-limiter-flexible";
import type { RateLimits } from "../config.js";
import { AppError } from "../domain/errors.js";

/**
 * A budget: a key's route groups, a client address's public requests, its failed authentications,
 * the payments without gas it hands in, an email's failed dashboard sign-ins, and the charges an
 * address makes from one payment link.
 */
export type Budget = keyof RateLimits | "signInFailures" | "linkCharges";
export type RouteGroup = "create" | "read" | "list" | "x402";

/** What the RateLimit-* headers report after a request was counted. */
export interface RateLimitState {
  limit: number;
  remaining: number;
  /** Seconds until the window resets. */
  reset: number;
}

const BUDGETS: Budget[] = ["create", "read", "list", "x402", "public", "authFailures", "gasless", "signInFailures", "linkCharges"];

/** Failed sign-ins an email may have per window before it is locked out (.docs/dashboard.md "Sign-in and sessions"). */
const SIGN_IN_FAILURES = { points: 5, seconds: 15 * 60 };
/** Charges one address may make from one payment link per minute (.docs/invoices.md "Payment links"). */
const LINK_CHARGES = { points: 20, seconds: 60 };

/** What a limit message says was too many. */
function subject(budget: Budget): string {
  if (budget === "public") return "requests without an API key from this address";
  if (budget === "authFailures") return "failed authentications from this address";
  if (budget === "signInFailures") return "failed sign-ins for this email";
  if (budget === "linkCharges") return "payments started from this link by this address";
  if (budget === "gasless") return "payments without gas from this address";
  if (budget === "x402") return "x402 verify and settle requests for this API key";
  return `${budget} requests for this API key`;
}

/** Counts requests per key (or address) and budget; throws 429 `rate_limited` past the limit. */
export class RateLimiter {
  private readonly limiters: Record<Budget, RateLimiterMemory | RateLimiterRedis>;

  constructor(
    private readonly limits: RateLimits,
    redis?: Redis,
  ) {
    const make = (budget: Budget) => {
      const opts: IRateLimiterOptions = { ...this.window(budget), keyPrefix: `sg:rl:${budget}` };
      if (!redis) return new RateLimiterMemory(opts);
      // When Redis is unreachable each process keeps limiting on its own rather than failing requests.
      return new RateLimiterRedis({ ...opts, storeClient: redis, insuranceLimiter: new RateLimiterMemory(opts) });
    };
    this.limiters = Object.fromEntries(BUDGETS.map((b) => [b, make(b)])) as Record<Budget, RateLimiterMemory | RateLimiterRedis>;
  }

  /** Counts `points` requests of `key` against `budget`. */
  async consume(key: string, budget: Budget, points = 1): Promise<RateLimitState> {
    const limit = this.window(budget).points;
    try {
      const res = await this.limiters[budget].consume(key, points);
      return { limit, remaining: res.remainingPoints, reset: Math.ceil(res.msBeforeNext / 1000) };
    } catch (e) {
      if (!(e instanceof RateLimiterRes)) throw e;
      throw this.exceeded(budget, e.msBeforeNext);
    }
  }

  /** Throws 429 when `key` has nothing left of `budget`, without counting anything. */
  async check(key: string, budget: Budget): Promise<void> {
    const res = await this.limiters[budget].get(key);
    if (res && res.consumedPoints >= this.window(budget).points) throw this.exceeded(budget, res.msBeforeNext);
  }

  /** Gives one back to `key`'s `budget` (an attempt counted up front that did not fail). */
  async reward(key: string, budget: Budget): Promise<void> {
    await this.limiters[budget].reward(key, 1);
  }

  /** Counts one against `key`'s `budget` without failing (a failure already being reported). */
  async penalize(key: string, budget: Budget): Promise<void> {
    await this.limiters[budget].penalty(key, 1);
  }

  /** How many `budget` allows, per how many seconds. */
  private window(budget: Budget): { points: number; duration: number } {
    if (budget === "signInFailures") return { points: SIGN_IN_FAILURES.points, duration: SIGN_IN_FAILURES.seconds };
    if (budget === "linkCharges") return { points: LINK_CHARGES.points, duration: LINK_CHARGES.seconds };
    return { points: this.limits[budget], duration: 60 };
  }

  private exceeded(budget: Budget, msBeforeNext: number): AppError {
    const { points: limit, duration } = this.window(budget);
    const reset = Math.max(1, Math.ceil(msBeforeNext / 1000));
    const per = duration === 60 ? "minute" : `${duration / 60} minutes`;
    return new AppError("rate_limited", `Too many ${subject(budget)}: the limit is ${limit} per ${per}. Retry after ${reset} s.`, null, {
      headers: { "Retry-After": String(reset), "RateLimit-Limit": String(limit), "RateLimit-Remaining": "0", "RateLimit-Reset": String(reset) },
    });
  }
}
