// RPC endpoints as hosted providers really behave, in front of anvil or of a long synthetic chain:
// failover and recovery, 429 with and without Retry-After, a node that answers another block, each
// provider's eth_getLogs limits, a lagging node, and a 24-hour catch-up. Nothing here may reach the
// database from an answer that does not match its request, and no URL may appear in an error.
import { AbiCoder, id, zeroPadValue } from "ethers";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ChainSet, type EnabledChain, enableChain } from "../../src/chain/chains.js";
import { ChainIndexer } from "../../src/jobs/indexer.js";
import { statedRangeLimit } from "../../src/jobs/range-size.js";
import { knownChain } from "../../src/chain/registry.js";
import { ChainRpc, type EndpointHealth, isLogRangeError, isTransientRpcError, RpcError } from "../../src/chain/rpc.js";
import { confirmChainMoney } from "../../src/domain/payments.js";
import { startChainRunner } from "../../src/jobs/chain-runner.js";
import { ANVIL_KEYS, startTestChain, type TestChain, waitFor } from "../helpers/chain.js";
import { POLLING, SETTINGS, startApp, type TestApp, WALLET } from "../helpers/harness.js";
import { recordingLogger } from "../helpers/logs.js";
import { type RpcProxy, startRpcProxy } from "../helpers/rpc-proxy.mjs";
import { type SyntheticChain, startSyntheticChain } from "../helpers/synthetic-chain.mjs";

let chain: TestChain;
let orders = 0;
const proxies: RpcProxy[] = [];
async function proxy(): Promise<RpcProxy> {
  const p = await startRpcProxy(chain.anvil.url);
  proxies.push(p);
  return p;
}

beforeAll(async () => {
  chain = await startTestChain();
}, 60_000);
afterAll(async () => {
  for (const p of proxies) await p.close();
  await chain?.stop();
});

