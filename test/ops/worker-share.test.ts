// Two workers (startJobs twice, each on its own PostgreSQL connections and its own RPC proxies) over
// four chains share them, two each, and each calls only its own chains' nodes; when one dies (its
// database connections cut without releasing anything, so it can neither beat nor lock), its chains
// move to the other within the takeover time (jobs/chain-share.ts), and each worker's metrics say
// which chains it holds all along.
import { createServer, type Server, type Socket, connect } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ChainSet } from "../../src/chain/chains.js";
import { type Database, openDatabase } from "../../src/db/client.js";
import { HEARTBEAT_MS, WORKER_TIMEOUT_MS } from "../../src/jobs/chain-share.js";
import { type Jobs, startJobs } from "../../src/jobs/index.js";
import { ProcessMetrics } from "../../src/lib/process-metrics.js";
import { startTestChain, type TestChain, waitFor } from "../helpers/chain.js";
import { freshDatabase, SETTINGS } from "../helpers/harness.js";
import { recordingLogger } from "../helpers/logs.js";
import { type RpcProxy, startRpcProxy } from "../helpers/rpc-proxy.mjs";

/** Four test-mode chains of the registry, each an anvil of its own. */
const CHAIN_IDS = [31337, 84532, 11155111, 11155420];
const POLL_MS = 100;

interface Worker {
  jobs: Jobs;
  db: Database;
  metrics: ProcessMetrics;
  /** Its RPC proxy per chain id: the calls it made. */
  rpc: Map<number, RpcProxy>;
  /** Cuts its database connections and refuses new ones, as if its host went away. */
  die(): void;
  /** Chain ids whose lock it holds, sorted, from its metrics. */
  held(): Promise<number[]>;
}

let chains: TestChain[] = [];
let pg: Awaited<ReturnType<typeof freshDatabase>> | null = null;
const workers: Worker[] = [];

/** A TCP forwarder to PostgreSQL that can be cut: every connection through it closes, and no new one opens. */
async function cuttableLink(target: URL): Promise<{ url: string; cut(): void; server: Server }> {
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    const upstream = connect(Number(target.port || 5432), target.hostname);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on("close", () => sockets.delete(s));
      s.on("error", () => {});
    }
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const url = new URL(target);
  url.host = `127.0.0.1:${(server.address() as { port: number }).port}`;
  return {
    url: url.toString(),
    server,
    cut() {
      server.close();
      for (const s of sockets) s.destroy();
    },
  };
}

