// GET /metrics: Prometheus text format. What an operator must be alerted to is read from the
// database, so every process (API or worker side) reports the same truth: payouts that are blocked
// or stopped (money waiting in clones), and each chain's relayer gas against its minimum. Then this
// process's own health: memory, and how late its event loop runs (what a flood of requests shows
// first). METRICS_TOKEN, when set, must come as `Authorization: Bearer <token>`.
import { timingSafeEqual } from "node:crypto";
import { monitorEventLoopDelay } from "node:perf_hooks";
import type { FastifyInstance } from "fastify";
import type { Prisma } from "../db/client.js";
import { relayerBalances } from "../domain/chain-status.js";
import { blockedPayouts } from "../domain/payouts.js";

/** Registers /metrics. */
export function metricsRoute(app: FastifyInstance, prisma: Prisma, token: string | undefined): void {
  const loopDelay = monitorEventLoopDelay({ resolution: 10 });
  loopDelay.enable();
  app.addHook("onClose", async () => loopDelay.disable());
  app.get("/metrics", async (req, reply) => {
    if (token && !bearerMatches(req.headers.authorization, token)) {
      return reply.code(401).header("WWW-Authenticate", "Bearer").type("text/plain").send("metrics need Authorization: Bearer <METRICS_TOKEN>\n");
    }
    const [blocked, relayers] = await Promise.all([blockedPayouts(prisma), relayerBalances(prisma)]);
    const lines: string[] = [];
    const gauge = (name: string, help: string, samples: [Record<string, string | number>, number | bigint][]) => {
      lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} gauge`);
      for (const [labels, value] of samples) lines.push(`${name}${labelSet(labels)} ${value}`);
    };
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
    const memory = process.memoryUsage();
    gauge("stablegate_process_resident_memory_bytes", "This process's resident memory.", [[{}, memory.rss]]);
    gauge("stablegate_process_heap_used_bytes", "This process's JavaScript heap in use.", [[{}, memory.heapUsed]]);
    // Since the previous scrape: a window per scrape, so a past spike does not hide today's calm.
    const seconds = (ns: number) => (Number.isFinite(ns) ? ns / 1e9 : 0);
    gauge("stablegate_event_loop_delay_seconds", "How late this process's event loop ran since the previous scrape.", [
      [{ quantile: "0.5" }, seconds(loopDelay.percentile(50))],
      [{ quantile: "0.99" }, seconds(loopDelay.percentile(99))],
      [{ quantile: "1" }, seconds(loopDelay.max)],
    ]);
    loopDelay.reset();
    return reply
      .type("text/plain; version=0.0.4")
      .header("Cache-Control", "no-store")
      .send(`${lines.join("\n")}\n`);
  });
}

function labelSet(labels: Record<string, string | number>): string {
  const parts = Object.entries(labels).map(([k, v]) => `${k}="${String(v).replace(/["\\\n]/g, "\\$&")}"`);
  return parts.length === 0 ? "" : `{${parts.join(",")}}`;
}

function bearerMatches(header: string | undefined, token: string): boolean {
  const given = Buffer.from(/^Bearer (.+)$/.exec(header ?? "")?.[1] ?? "");
  const expected = Buffer.from(token);
  return given.length === expected.length && timingSafeEqual(given, expected);
}
