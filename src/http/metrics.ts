// GET /metrics: Prometheus text format (`promtool check metrics` passes it: .ci/promtool-check.mjs).
// Every process reports its own: its traffic (requests by route and status, their latency, live
// connections), its database pool and Redis connections, its health (memory, how late its event loop
// runs: what a flood shows first) and its build. What an operator must be alerted to is read from
// the database: payouts that are blocked or stopped (money waiting in clones), each chain's relayer
// gas against its minimum and its stuck transactions, the relayer's gas by kind and the merchants'
// budget refusals, open charges and those needing review, the money in clones, the indexed block and
// the webhook outbox. Only a process that runs the jobs (the worker, or `npm start` with RUN_WORKER)
// reports those, so a sum over processes counts them once.
// Wei amounts are printed as exact integers, which prom-client's float gauges cannot hold.
// METRICS_TOKEN, when set, must come as `Authorization: Bearer <token>`; in production /metrics is
// off without it, as it tells more than a public port should.
import { timingSafeEqual } from "node:crypto";
import { monitorEventLoopDelay } from "node:perf_hooks";
import type { FastifyInstance } from "fastify";
import type { Config } from "../config.js";
import type { Database, Prisma } from "../db/client.js";
import { relayerBalances, stuckRelayerTxs } from "../domain/chain-status.js";
import { operatorFigures } from "../domain/operations.js";
import { blockedPayouts } from "../domain/payouts.js";
import { relayerGasFigures } from "../domain/relayer-budget.js";
import type { ProcessMetrics } from "../lib/process-metrics.js";
import type { PubSub } from "../realtime/pubsub.js";

export interface MetricsOptions {
  /** This process's counters; its database pool and Redis connections are added to them. */
  metrics: ProcessMetrics;
  db: Database;
  pubsub: PubSub;
  /** METRICS_TOKEN, when set, is the scrapers' bearer token; in production, without it /metrics is off (404). */
  config: Pick<Config, "metricsToken" | "env">;
  /** Whether this process runs the background jobs: only then does it report the database's figures. */
  runsJobs: boolean;
  /** The chains whose stuck relayer transactions are counted. */
  chains: readonly { chainId: number; stuckAfterSeconds: number }[];
}

type Samples = [Record<string, string | number>, number | bigint][];

/** Registers /metrics, and the request counting it reports. */
export function metricsRoute(app: FastifyInstance, options: MetricsOptions): void {
  const { metrics, db, runsJobs, chains } = options;
  const token = options.config.metricsToken;
  metrics.watchConnections(db, options.pubsub);
  const loopDelay = monitorEventLoopDelay({ resolution: 10 });
  loopDelay.enable();
  app.addHook("onClose", async () => loopDelay.disable());
  // A summary's sum and count run over the process's life; its quantiles cover the last window.
  let delaySum = 0;
  let delayCount = 0;
  const { requests, latency, registry } = metrics;
  app.addHook("onResponse", async (req, reply) => {
    // Unmatched URLs share one label: a scan of random paths must not grow the series.
    const route = req.routeOptions.url ?? "unmatched";
    requests.inc({ method: req.method, route, status: reply.statusCode });
    latency.observe({ method: req.method, route }, reply.elapsedTime / 1000);
  });

  const off = options.config.env === "production" && !token;
  if (off) app.log.warn("METRICS_TOKEN is not set: /metrics answers 404 until it is (production serves metrics only with a token)");

  app.get("/metrics", async (req, reply) => {
    if (off) return reply.code(404).type("text/plain").send("metrics are off until METRICS_TOKEN is set (production serves them only with a token)\n");
    if (token && !bearerMatches(req.headers.authorization, token)) {
      return reply.code(401).header("WWW-Authenticate", "Bearer").type("text/plain").send("metrics need Authorization: Bearer <METRICS_TOKEN>\n");
    }
    const [fromDatabase, counted] = await Promise.all([runsJobs ? databaseFigures(db.prisma, chains) : [], registry.metrics()]);
    const lines = [...fromDatabase];
    // A window per scrape, so a past spike does not hide today's calm.
    const seconds = (ns: number) => (Number.isFinite(ns) ? ns / 1e9 : 0);
    if (loopDelay.count > 0) {
      delaySum += seconds(loopDelay.mean) * loopDelay.count;
      delayCount += loopDelay.count;
    }
    const delay = "stablegate_event_loop_delay_seconds";
    lines.push(
      ...family(delay, "summary", "How late this process's event loop ran: quantiles since the previous scrape, sum and count since start.", [
        [{ quantile: "0.5" }, seconds(loopDelay.percentile(50))],
        [{ quantile: "0.99" }, seconds(loopDelay.percentile(99))],
        [{ quantile: "1" }, seconds(loopDelay.max)],
      ]),
      `${delay}_sum ${delaySum}`,
      `${delay}_count ${delayCount}`,
    );
    loopDelay.reset();
    return reply
      .type("text/plain; version=0.0.4")
      .header("Cache-Control", "no-store")
      .send(`${lines.join("\n")}\n${counted}`);
  });
}