async function startWorker(name: string): Promise<Worker> {
  const link = await cuttableLink(new URL(pg!.url!));
  const db = await openDatabase({ url: link.url, applicationName: name, poolSize: 10 });
  const rpc = new Map(await Promise.all(chains.map(async (c) => [c.anvil.chainId, await startRpcProxy(c.anvil.url)] as const)));
  const enabled = await Promise.all(chains.map((c) => c.enabled(1, rpc.get(c.anvil.chainId)!.url)));
  const metrics = new ProcessMetrics();
  const jobs = startJobs({
    config: {
      expirySweepIntervalMs: 1000,
      chainPollIntervalMs: POLL_MS,
      relayerBumpAfterMs: 60_000,
      reconcileIntervalMs: 600_000,
      relayerGasBudgetPerMerchant: 10n ** 18n,
      subscriptionRetrySchedule: [3_600_000],
      email: { smtpUrl: undefined, from: "no-reply@shop.example", alertTo: undefined },
    },
    db,
    chains: new ChainSet(enabled),
    logger: recordingLogger().logger,
    settings: { ...SETTINGS },
    metrics,
  });
  const held = async () => {
    const text = await metrics.registry.metrics();
    const ids = [...text.matchAll(/^stablegate_chain_lock_held\{chain_id="(\d+)",worker="[^"]+"\} 1$/gm)].map((m) => Number(m[1]));
    return ids.sort((a, b) => a - b);
  };
  const worker = { jobs, db, metrics, rpc, die: link.cut, held };
  workers.push(worker);
  return worker;
}

/** Waits until each of the `count` live workers has beaten `n` more times (its row's last_seen moved on `n` times), each time weighing its share again. */
async function beats(count: number, n: number): Promise<void> {
  const seen = new Map<string, Set<number>>();
  await waitFor(
    `${n} more heartbeats of each of ${count} workers`,
    async () => {
      for (const w of await pg!.db.prisma.worker.findMany()) seen.set(w.id, (seen.get(w.id) ?? new Set()).add(w.lastSeen.getTime()));
      return seen.size === count && [...seen.values()].every((times) => times.size > n);
    },
    (n + 2) * HEARTBEAT_MS * 3,
  );
}

const calls = (w: Worker, ids: readonly number[]) => ids.map((id) => w.rpc.get(id)!.total());
const resetCalls = (w: Worker) => [...w.rpc.values()].forEach((p) => p.reset());

describe.runIf(process.env.DATABASE_URL)("two workers, four chains, one PostgreSQL database", () => {
  beforeAll(async () => {
    chains = await Promise.all(CHAIN_IDS.map((chainId) => startTestChain({ chainId })));
    pg = await freshDatabase();
  }, 60_000);
  afterAll(async () => {
    for (const w of workers) {
      await w.jobs.stop().catch(() => {});
      await w.db.close().catch(() => {});
      for (const p of w.rpc.values()) await p.close();
    }
    await pg?.drop();
    await Promise.all(chains.map((c) => c.stop()));
  });

  it("each holds two chains and calls only their nodes; the dead one's chains move to the other within the takeover time", async () => {
    const a = await startWorker("worker-a");
    const b = await startWorker("worker-b");
    // The first worker alone takes all four, then hands two on once it sees the second.
    await waitFor("two chains each", async () => (await a.held()).length === 2 && (await b.held()).length === 2, 20_000);
    const [ofA, ofB] = [await a.held(), await b.held()];
    expect([...ofA, ...ofB].sort((x, y) => x - y)).toEqual([...CHAIN_IDS].sort((x, y) => x - y));
    // Balanced, it stays so over a few heartbeats; each worker calls its own chains' nodes and no other.
    resetCalls(a);
    resetCalls(b);
    await beats(2, 3);
    expect([await a.held(), await b.held()]).toEqual([ofA, ofB]);
    for (const [w, mine, theirs] of [
      [a, ofA, ofB],
      [b, ofB, ofA],
    ] as const) {
      expect(calls(w, mine).every((n) => n > 0)).toBe(true);
      expect(calls(w, theirs)).toEqual([0, 0]);
    }
    // Each worker's metrics name it by its row in the workers table, for every chain it runs, held or not.
    const named = async (w: Worker) => {
      const series = (await w.metrics.registry.metrics()).match(/^stablegate_chain_lock_held\{.*$/gm) ?? [];
      expect(series).toHaveLength(4);
      return [...new Set(series.map((s) => /worker="([^"]+)"/.exec(s)![1]))];
    };
    const ids = [...(await named(a)), ...(await named(b))].sort();
    expect(ids).toEqual((await pg!.db.prisma.worker.findMany({ orderBy: { id: "asc" } })).map((w) => w.id));

    const diedAt = Date.now();
    a.die();
    await waitFor("the survivor holds all four", async () => (await b.held()).length === 4, 30_000);
    const tookOverMs = Date.now() - diedAt;
    // The dead worker counts until its heartbeat is WORKER_TIMEOUT_MS old; then one heartbeat and a poll.
    expect(tookOverMs).toBeLessThan(WORKER_TIMEOUT_MS + 2 * HEARTBEAT_MS + 10 * POLL_MS);
    resetCalls(b);
    await waitFor("the survivor calls the dead one's nodes", async () => calls(b, ofA).every((n) => n > 0));
  }, 120_000);
});
