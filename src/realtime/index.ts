// The live-update plumbing of one process, chosen by the configuration.
import type { Redis } from "ioredis";
import type { Logger } from "pino";
import type { Config } from "../config.js";
import { LiveCharges } from "./charges.js";
import { PubSub } from "./pubsub.js";

/** A process's pub/sub and the charge feed over it. */
export interface Realtime {
  pubsub: PubSub;
  live: LiveCharges;
}

/**
 * Redis pub/sub when REDIS_URL is set (`publisher`: an existing command connection to share),
 * in-process otherwise. A process that serves no subscriptions (a worker) passes `subscribe: false`.
 */
export function openRealtime(config: Config, logger: Logger, options: { subscribe: boolean; publisher?: Redis }): Realtime {
  const pubsub = config.redisUrl ? PubSub.redis(config.redisUrl, logger, options) : PubSub.inProcess();
  return { pubsub, live: new LiveCharges(pubsub, logger, config.live.maxQueued, config.live.subscribersPerCharge) };
}