/** What the database says an operator watches, as gauge families. */
async function databaseFigures(prisma: Prisma, chains: readonly { chainId: number; stuckAfterSeconds: number }[]): Promise<string[]> {
  const [blocked, relayers, stuck, figures, relayed] = await Promise.all([
    blockedPayouts(prisma),
    relayerBalances(prisma),
    stuckRelayerTxs(prisma, chains),
    operatorFigures(prisma),
    relayerGasFigures(prisma),
  ]);
  const lines: string[] = [];
  const gauge = (name: string, help: string, samples: Samples) => lines.push(...family(name, "gauge", help, samples));
  const counter = (name: string, help: string, samples: Samples) => lines.push(...family(name, "counter", help, samples));
  counter(
    "stablegate_relayer_gas_used_total",
    "Gas the relayer spent (from receipts) by chain and kind: sweep, gasless_payment (buyers' payments without gas), refund_authorization.",
    relayed.gasUsed.map((g) => [{ chain_id: g.chainId, kind: g.kind }, g.gas]),
  );
  counter(
    "stablegate_relayer_budget_refusals_total",
    "Sweeps and payments without gas refused (429 relayer_budget_exhausted, or a sweep the worker did not send) because a merchant's relayer gas for the day was spent (RELAYER_GAS_BUDGET_PER_MERCHANT), by chain and kind.",
    relayed.refusals.map((r) => [{ chain_id: r.chainId, kind: r.kind }, r.count]),
  );
  gauge(
    "stablegate_payouts_blocked",
    "Charges whose money waits in their clone, by chain and reason (flush_failing needs an operator: stablegate payouts retry).",
    blocked.map((b) => [{ chain_id: b.chainId, reason: b.reason }, b.charges]),
  );
  gauge(
    "stablegate_relayer_balance_wei",
    "The relayer's native balance at its last check.",
    relayers.map((r) => [{ chain_id: r.chainId, relayer: r.relayerAddress }, r.balance]),
  );
  gauge(
    "stablegate_relayer_min_balance_wei",
    "The balance below which the relayer needs funds (CHAIN_<id>_RELAYER_MIN_BALANCE).",
    relayers.map((r) => [{ chain_id: r.chainId, relayer: r.relayerAddress }, r.minBalance]),
  );
  gauge(
    "stablegate_relayer_balance_low",
    "1 when the relayer is below its minimum balance.",
    relayers.map((r) => [{ chain_id: r.chainId, relayer: r.relayerAddress }, r.balance < r.minBalance ? 1 : 0]),
  );
  gauge(
    "stablegate_relayer_stuck_transactions",
    "The relayer's transactions unmined past the chain's limit (CHAIN_<id>_RELAYER_STUCK_AFTER): later payouts wait behind them; /readyz is degraded.",
    chains.map((c) => [{ chain_id: c.chainId }, stuck.filter((t) => t.chainId === c.chainId).length]),
  );
  gauge(
    "stablegate_charges_open",
    "Charges still PENDING or RECEIVED, by chain (none: no chain picked yet).",
    figures.openCharges.map((c) => [{ chain_id: c.chainId ?? "none", status: c.status }, c.count]),
  );
  gauge(
    "stablegate_charges_needing_review",
    "Charges whose ledger and chain disagree (a reconciliation difference, a deep reorg), until marked reviewed.",
    figures.needingReview.map((r) => [{ livemode: String(r.livemode) }, r.count]),
  );
  gauge(
    "stablegate_clones_held_units",
    "Confirmed USDC (base units) the ledger says the clones of each chain hold: paid out as charges end (money completing no charge waits for the chain's payout minimum, CHAIN_<id>_PAYOUT_MIN_AMOUNT).",
    figures.held.map((h) => [{ chain_id: h.chainId }, h.amount]),
  );
  gauge(
    "stablegate_relayer_transactions",
    "The relayer's transactions by kind (FLUSH payouts, AUTHORIZATION relays, SWEEP, FILL): in flight (SENT, MINED awaiting confirmations) and FAILED (all time: alert on an increase).",
    figures.relayerTransactions.map((t) => [{ chain_id: t.chainId, kind: t.kind, status: t.status }, t.count]),
  );
  gauge(
    "stablegate_chain_indexed_block",
    "The block up to which the worker has read each chain.",
    figures.indexedBlocks.map((b) => [{ chain_id: b.chainId }, b.block]),
  );
  const headed = figures.indexedBlocks.filter((b) => b.head !== null);
  gauge(
    "stablegate_chain_head_block",
    "The chain's head as the indexer last read it.",
    headed.map((b) => [{ chain_id: b.chainId }, b.head!]),
  );
  gauge(
    "stablegate_chain_lag_blocks",
    "How many blocks the indexer was behind the head it last read (payments are seen this late).",
    headed.map((b) => [{ chain_id: b.chainId }, b.head! > b.block ? b.head! - b.block : 0n]),
  );
  gauge(
    "stablegate_gasless_gas_used",
    "Gas the relayer spent on buyers' payments without gas (all time: rate() it for spend).",
    figures.gaslessGas.map((g) => [{ chain_id: g.chainId }, g.total]),
  );
  gauge(
    "stablegate_gasless_gas_today",
    "Gas counted against today's (UTC) budget for payments without gas, CHAIN_<id>_GASLESS_DAILY_GAS: at the budget the page offers only normal transfers.",
    figures.gaslessGas.map((g) => [{ chain_id: g.chainId }, g.today]),
  );
  gauge("stablegate_webhook_outbox_pending", "Webhook deliveries waiting to be sent or retried.", [[{}, figures.outbox.pending]]);
  gauge("stablegate_webhook_outbox_oldest_due_seconds", "How long the oldest due delivery has waited (0: none due).", [[{}, figures.outbox.oldestDueSeconds]]);
  return lines;
}

/** One metric family: its HELP and TYPE lines, then a line per sample. */
function family(name: string, type: "gauge" | "counter" | "summary", help: string, samples: Samples): string[] {
  return [`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`, ...samples.map(([labels, value]) => `${name}${labelSet(labels)} ${value}`)];
}

function labelSet(labels: Record<string, string | number>): string {
  // The text format's escapes: a raw newline would end the sample line.
  const escape = (v: string) => v.replace(/[\\"]/g, "\\$&").replace(/\n/g, "\\n");
  const parts = Object.entries(labels).map(([k, v]) => `${k}="${escape(String(v))}"`);
  return parts.length === 0 ? "" : `{${parts.join(",")}}`;
}

function bearerMatches(header: string | undefined, token: string): boolean {
  const given = Buffer.from(/^Bearer (.+)$/.exec(header ?? "")?.[1] ?? "");
  const expected = Buffer.from(token);
  return given.length === expected.length && timingSafeEqual(given, expected);
}
