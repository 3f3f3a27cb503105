// Per-key request budgets per route group and minute (API.md "Conventions"). Redis-backed when
// configured so every API process shares one budget; in memory otherwise, and as Redis's fallback.
import type { Redis } from "ioredis";
import { type IRateLimiterOptions, RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from "rate-limiter-flexible";
import { AppError } from "../domain/errors.js";

export type RouteGroup = "create" | "read" | "list";

/** What the RateLimit-* headers report after a request was counted. */
export interface RateLimitState {
  limit: number;
  remaining: number;
  /** Seconds until the window resets. */
  reset: number;
}

/** Counts requests per key and route group; throws 429 `rate_limited` past the limit. */
export class RateLimiter {
  private readonly limiters: Record<RouteGroup, RateLimiterMemory | RateLimiterRedis>;

  constructor(
    private readonly limits: Record<RouteGroup, number>,
    redis?: Redis,
  ) {
    const make = (group: RouteGroup) => {
      const opts: IRateLimiterOptions = { points: limits[group], duration: 60, keyPrefix: `sg:rl:${group}` };
      if (!redis) return new RateLimiterMemory(opts);
      // When Redis is unreachable each process keeps limiting on its own rather than failing requests.
      return new RateLimiterRedis({ ...opts, storeClient: redis, insuranceLimiter: new RateLimiterMemory(opts) });
    };
    this.limiters = { create: make("create"), read: make("read"), list: make("list") };
  }

  /** Counts one request of `key` in `group`. */
  async consume(key: string, group: RouteGroup): Promise<RateLimitState> {
    const limit = this.limits[group];
    try {
      const res = await this.limiters[group].consume(key);
      return { limit, remaining: res.remainingPoints, reset: Math.ceil(res.msBeforeNext / 1000) };
    } catch (e) {
      if (!(e instanceof RateLimiterRes)) throw e;
      const reset = Math.max(1, Math.ceil(e.msBeforeNext / 1000));
      throw new AppError(429, "rate_limited", `Too many ${group} requests for this API key: the limit is ${limit} per minute. Retry after ${reset} s.`, null, {
        "Retry-After": String(reset),
        "RateLimit-Limit": String(limit),
        "RateLimit-Remaining": "0",
        "RateLimit-Reset": String(reset),
      });
    }
  }
}
