// A typed publish/subscribe: over Redis when REDIS_URL is set (every process sees every message,
// through one publisher and one subscriber connection per process), in-process otherwise.
//
// Invariants:
// - A subscription is registered when `subscribe` returns, before its first `next()`: a caller can
//   subscribe, then read the current state, and miss nothing in between.
// - A subscription never holds more than `maxQueued` unread messages. Past that it is cut off: its
//   queue is dropped and it yields OVERFLOW once, then ends. A slow reader costs bounded memory.
// - Publishing never throws and never waits: while Redis is away messages are dropped (and logged);
//   subscribers are told to RESYNC when it is back, and reload what they follow from the database.
import { setMaxListeners } from "node:events";
import { createRedisEventTarget } from "@graphql-yoga/redis-event-target";
import { Redis } from "ioredis";
import type { Logger } from "pino";

/** A named stream of messages of type T. */
export interface Channel<T> {
  readonly name: string;
  /** Type-level only: ties a channel to its message type. */
  readonly message?: T;
}

/** A channel whose messages are of type T. */
export function channel<T>(name: string): Channel<T> {
  return { name };
}

/** Yielded once by a subscription that fell too far behind, just before it ends. */
export const OVERFLOW = Symbol("overflow");
/** Yielded when messages may have been missed (Redis came back after an outage): reload and go on. */
export const RESYNC = Symbol("resync");

export type Delivery<T> = T | typeof OVERFLOW | typeof RESYNC;

/** An open subscription: an async iterator that must be ended with `return()` when done. */
export interface Subscription<T> extends AsyncIterableIterator<Delivery<T>> {
  return(): Promise<IteratorResult<Delivery<T>>>;
  /** Resolves once messages published from now on are sure to arrive (Redis confirmed the channel). */
  ready: Promise<void>;
}

export interface SubscribeOptions {
  /** Unread messages kept before the subscription is cut off. */
  maxQueued?: number;
  /** Ends the subscription (cleanly: `done`) when aborted. */
  signal?: AbortSignal | undefined;
  /** Called when the subscription ends, however it ends. */
  onClose?: () => void;
}

/** Where messages travel: a Redis channel set or an in-process EventTarget. */
interface Target {
  addEventListener(topic: string, listener: (event: CustomEvent) => void): void;
  removeEventListener(topic: string, listener: (event: CustomEvent) => void): void;
  dispatchEvent(event: CustomEvent): boolean;
}

const DEFAULT_MAX_QUEUED = 100;
/** Published by a process that dropped messages during an outage, once it can publish again. */
const RESYNC_CHANNEL = "stablegate:resync";
/** How long a new subscription waits for Redis to confirm its channel (longer only while Redis is away; RESYNC then covers it). */
const SUBSCRIBE_WAIT_MS = 2_000;

/** Publish/subscribe over Redis or in-process; see the invariants above. */
export class PubSub {
  private readonly open = new Set<Queue<unknown>>();
  private resynced = 0;

  private constructor(
    private readonly target: Target,
    /** The Redis connections, or null in-process. */
    private readonly redis: { publisher: Redis; subscriber: Redis | null; owned: Redis[] } | null,
    /** The pending confirmation of a channel's SUBSCRIBE, if any. */
    private readonly confirmation: (topic: string) => Promise<void> | undefined = () => undefined,
  ) {}

  /** Messages stay in this process. */
  static inProcess(): PubSub {
    const target = new EventTarget();
    // Many subscribers of one charge are expected (and limited elsewhere), not a leak to warn about.
    setMaxListeners(Number.POSITIVE_INFINITY, target);
    return new PubSub(target as unknown as Target, null);
  }