describe("the RPC client", () => {
  it("fails over to the next endpoint while one is down, and goes back to it once it recovers", async () => {
    const [first, second] = [await proxy(), await proxy()];
    first.setFaults({ down: true });
    let clock = Date.now();
    const changes: EndpointHealth[] = [];
    const rpc = new ChainRpc(31337, [first.url, second.url], { now: () => clock, onHealthChange: (h) => changes.push(h) });
    try {
      expect(await rpc.getBlockNumber()).toBeGreaterThan(0);
      expect([first.requests(), second.requests()]).toEqual([1, 1]);
      expect(rpc.health()[0]).toMatchObject({
        endpoint: "CHAIN_31337_RPC_URL #1",
        healthy: false,
        failures: 1,
        lastProblem: "HTTP 503 without a JSON-RPC answer",
      });
      // While it cools down, the first endpoint is passed over without being asked.
      await rpc.getBlockNumber();
      expect([first.requests(), second.requests()]).toEqual([1, 2]);

      first.setFaults({});
      clock += 1_001;
      await rpc.getBlockNumber();
      expect([first.requests(), second.requests()]).toEqual([2, 2]);
      expect(rpc.health()[0]).toMatchObject({ healthy: true, failures: 0 });
      expect(changes.map((c) => [c.endpoint, c.healthy])).toEqual([
        ["CHAIN_31337_RPC_URL #1", false],
        ["CHAIN_31337_RPC_URL #1", true],
      ]);
    } finally {
      rpc.destroy();
    }
  });

  it("honours a 429's Retry-After to the second: not one request to that endpoint before its time", async () => {
    const only = await proxy();
    only.setFaults({ rateLimit: { requests: 1, retryAfterSeconds: 7 } });
    const t0 = Date.now();
    let clock = t0;
    const rpc = new ChainRpc(31337, [only.url], { now: () => clock });
    try {
      const refused = await rpc.getBlockNumber().catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(RpcError);
      expect(isTransientRpcError(refused)).toBe(true);
      expect((refused as Error).message).toContain("CHAIN_31337_RPC_URL: rate limited (HTTP 429)");
      for (const wait of [1_000, 5_000, 6_999]) {
        clock = t0 + wait;
        const early = await rpc.getBlockNumber().catch((e: unknown) => e);
        expect((early as Error).message).toMatch(/rate limited for \d+ s/);
      }
      expect(only.requests()).toBe(1);
      clock = t0 + 7_000;
      expect(await rpc.getBlockNumber()).toBeGreaterThan(0);
      expect(only.requests()).toBe(2);
    } finally {
      rpc.destroy();
    }
  });

  it("without Retry-After, backs off (1 s, then doubling) and meanwhile uses the next endpoint", async () => {
    const [limited, spare] = [await proxy(), await proxy()];
    limited.setFaults({ rateLimit: { requests: 2 } });
    let clock = Date.now();
    const rpc = new ChainRpc(31337, [limited.url, spare.url], { now: () => clock });
    try {
      await rpc.getBlockNumber();
      expect([limited.requests(), spare.requests()]).toEqual([1, 1]);
      clock += 999;
      await rpc.getBlockNumber();
      expect([limited.requests(), spare.requests()]).toEqual([1, 2]);
      clock += 2;
      await rpc.getBlockNumber(); // limited again: now 2 s
      expect([limited.requests(), spare.requests()]).toEqual([2, 3]);
      clock += 1_999;
      await rpc.getBlockNumber();
      expect([limited.requests(), spare.requests()]).toEqual([2, 4]);
      clock += 2;
      await rpc.getBlockNumber();
      expect([limited.requests(), spare.requests()]).toEqual([3, 4]);
    } finally {
      rpc.destroy();
    }
  });

  it("throws away a block that is not the one asked for, and asks the next endpoint", async () => {
    const [wrong, right] = [await proxy(), await proxy()];
    wrong.setFaults({ wrongBlock: true });
    const rpc = new ChainRpc(31337, [wrong.url, right.url]);
    const alone = new ChainRpc(31337, [wrong.url]);
    try {
      const block = await rpc.getBlock(3);
      expect(block?.hash).toBe((await chain.provider.getBlock(3))!.hash);
      expect(rpc.health()[0]!.lastProblem).toBe("bad response: eth_getBlockByNumber: block 2 returned for block 3");
      const e = await alone.getBlock(3).catch((err: unknown) => err);
      expect(e).toBeInstanceOf(RpcError);
      expect((e as Error).message).toContain("block 2 returned for block 3");
    } finally {
      rpc.destroy();
      alone.destroy();
    }
  });

  it("recognises each provider's refusal of a large eth_getLogs as a range error", async () => {
    const p = await proxy();
    const rpc = new ChainRpc(31337, [p.url]);
    try {
      for (const shape of ["infura", "alchemy", "quicknode", "tenderly"] as const) {
        p.setFaults({ logsRangeLimit: 3, logsRangeShape: shape });
        const e = await rpc.getLogs({ fromBlock: 0, toBlock: 10 }).catch((err: unknown) => err);
        expect(isLogRangeError(e), shape).toBe(true);
        expect(isTransientRpcError(e), shape).toBe(false);
        expect(statedRangeLimit(e), shape).toBe(3);
        // A range within the stated limit is served.
        await expect(rpc.getLogs({ fromBlock: 0, toBlock: 2 }), shape).resolves.toBeInstanceOf(Array);
      }
      for (let i = 0; i < 2; i++) await chain.mint(chain.wallet(6).address, 1n);
      p.setFaults({ maxLogs: 1 });
      const e = await rpc.getLogs({ fromBlock: 0, toBlock: await chain.provider.getBlockNumber() }).catch((err: unknown) => err);
      expect(isLogRangeError(e)).toBe(true);
      expect(statedRangeLimit(e)).toBe(null);
      // Another refusal of eth_getLogs is not a range error.
      p.setFaults({});
      const other = await rpc.send("eth_getLogs", [{ fromBlock: "latest", toBlock: "0x0", blockHash: id("nothing") }]).catch((err: unknown) => err);
      expect(other).toBeInstanceOf(Error);
      expect(isLogRangeError(other)).toBe(false);
    } finally {
      rpc.destroy();
    }
  });

  it("names endpoints by their variable, never by their URL (it carries the provider's key)", async () => {
    const p = await proxy();
    p.setFaults({ down: true });
    const secretUrls = ["http://127.0.0.1:9/v3/sekret-key-1", `${p.url}/v2/sekret-key-2?apikey=sekret-key-3`];
    const changes: EndpointHealth[] = [];
    const rpc = new ChainRpc(8453, secretUrls, { onHealthChange: (h) => changes.push(h), timeoutMs: 2_000 });
    try {
      const e = await rpc.getBlockNumber().catch((err: unknown) => err);
      expect(e).toBeInstanceOf(RpcError);
      const message = (e as Error).message;
      expect(message).toContain("CHAIN_8453_RPC_URL #1: connection failed");
      expect(message).toContain("CHAIN_8453_RPC_URL #2: HTTP 503");
      expect(JSON.stringify({ message, stack: (e as Error).stack, changes, health: rpc.health() })).not.toMatch(/sekret|127\.0\.0\.1/);
    } finally {
      rpc.destroy();
    }
  });
});

