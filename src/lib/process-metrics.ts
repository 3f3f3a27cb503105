// This process's own counters (prom-client): requests and latency by route, GraphQL operations,
// webhook delivery results and live connections. The composition root makes one and hands it to the
// parts that count (the HTTP server, the GraphQL door, the webhook dispatcher) and to /metrics.
import { Counter, Gauge, Histogram, Registry } from "prom-client";

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
  readonly reconcileDifferences = new Gauge({
    name: "stablegate_reconcile_differences",
    help: "Differences between the ledger and the chain the last reconciliation of each chain found (this worker's runs): each charge involved needs review.",
    labelNames: ["chain_id"] as const,
    registers: [this.registry],
  });
  readonly graphqlOperations = new Counter({
    name: "stablegate_graphql_operations_total",
    help: "GraphQL operations this process ran (a subscription counts when it starts), by type and outcome.",
    labelNames: ["type", "outcome"] as const,
    registers: [this.registry],
  });

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