  /**
   * Messages go through Redis. `publisher` may be shared (the rate limiter's command connection);
   * with `subscribe: false` (a worker) no subscriber connection is opened.
   */
  static redis(url: string, logger: Logger, options: { publisher?: Redis; subscribe: boolean }): PubSub {
    const owned: Redis[] = [];
    const publisher = options.publisher ?? track(owned, commandConnection(url, logger));
    // Offline commands queue without limit here: SUBSCRIBE must survive an outage (ioredis re-subscribes on reconnect).
    const subscriber = options.subscribe ? track(owned, new Redis(url, { maxRetriesPerRequest: null, lazyConnect: false })) : null;
    subscriber?.on("error", (err) => logger.warn({ err: err.message }, "redis subscriber connection failed; retrying"));
    // The event target ignores the promises of the commands it sends: each failure is caught here so
    // that none becomes an unhandled rejection (which would stop the process).
    let missed = false;
    const publishClient = {
      publish: (topic: string, message: string) =>
        publisher.publish(topic, message).catch((err: Error) => {
          missed = true;
          logger.warn({ err: err.message, topic }, "live update not published (redis unavailable)");
        }),
    };
    // Each channel's SUBSCRIBE, until Redis confirmed it: a subscription waits for it before reading state.
    const confirmations = new Map<string, Promise<void>>();
    const ignore = () => {};
    const subscribeClient = subscriber
      ? {
          on: (event: "message", fn: (channel: string, message: string) => void) => subscriber.on(event, fn),
          subscribe: (topic: string) => {
            const confirmed = subscriber.subscribe(topic).then(ignore, ignore);
            confirmations.set(topic, confirmed);
            void confirmed.then(() => confirmations.get(topic) === confirmed && confirmations.delete(topic));
          },
          unsubscribe: (topic: string) => subscriber.unsubscribe(topic).catch(ignore),
        }
      : // A worker only publishes: nothing ever listens on this stand-in.
        { on: ignore, subscribe: ignore, unsubscribe: ignore };
    const target = createRedisEventTarget({
      publishClient: publishClient as unknown as Redis,
      subscribeClient: subscribeClient as unknown as Redis,
    }) as unknown as Target;
    const pubsub = new PubSub(target, { publisher, subscriber, owned }, (topic) => confirmations.get(topic));

    // Messages published while a connection was down are lost. When this process's subscriber is
    // back, its subscribers reload; when a publisher that dropped messages is back, it tells every
    // process to do the same (the RESYNC channel).
    subscriber?.on("ready", () => pubsub.resyncAll());
    subscriber?.on("message", (channel: string) => channel === RESYNC_CHANNEL && pubsub.resyncAll());
    void subscriber?.subscribe(RESYNC_CHANNEL).catch(ignore);
    publisher.on("ready", () => {
      if (!missed) return;
      missed = false;
      publisher.publish(RESYNC_CHANNEL, "").catch(() => (missed = true));
    });
    return pubsub;
  }

  /** Whether messages can travel now: in-process always; with Redis, both connections up. */
  get connected(): boolean {
    if (!this.redis) return true;
    return this.redis.publisher.status === "ready" && (this.redis.subscriber?.status ?? "ready") === "ready";
  }

  /**
   * Each Redis connection of this process and whether it is ready now: `command` (publishing, and in
   * an API process the rate limits) and, where subscriptions are served, `subscriber`. None in-process.
   */
  get redisConnections(): { role: "command" | "subscriber"; ready: boolean }[] {
    if (!this.redis) return [];
    const { publisher, subscriber } = this.redis;
    const command = { role: "command" as const, ready: publisher.status === "ready" };
    return subscriber ? [command, { role: "subscriber", ready: subscriber.status === "ready" }] : [command];
  }

  /** Whether messages travel through Redis. */
  get distributed(): boolean {
    return this.redis !== null;
  }

  /** Open subscriptions in this process. */
  get subscriptions(): number {
    return this.open.size;
  }

  /** Resolves once every subscription open now is sure to get what is published from then on (with Redis: its channel confirmed). */
  async confirmed(): Promise<void> {
    await Promise.all([...this.open].map((q) => q.ready));
  }

  /** Sends `message` to every subscriber of `ch` (in every process, with Redis). */
  publish<T>(ch: Channel<T>, message: T): void {
    this.target.dispatchEvent(new CustomEvent(ch.name, { detail: message }));
  }