describe("the indexer against hosted-provider limits (a synthetic chain)", () => {
  const CHAIN_ID = 84532; // Base Sepolia: a test-mode chain with a registry USDC
  const usdc = knownChain(CHAIN_ID)!.usdc!;
  const FEE_RECIPIENT = "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC";
  const TRANSFER = id("Transfer(address,address,uint256)");
  const word = (a: string) => zeroPadValue(a, 32);
  const amounts = (...v: bigint[]) =>
    AbiCoder.defaultAbiCoder().encode(
      v.map(() => "uint256"),
      v,
    );
  let synthetic: SyntheticChain;
  let front: RpcProxy;
  let app: TestApp;
  let base: EnabledChain;

  beforeAll(async () => {
    synthetic = await startSyntheticChain({ chainId: CHAIN_ID, head: 44_200 });
    front = await startRpcProxy(synthetic.url);
    proxies.push(front);
    const registry = knownChain(CHAIN_ID)!;
    base = enableChain({
      chainId: CHAIN_ID,
      rpcUrls: [front.url],
      factory: "0x5FbDB2315678afecb367f032d93F642f64180aa3",
      feeRecipient: FEE_RECIPIENT,
      confirmations: 5,
      relayerKey: ANVIL_KEYS[0],
      relayerMinBalance: 0n,
      maxFeePerGas: registry.maxFeePerGas,
      stuckAfterSeconds: registry.stuckAfterSeconds,
      watchTokens: [],
    });
    app = await startApp(POLLING, { chains: new ChainSet([base]) });
  }, 60_000);
  afterAll(async () => {
    await app?.stop();
    await synthetic?.close();
  });

  async function pickedCharge(amount: string) {
    const charge = (await app.call("POST", "/v1/charges", { body: { orderId: `rpc-${++orders}`, amount } })).body;
    const picked = await app.call("POST", `/v1/public/charges/${charge.id}/chain`, { body: { chainId: CHAIN_ID }, key: null });
    expect(picked.status).toBe(200);
    return { id: charge.id as string, clone: picked.body.cloneAddress as string };
  }
  const cursorAt = (n: number) =>
    app.db.prisma.chainCursor.upsert({
      where: { chainId: CHAIN_ID },
      create: { chainId: CHAIN_ID, blockNumber: BigInt(n), blockHash: synthetic.hash(n) },
      update: { blockNumber: BigInt(n), blockHash: synthetic.hash(n) },
    });

  it("catches up 24 hours of blocks (43,200) through Alchemy's 1,500-block limit: every range accepted after the first, progress logged, the cursor saved each step, the charge completed", async () => {
    const payer = "0x000000000000000000000000000000000000bEEF";
    const { id: chargeId, clone } = await pickedCharge("25");
    synthetic.addLogs([
      { blockNumber: 20_000, address: usdc, topics: [TRANSFER, word(payer), word(clone)], data: amounts(25_000_000n) },
      // Someone else's payout: 24.75 to the merchant, 0.25 fee, in one transaction.
      { blockNumber: 30_000, address: usdc, topics: [TRANSFER, word(clone), word(WALLET)], data: amounts(24_750_000n), transactionHash: id("payout") },
      { blockNumber: 30_000, address: usdc, topics: [TRANSFER, word(clone), word(FEE_RECIPIENT)], data: amounts(250_000n), transactionHash: id("payout") },
    ]);
    await cursorAt(1_000);
    front.reset();
    front.setFaults({ logsRangeLimit: 1_500, logsRangeShape: "alchemy" });
    const { logger, lines } = recordingLogger();
    const indexer = new ChainIndexer(app.db.prisma, new ChainRpc(CHAIN_ID, base.rpcUrls), base, logger, SETTINGS);
    const started = Date.now();
    let steps = 0;
    for (let step = await indexer.step(); ; step = await indexer.step()) {
      steps++;
      // Each step's end is in the database before the next begins: a crash resumes from there.
      const saved = await app.db.prisma.chainCursor.findUniqueOrThrow({ where: { chainId: CHAIN_ID } });
      expect(saved.blockNumber).toBe(step.tip);
      expect(saved.blockHash).toBe(synthetic.hash(Number(step.tip)));
      if (!step.behind) break;
      expect(steps).toBeLessThan(200);
    }
    const seconds = (Date.now() - started) / 1000;

    const ranges = front.logRanges();
    const refused = ranges.filter((r) => r.refused);
    // The first range (2,000) was refused (its one eth_getLogs); every later one fit.
    expect(refused.map((r) => r.blocks)).toEqual([2_000]);
    expect(Math.max(...ranges.filter((r) => !r.refused).map((r) => r.blocks!))).toBeLessThanOrEqual(1_500);
    // Contiguous: no block was skipped or read twice.
    const accepted = [...new Map(ranges.filter((r) => !r.refused).map((r) => [r.from, r])).values()];
    expect(accepted[0]!.from).toBe(1_001);
    for (let i = 1; i < accepted.length; i++) expect(accepted[i]!.from).toBe(accepted[i - 1]!.to + 1);
    expect(accepted[accepted.length - 1]!.to).toBe(44_200);

    const catching = lines().filter((l) => l.msg === "catching up with the chain");
    expect(catching.length).toBeGreaterThanOrEqual(28);
    expect(catching[0]).toMatchObject({ from: 1_001, to: 2_500, head: 44_200 });
    expect(lines().filter((l) => l.msg === "caught up with the chain")).toHaveLength(1);
    expect(
      lines()
        .filter((l) => l.level >= 40)
        .map((l) => l.msg),
    ).toEqual(["RPC endpoint refused the eth_getLogs range; reading smaller ranges"]);
    console.log(`24 h catch-up: ${steps} steps, ${accepted.length} ranges, ${front.total()} RPC calls, ${seconds.toFixed(1)} s`);

    await confirmChainMoney(app.db.prisma, SETTINGS, { chainId: CHAIN_ID, confirmations: 5 }, 44_200n);
    const charge = (await app.call("GET", `/v1/charges/${chargeId}`)).body;
    expect(charge).toMatchObject({ status: "COMPLETED", amountReceived: "25.00", feeAmount: "0.25", netAmount: "24.75" });
    expect(charge.settlements).toHaveLength(1);
  }, 120_000);

  it("reads a range with more logs than the provider returns in smaller pieces, and records every log once", async () => {
    const { id: chargeId, clone } = await pickedCharge("30");
    const at = 50_000;
    synthetic.setHead(at + 400);
    synthetic.addLogs(
      Array.from({ length: 30 }, (_, i) => ({
        blockNumber: at + 10 * i,
        address: usdc,
        topics: [TRANSFER, word(`0x${(i + 1).toString(16).padStart(40, "0")}`), word(clone)],
        data: amounts(1_000_000n),
      })),
    );
    await cursorAt(at - 1_000);
    front.reset();
    front.setFaults({ maxLogs: 5 });
    const indexer = new ChainIndexer(app.db.prisma, new ChainRpc(CHAIN_ID, base.rpcUrls), base, pino({ level: "silent" }), SETTINGS);
    for (let i = 0; (await indexer.step()).behind; i++) expect(i).toBeLessThan(200);
    expect(front.logRanges().some((r) => r.refused)).toBe(true);
    expect(await app.db.prisma.chainTransfer.count({ where: { chargeId } })).toBe(30);
  }, 60_000);
});

