// This process's own metrics (prom-client): requests and latency by route, GraphQL operations,
// webhook delivery results, emails sent, the chain locks this worker holds, live connections, its database pool and Redis connections, prom-client's
// process and Node.js defaults (CPU, memory, heap, GC, handles) and the build it runs. The
// composition root makes one and hands it to the parts that count (the HTTP server, the GraphQL door,
// the webhook dispatcher, the email sender) and to /metrics.
import { readFileSync } from "node:fs";
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from "prom-client";

/** The version in package.json (dist/lib/ and src/lib/ both sit two levels below it). */
const VERSION = (JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string }).version;

/**
 * prom-client defaults that are gauges with a counter's `_total` suffix, which promtool refuses; the
 * same figures by type stay (`sum(nodejs_active_handles)` is the total).
 */
const MISNAMED_DEFAULTS = ["nodejs_active_handles_total", "nodejs_active_requests_total", "nodejs_active_resources_total"];

/** A database connection pool's figures now; null where there is no pool to report. */
export interface PoolSource {
  poolStats(): PoolStats | null;
}

type PoolStats = { size: number; idle: number; waiting: number; max: number };

/** This process's Redis connections by role, and whether each is ready now; none without Redis. */
export interface RedisSource {
  readonly redisConnections: readonly { role: string; ready: boolean }[];
}

/** What this process has open: WebSockets and SSE streams (with and without a key), subscriptions. */
export interface LiveCounts {
  keyed: { size: number };
  anonymous: { size: number };
  pubsub: { subscriptions: number; resyncs: number };
}

/** This process's own counters and gauges; /metrics prints its registry. */
export class ProcessMetrics {
  readonly registry = new Registry();
  readonly requests = new Counter({
    name: "stablegate_http_requests_total",
    help: "HTTP requests answered by this process, by route (its pattern, not the URL) and status.",
    labelNames: ["method", "route", "status"] as const,
    registers: [this.registry],
  });
  readonly latency = new Histogram({
    name: "stablegate_http_request_duration_seconds",
    help: "Time to answer, by route.",
    labelNames: ["method", "route"] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10],
    registers: [this.registry],
  });
  readonly webhookDeliveries = new Counter({
    name: "stablegate_webhook_deliveries_total",
    help: "Webhook delivery attempts this process made, by result: succeeded, retrying (failed, another attempt is scheduled), failed (given up) or gone (410: the endpoint was disabled).",
    labelNames: ["result"] as const,
    registers: [this.registry],
  });
  readonly emails = new Counter({
    name: "stablegate_emails_total",
    help: "Emails this process's sender dealt with, by type and result: sent, retrying (not accepted, another attempt is scheduled), failed (refused or given up) or held (no SMTP_URL: kept, not sent).",
    labelNames: ["type", "result"] as const,
    registers: [this.registry],
  });
  readonly reconcileDifferences = new Gauge({
    name: "stablegate_reconcile_differences",
    help: "Differences between the ledger and the chain the last reconciliation of each chain found (this worker's runs): each charge involved needs review.",
    labelNames: ["chain_id"] as const,
    registers: [this.registry],
  });
  readonly chainLocks = new Gauge({
    name: "stablegate_chain_lock_held",
    help: "1 for each chain whose lock this worker holds (it indexes the chain and sends its relayer's transactions), 0 for the chains it stands by for; worker is its id in the workers table.",
    labelNames: ["chain_id", "worker"] as const,
    registers: [this.registry],
  });
  readonly graphqlOperations = new Counter({
    name: "stablegate_graphql_operations_total",
    help: "GraphQL operations this process ran (a subscription counts when it starts), by type and outcome.",
    labelNames: ["type", "outcome"] as const,
    registers: [this.registry],
  });

  /** `commit`: the git commit of the build (GIT_COMMIT, read by config). */
  constructor(commit = "unknown") {
    collectDefaultMetrics({ register: this.registry });
    for (const name of MISNAMED_DEFAULTS) this.registry.removeSingleMetric(name);
    new Gauge({
      name: "stablegate_build_info",
      help: "The build this process runs: package version, Node.js version and git commit (GIT_COMMIT), always 1.",
      labelNames: ["version", "node", "commit"] as const,
      registers: [this.registry],
    }).set({ version: VERSION, node: process.version, commit }, 1);
  }

  /**
   * Adds, read at each scrape, the database pool (only where there is one: PostgreSQL) and the Redis
   * connections (only where there are any: REDIS_URL).
   */
  watchConnections(db: PoolSource, redis: RedisSource): void {
    const pool = () => db.poolStats();
    if (pool()) {
      new Gauge({
        name: "stablegate_db_pool_connections",
        help: "This process's PostgreSQL connections, in use or idle.",
        labelNames: ["state"] as const,
        registers: [this.registry],
        collect() {
          const stats = pool();
          if (!stats) return;
          this.set({ state: "in_use" }, stats.size - stats.idle);
          this.set({ state: "idle" }, stats.idle);
        },
      });
      const poolGauge = (name: string, help: string, value: (stats: PoolStats) => number) =>
        new Gauge({
          name,
          help,
          registers: [this.registry],
          collect() {
            const stats = pool();
            if (stats) this.set(value(stats));
          },
        });
      poolGauge("stablegate_db_pool_max_connections", "The most PostgreSQL connections this process opens (DATABASE_POOL_SIZE).", (s) => s.max);
      poolGauge(
        "stablegate_db_pool_waiting_requests",
        "Queries and transactions of this process waiting for a connection because all are in use.",
        (s) => s.waiting,
      );
    }
    if (redis.redisConnections.length > 0) {
      new Gauge({
        name: "stablegate_redis_connected",
        help: "1 while this process's Redis connection is ready, 0 while it is not (it reconnects by itself), by role: command (publishing, rate limits) or subscriber (live updates).",
        labelNames: ["role"] as const,
        registers: [this.registry],
        collect() {
          for (const c of redis.redisConnections) this.set({ role: c.role }, c.ready ? 1 : 0);
        },
      });
    }
  }

  /** Adds the figures read from `live` at each scrape. */
  watch(live: LiveCounts): void {
    new Gauge({
      name: "stablegate_live_connections",
      help: "Open WebSockets and SSE streams on this process, with an API key or without.",
      labelNames: ["caller"] as const,
      registers: [this.registry],
      collect() {
        this.set({ caller: "key" }, live.keyed.size);
        this.set({ caller: "anonymous" }, live.anonymous.size);
      },
    });
    new Gauge({
      name: "stablegate_live_subscriptions",
      help: "Open subscriptions on this process (GraphQL subscriptions and SSE streams).",
      registers: [this.registry],
      collect() {
        this.set(live.pubsub.subscriptions);
      },
    });
    let counted = 0;
    new Counter({
      name: "stablegate_pubsub_resyncs_total",
      help: "Times this process's subscribers reloaded from the database because Redis messages may have been lost.",
      registers: [this.registry],
      collect() {
        this.inc(live.pubsub.resyncs - counted);
        counted = live.pubsub.resyncs;
      },
    });
  }
}