  /** Subscribes to `ch` now; see the invariants above. */
  subscribe<T>(ch: Channel<T>, options: SubscribeOptions = {}): Subscription<T> {
    const queue = new Queue<T>(options.maxQueued ?? DEFAULT_MAX_QUEUED, () => {
      this.target.removeEventListener(ch.name, listener);
      this.open.delete(queue as Queue<unknown>);
      options.signal?.removeEventListener("abort", abort);
      options.onClose?.();
    });
    const listener = (event: CustomEvent) => queue.push(event.detail as T);
    const abort = () => void queue.return();
    this.target.addEventListener(ch.name, listener);
    this.open.add(queue as Queue<unknown>);
    const confirmed = this.confirmation(ch.name);
    if (confirmed) queue.ready = withTimeout(confirmed, SUBSCRIBE_WAIT_MS);
    if (options.signal?.aborted) abort();
    else options.signal?.addEventListener("abort", abort, { once: true });
    return queue;
  }

  /** How many times this process's subscriptions were told to reload (Redis came back). */
  get resyncs(): number {
    return this.resynced;
  }

  /** Tells every open subscription in this process that it may have missed messages. */
  resyncAll(): void {
    if (this.open.size > 0) this.resynced++;
    for (const queue of this.open) queue.push(RESYNC);
  }

  /** Ends every subscription and closes the connections this pub/sub opened. */
  async close(): Promise<void> {
    await Promise.all([...this.open].map((q) => q.return()));
    for (const connection of this.redis?.owned ?? []) connection.disconnect();
  }
}

/** The connection for commands (PUBLISH, rate-limit counters): fails fast while Redis is away, never queues. */
export function commandConnection(url: string, logger: Logger): Redis {
  const redis = new Redis(url, { enableOfflineQueue: false, maxRetriesPerRequest: 1, lazyConnect: false });
  // ioredis reconnects by itself; logging is enough, an outage must not crash the process.
  redis.on("error", (err) => logger.warn({ err: err.message }, "redis unavailable"));
  return redis;
}

/** `promise`, or nothing after `ms`, whichever comes first. */
function withTimeout(promise: Promise<void>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)));
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

function track(owned: Redis[], redis: Redis): Redis {
  owned.push(redis);
  return redis;
}

/** A bounded queue read as an async iterator by one consumer. */
class Queue<T> implements Subscription<T> {
  ready: Promise<void> = Promise.resolve();
  private readonly buffer: Delivery<T>[] = [];
  private waiting: ((result: IteratorResult<Delivery<T>>) => void) | null = null;
  private state: "open" | "overflowed" | "done" = "open";

  constructor(
    private readonly max: number,
    private readonly cleanup: () => void,
  ) {}

  push(value: Delivery<T>): void {
    if (this.state !== "open") return;
    if (this.waiting) {
      const resolve = this.waiting;
      this.waiting = null;
      resolve({ value, done: false });
      return;
    }
    // A resync makes everything before it moot: the reader reloads anyway.
    if (value === RESYNC && this.buffer.includes(RESYNC)) return;
    if (this.buffer.length >= this.max) {
      this.state = "overflowed";
      this.buffer.length = 0;
      this.buffer.push(OVERFLOW);
      this.cleanup();
      return;
    }
    this.buffer.push(value);
  }

  next(): Promise<IteratorResult<Delivery<T>>> {
    if (this.buffer.length > 0) return Promise.resolve({ value: this.buffer.shift()!, done: false });
    if (this.state !== "open") return Promise.resolve({ value: undefined, done: true });
    return new Promise((resolve) => {
      this.waiting = resolve;
    });
  }

  return(): Promise<IteratorResult<Delivery<T>>> {
    if (this.state === "open") this.cleanup();
    this.state = "done";
    this.buffer.length = 0;
    const resolve = this.waiting;
    this.waiting = null;
    resolve?.({ value: undefined, done: true });
    return Promise.resolve({ value: undefined, done: true });
  }

  [Symbol.asyncIterator](): this {
    return this;
  }
}