describe("the chain runner with a faulty endpoint among good ones", () => {
  let app: TestApp;
  let producer: NodeJS.Timeout | undefined;

  beforeAll(async () => {
    app = await startApp(POLLING, { chains: new ChainSet([await chain.enabled(3)]) });
  }, 60_000);
  afterAll(async () => {
    clearInterval(producer);
    await app?.stop();
  });
  const mineEvery = (ms: number) => {
    clearInterval(producer);
    producer = setInterval(() => void chain.mine().catch(() => {}), ms);
  };

  async function payableCharge(amount: string) {
    const charge = (await app.call("POST", "/v1/charges", { body: { orderId: `rpc-${++orders}`, amount } })).body;
    const picked = await app.call("POST", `/v1/public/charges/${charge.id}/chain`, { body: { chainId: 31337 }, key: null });
    expect(picked.status).toBe(200);
    return { id: charge.id as string, clone: picked.body.cloneAddress as string };
  }
  const statusOf = async (id: string) => (await app.call("GET", `/v1/charges/${id}`)).body.status as string;

  it("a lagging endpoint is waited out, not taken for a reorg: the payment it cannot see yet is kept and completes", async () => {
    const [good, lagging] = [await proxy(), await proxy()];
    await chain.mine(40); // so that the lagging node has a chain at all
    lagging.setFaults({ lagBlocks: 30 });
    const devnet = await chain.enabled(3, [good.url, lagging.url]);
    const { logger, lines } = recordingLogger();
    const runner = startChainRunner(app.db, devnet, logger, { intervalMs: 50, settings: SETTINGS, bumpAfterMs: 60_000 });
    try {
      mineEvery(100);
      const { id: chargeId, clone } = await payableCharge("5");
      clearInterval(producer);
      await chain.pay(chain.wallet(5), clone, 5_000_000n);
      await waitFor("the payment seen", async () => (await app.db.prisma.chainTransfer.count({ where: { chargeId } })) === 1);

      // The good endpoint goes down: only the lagging one answers, 30 blocks behind what was read.
      good.setFaults({ down: true });
      lagging.reset();
      await chain.mine(2);
      // Several passes wait it out (each says so) without taking it for a reorg.
      const behind = () => lines().filter((l) => l.msg === "RPC endpoint is behind the indexer; waiting").length;
      await waitFor("three passes behind the lagging endpoint", async () => behind() >= 3);
      expect(await app.db.prisma.chainTransfer.findFirst({ where: { chargeId } })).toMatchObject({ status: "SEEN" });
      expect(await statusOf(chargeId)).toBe("PENDING");

      good.setFaults({});
      mineEvery(100);
      await waitFor("the charge completed", async () => (await statusOf(chargeId)) === "COMPLETED", 60_000);
      expect(lines().filter((l) => /reorg/.test(l.msg))).toEqual([]);
    } finally {
      clearInterval(producer);
      await runner.stop();
    }
  }, 120_000);

  it("an endpoint that answers other blocks than asked is never believed: every stored block hash is the chain's", async () => {
    const [wrong, good] = [await proxy(), await proxy()];
    wrong.setFaults({ wrongBlock: true });
    const devnet = await chain.enabled(3, [wrong.url, good.url]);
    const { logger, lines } = recordingLogger();
    const runner = startChainRunner(app.db, devnet, logger, { intervalMs: 50, settings: SETTINGS, bumpAfterMs: 60_000 });
    try {
      mineEvery(100);
      const { id: chargeId, clone } = await payableCharge("5");
      await chain.pay(chain.wallet(5), clone, 5_000_000n);
      await waitFor("the charge completed", async () => (await statusOf(chargeId)) === "COMPLETED", 60_000);
      expect(wrong.calls().eth_getBlockByNumber).toBeGreaterThan(0);
      const stored = await app.db.prisma.chainBlock.findMany({ where: { chainId: 31337 } });
      expect(stored.length).toBeGreaterThan(5);
      for (const b of stored) expect(b.hash).toBe((await chain.provider.getBlock(Number(b.number)))!.hash);
      expect(lines().filter((l) => /reorg/.test(l.msg))).toEqual([]);
      expect(lines().some((l) => l.msg.startsWith("RPC endpoint failing") && String(l.problem).includes("returned for block"))).toBe(true);
    } finally {
      clearInterval(producer);
      await runner.stop();
    }
  }, 120_000);
});
