// GET /metrics: Prometheus text format. What an operator must be alerted to is read from the
// database, so every process (API or worker side) reports the same truth: payouts that are blocked
// or stopped (money waiting in clones), and each chain's relayer gas against its minimum.
// METRICS_TOKEN, when set, must come as `Authorization: Bearer <token>`.
import { timingSafeEqual } from "node:crypto";
import type { FastifyInstance } from "fastify";
import type { Prisma } from "../db/client.js";
import { relayerBalances } from "../domain/chain-status.js";
import { blockedPayouts } from "../domain/payouts.js";

/** Registers /metrics. */
export function metricsRoute(app: FastifyInstance, prisma: Prisma, token: string | undefined): void {
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
