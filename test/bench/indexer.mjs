// `npm run build && node test/bench/indexer.mjs`: the chain runner (indexer, confirmations,
// settlement) on anvil behind a counting JSON-RPC proxy, on a throwaway PostgreSQL database. Prints
// one JSON line (progress on stderr):
// - rpcCallsPerBlock: RPC calls per new block with 10 and with 10,000 open charges (goal: the same,
//   and at most 3);
// - completion: blocks and seconds from a payment's block to COMPLETED, with 1 and 3 confirmations
//   on a 1-second block time. COMPLETED needs the payout (which deploys the clone) confirmed too, so
//   the floor is 2 × confirmations − 1 blocks (the payment's, one block to mine the payout, the
//   payout's); the goal from before clones were deployed by their payout was confirmations + 2;
// - settle500: 500 chain selections at once (goal: within 5 s, no relayer transaction: a pick sends
//   nothing, its clone is counterfactual; the worker's first check of the picked addresses at most
//   1.5 RPC calls per clone), then all paid at once until COMPLETED: payments settled per minute, the
//   payout transactions used (ChargeFactoryV2 `payout`, up to 50 clones each, deploying them), the
//   relayer's gas per paid charge and the ledger rows written.
// The token is Circle's USDC (FiatToken v2.2 behind its proxy), as on every real chain; ChargeFactoryV2
// is deployed through the deterministic deployer and Multicall3 placed at its address, as on the devnet.
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { JsonRpcProvider, Wallet, parseUnits } from "ethers";
import pg from "pg";
import { anvilBinary } from "../../dist/chain/anvil.js";
import { ChainSet } from "../../dist/chain/chains.js";
import { deployFactoryV2, placeMulticall3 } from "../../dist/chain/devnet.js";
import { circleUsdc, deployCircleUsdc, usdcInterface } from "../../dist/chain/usdc.js";
import { openDatabase } from "../../dist/db/client.js";
import { migrate } from "../../dist/db/migrate.js";
import { selectChain } from "../../dist/domain/chain-selection.js";
import { createCharge } from "../../dist/domain/charges/create.js";
import { createMerchant } from "../../dist/domain/merchants.js";
import { startChainRunner } from "../../dist/jobs/chain-runner.js";
import { startRpcProxy } from "../helpers/rpc-proxy.mjs";
import { benchChain, benchClock, cleanups, countingLogger, percentile, round, sleep } from "./kit.mjs";

const BASE = process.env.DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/postgres";
const CHAIN_ID = 31337;
// Anvil's well-known development keys (public test mnemonic).
const KEYS = {
  relayer: "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80", // account 0, also the deployer
  feeRecipient: "0x5de4111afa1a4b94908f83103eb1f1706367c2e68ca870fc3fb9a804cdab365a", // account 2
  payer: "0x7c852118294e51e653712a81e05800f419141751be58f605c371e15141b007a6", // account 3
  usdcIssuer: "0xdbda1821b80551c9d65939329250298aa3472ba22feea921c0cf5d620ea67b97", // account 8
  usdcAdmin: "0x2a871d0798f97d79848a013d4936a73bf4cc922c825d33c1cf7073dff6d409c6", // account 9
};
const MERCHANT_WALLET = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";
const RUNNER_SETTINGS = { paymentBaseUrl: "http://localhost/pay", partialExtensionMinutes: 15, payoutMinAmount: 10_000n };
const CHARGE_SETTINGS = { amount: { min: 10_000n, max: 1_000_000_000_000n }, paymentBaseUrl: "http://localhost/pay", payoutMinAmount: 10_000n };
const USDC = (s) => parseUnits(s, 6);

const { started, log, waitFor } = benchClock("indexer-bench");

// ---- cleanup: everything started registers its stop, run in reverse order whatever happens --------
const stops = cleanups(log);
const cleanupAll = () => stops.runAll();
const children = new Set();
process.on("exit", () => {
  for (const c of children) c.kill("SIGKILL");
});

// ---- the worker's log: counted, warnings and errors echoed to stderr ------------------------------
const { logger, counts: workerLog } = countingLogger();

// ---- infrastructure -------------------------------------------------------------------------------
const admin = new pg.Client({ connectionString: BASE });

async function freshDatabase(label) {
  const name = `sg_bench_idx_${label}_${randomBytes(3).toString("hex")}`;
  await admin.query(`CREATE DATABASE ${name}`);
  stops.push([`database ${name}`, () => admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)]);
  const url = new URL(BASE);
  url.pathname = `/${name}`;
  const db = await openDatabase({ url: url.toString() });
  stops.push([`pool of ${name}`, () => db.close()]);
  await migrate(db);
  const { merchant } = await createMerchant(db.prisma, { name: "Bench Shop", testWallet: MERCHANT_WALLET }, { feeBps: 100 });
  return { db, name, merchantId: merchant.id };
}

/** Anvil from its npm package, as src/chain/anvil.ts starts it, plus `extra` arguments. */
function spawnAnvil(extra = []) {
  const args = ["--host", "127.0.0.1", "--port", "0", "--chain-id", String(CHAIN_ID), ...extra];
  const child = spawn(anvilBinary(), args, { stdio: ["ignore", "pipe", "pipe"] });
  children.add(child);
  const stop = () =>
    new Promise((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve();
      child.once("exit", () => resolve());
      child.kill("SIGTERM");
      setTimeout(() => child.kill("SIGKILL"), 3_000).unref();
    }).then(() => children.delete(child));
  stops.push([`anvil pid ${child.pid}`, stop]);
  let output = "";
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`anvil did not start:\n${output.slice(-2000)}`)), 30_000);
    const onData = (chunk) => {
      output += chunk;
      const m = /Listening on 127\.0\.0\.1:(\d+)/.exec(output);
      if (!m) return;
      clearTimeout(timer);
      child.stdout.off("data", onData);
      child.stdout.resume();
      child.stderr.resume();
      resolve(`http://127.0.0.1:${m[1]}`);
    };
    child.stdout.on("data", onData);
    child.stderr.on("data", (d) => (output += d));
    child.once("error", (e) => reject(e));
    child.once("exit", (code) => reject(new Error(`anvil exited with ${code}:\n${output.slice(-2000)}`)));
  });
}

/**
 * An anvil with Circle's USDC, ChargeFactoryV2 (through the deterministic deployer, from account 0)
 * and Multicall3, and a counting proxy in front.
 */
async function startChain(label, anvilArgs = []) {
  const anvilUrl = await spawnAnvil(anvilArgs);
  const provider = new JsonRpcProvider(anvilUrl, CHAIN_ID, { staticNetwork: true, cacheTimeout: -1 });
  provider.pollingInterval = 20;
  stops.push([`provider ${label}`, async () => provider.destroy()]);
  const deployer = new Wallet(KEYS.relayer, provider);
  const feeRecipient = new Wallet(KEYS.feeRecipient).address;
  const issuer = new Wallet(KEYS.usdcIssuer, provider);
  const usdc = circleUsdc(await deployCircleUsdc({ admin: new Wallet(KEYS.usdcAdmin, provider), issuer }), issuer);
  const factoryAddress = await deployFactoryV2(deployer, feeRecipient);
  await placeMulticall3(provider);
  const proxy = await startRpcProxy(anvilUrl);
  stops.push([`rpc proxy ${label}`, () => proxy.close()]);
  const usdcAddress = await usdc.getAddress();
  const payer = new Wallet(KEYS.payer, provider);
  return {
    anvilUrl,
    provider,
    proxy,
    usdcAddress,
    relayerAddress: deployer.address,
    payer,
    payerUsdc: usdc.connect(payer),
    /** Has the issuer mint `amount` base units to the payer. */
    fundPayer: async (amount) => (await usdc.mint(payer.address, amount)).wait(),
    enabled: (confirmations) =>
      benchChain({ chainId: CHAIN_ID, rpcUrl: proxy.url, factory: factoryAddress, feeRecipient, relayerKey: KEYS.relayer, usdc: usdcAddress, confirmations }),
  };
}

function runner(db, chain, intervalMs) {
  // The periodic reconciliation (every 10 minutes by default) is left to reconcile.mjs; the first
  // check of each just-picked address runs as in production.
  const r = startChainRunner(db, chain, logger, { intervalMs, settings: RUNNER_SETTINGS, bumpAfterMs: 60_000, reconcileMs: 3_600_000 });
  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    await r.stop();
  };
  stops.push(["chain runner", stop]);
  return { stop };
}

/** Creates `n` charges through the domain and picks the chain for each (a few at a time). */
async function selectedCharges(env, chain, n, { amount = "1.00", prefix = "bench", concurrency = 8 } = {}) {
  const scope = { merchantId: env.merchantId, livemode: false };
  const chains = new ChainSet([chain]);
  const settings = { ...CHARGE_SETTINGS, factory: chains.factory() };
  const out = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(concurrency, n) }, async () => {
      while (next < n) {
        const i = next++;
        const charge = await createCharge(env.db.prisma, scope, { orderId: `${prefix}-${i}`, amount, expiresInMinutes: 60 }, settings);
        const picked = await selectChain(env.db.prisma, chains, RUNNER_SETTINGS, charge.id, { chainId: CHAIN_ID });
        out[i] = { id: charge.id, clone: picked.cloneAddress };
      }
    }),
  );
  return out;
}

const countWhere = (db, where) => db.prisma.charge.count({ where });
/** Picked clones the worker has not compared with the chain yet (its first check, at most 100 a tick). */
const unchecked = (db) => db.prisma.clone.count({ where: { balanceCheckedAt: null } });
const cursorBlock = async (db) => {
  const c = await db.prisma.chainCursor.findUnique({ where: { chainId: CHAIN_ID } });
  return c ? Number(c.blockNumber) : -1;
};
/** Latest-block reads that found no new block: every header read beyond one per new block. */
const idle = (calls, blocks) => Math.max(0, (calls.eth_getBlockByNumber ?? 0) - blocks);

// ---- 1. RPC calls per block, 10 and 10,000 open charges -------------------------------------------
const POLL_MS = 1000;
const BLOCK_MS = 1000;
async function rpcCallsPerBlock() {
  log("rpcCallsPerBlock: setting up");
  const env = await freshDatabase("rpc");
  const c = await startChain("rpc");
  const chain = c.enabled(1);
  await c.fundPayer(USDC("1000000"));
  // The default CHAIN_POLL_INTERVAL_MS against a chain with 1-second blocks.
  const r = runner(env.db, chain, POLL_MS);
  const ten = await selectedCharges(env, chain, 10, { prefix: "rpc" });
  // A pick sends nothing; the worker compares each picked address with the chain once, then never again.
  if ((await env.db.prisma.relayerTransaction.count()) !== 0) throw new Error("a pick sent a relayer transaction");
  await waitFor("the 10 picked clones checked", async () => (await unchecked(env.db)) === 0, { timeoutMs: 60_000 });
  log("rpcCallsPerBlock: 10 charges picked and checked");
  await c.provider.send("evm_setAutomine", [false]);
  let payerNonce = await c.provider.getTransactionCount(c.payer.address, "pending");

  const measure = async (label) => {
    const head = Number(await c.provider.send("eth_blockNumber", []));
    await waitFor("the indexer at the head", async () => (await cursorBlock(env.db)) === head, { timeoutMs: 30_000 });
    await sleep(400);
    c.proxy.reset();
    const t0 = Date.now();
    const lags = [];
    const BLOCKS = 20;
    let transfers = 0;
    for (let i = 0; i < BLOCKS; i++) {
      const blockStart = Date.now();
      // Some blocks carry USDC transfers to addresses that are not clones (the indexer must read
      // them and find nothing).
      if (i % 6 === 2) {
        for (let k = 0; k < 3; k++) {
          await c.payerUsdc.transfer(Wallet.createRandom().address, USDC("1"), { nonce: payerNonce++, gasLimit: 100_000 });
          transfers++;
        }
      }
      await c.provider.send("evm_mine", []);
      const mined = Date.now();
      const number = head + i + 1;
      await waitFor(`the indexer at block ${number}`, async () => (await cursorBlock(env.db)) >= number, { timeoutMs: 10_000, everyMs: 5 });
      lags.push(Date.now() - mined);
      const rest = BLOCK_MS - (Date.now() - blockStart);
      if (rest > 0) await sleep(rest);
    }
    await sleep(300);
    const seconds = (Date.now() - t0) / 1000;
    const calls = c.proxy.calls();
    const total = c.proxy.total();
    const open = await countWhere(env.db, { status: "PENDING", chainId: CHAIN_ID });
    const result = {
      openCharges: open,
      blocks: BLOCKS,
      blocksWithUnrelatedTransfers: Math.ceil(BLOCKS / 6),
      unrelatedTransfers: transfers,
      calls: total,
      perBlock: round(total / BLOCKS),
      perBlockByMethod: Object.fromEntries(Object.entries(calls).map(([m, n]) => [m, round(n / BLOCKS)])),
      // Each new block costs its header once (read as the latest block, or in the step's batch when a
      // step covers several) and each step that advances one eth_getLogs (USDC's Transfer and
      // AuthorizationUsed events, one filter); every other latest-block read is an idle poll, whose
      // number depends on the poll interval, not on the chain's work.
      stepsThatAdvanced: calls.eth_getLogs ?? 0,
      idlePollsPerBlock: round(idle(calls, BLOCKS) / BLOCKS),
      perBlockExcludingIdlePolls: round((total - idle(calls, BLOCKS)) / BLOCKS),
      httpRequestsPerBlock: round(c.proxy.requests() / BLOCKS),
      callsPerSecond: round(total / seconds),
      // With the poll interval equal to the block time, a poll now and then finds no new block.
      indexLagMs: { p50: percentile(lags, 50), max: Math.max(...lags) },
    };
    log(`rpcCallsPerBlock ${label}:`, JSON.stringify(result));
    return result;
  };

  const openCharges10 = await measure("10");
  // 9,990 more open charges picked on this chain with distinct (fake) version 2 addresses: their
  // clones counterfactual (held 0, no code, deployed_at NULL) and already compared with the chain
  // once, the way picked charges look while their buyers have not paid.
  const t = Date.now();
  await env.db.prisma.$executeRawUnsafe(
    `INSERT INTO charges (id, merchant_id, livemode, order_id, amount, status, fee_bps, settlement_wallet, contract_version, deposit_address,
       chain_id, confirmations, clone_address, expires_at)
     SELECT 'chrg_bench' || g, $1, false, 'bulk-' || g, 1000000, 'PENDING', 100, $2, 2, '0xbe7c' || lpad(to_hex(g), 36, '0'),
       ${CHAIN_ID}, 1, '0xbe7c' || lpad(to_hex(g), 36, '0'), now() + interval '1 day'
     FROM generate_series(1, 9990) g`,
    env.merchantId,
    MERCHANT_WALLET,
  );
  await env.db.prisma.$executeRawUnsafe(
    `INSERT INTO clones (charge_id, chain_id, address, version, held, deployed_at, balance_checked_at)
     SELECT 'chrg_bench' || g, ${CHAIN_ID}, '0xbe7c' || lpad(to_hex(g), 36, '0'), 2, 0, NULL, now() FROM generate_series(1, 9990) g`,
  );
  await env.db.prisma.$executeRawUnsafe(`ANALYZE charges`);
  await env.db.prisma.$executeRawUnsafe(`ANALYZE clones`);
  log(`rpcCallsPerBlock: inserted 9,990 charges in ${Date.now() - t} ms`);
  const openCharges10000 = await measure("10000");
  // The same once the relayer has sent something: one of the ten paid, paid out and confirmed, the
  // relayer with no transaction open.
  await c.payerUsdc.transfer(ten[0].clone, USDC("1"), { nonce: payerNonce++, gasLimit: 100_000 });
  await waitFor(
    "the paid charge COMPLETED and its payout confirmed",
    async () => {
      await c.provider.send("evm_mine", []);
      const done = (await countWhere(env.db, { id: ten[0].id, status: "COMPLETED" })) === 1;
      const open = await env.db.prisma.relayerTransaction.count({ where: { status: { not: "CONFIRMED" } } });
      return done && open === 0;
    },
    { timeoutMs: 30_000, everyMs: 1_000 },
  );
  const openCharges10000AfterAPayout = await measure("10000 after a payout");
  await r.stop();
  return { openCharges10, openCharges10000, openCharges10000AfterAPayout, goal: { perBlock: 3, constant: true } };
}

// ---- 2. Blocks and seconds from the payment's block to COMPLETED ----------------------------------
async function completion() {
  log("completion: setting up (anvil --block-time 1)");
  const env = await freshDatabase("done");
  const c = await startChain("done", ["--block-time", "1"]);
  await c.fundPayer(USDC("1000"));
  const results = {};
  for (const confirmations of [1, 3]) {
    const chain = c.enabled(confirmations);
    const r = runner(env.db, chain, 200);
    const [charge] = await selectedCharges(env, chain, 1, { amount: "25.00", prefix: `done-${confirmations}` });
    // Nothing to wait for on chain (the clone is counterfactual); the worker's first check of the
    // picked address is left out of the count below.
    await waitFor("the picked clone checked", async () => (await unchecked(env.db)) === 0, { timeoutMs: 30_000 });
    const flushesBefore = await env.db.prisma.relayerTransaction.count({ where: { kind: "FLUSH" } });
    c.proxy.reset();
    const tx = await c.payerUsdc.transfer(charge.clone, USDC("25"));
    // Polled every 10 ms: when the payment's block appeared, to within that.
    const receipt = await waitFor("the payment mined", () => c.provider.getTransactionReceipt(tx.hash), { everyMs: 10, timeoutMs: 30_000 });
    const paidAt = Date.now();
    const paymentBlock = receipt.blockNumber;
    const { timestamp } = await c.provider.getBlock(paymentBlock);
    const marks = {};
    const mark = async (what) => {
      if (marks[what]) return;
      const head = Number(await c.provider.send("eth_blockNumber", []));
      marks[what] = { blocks: head - paymentBlock, seconds: round((Date.now() - paidAt) / 1000) };
    };
    await waitFor(
      "the charge COMPLETED",
      async () => {
        const row = await env.db.prisma.charge.findUnique({ where: { id: charge.id }, select: { status: true } });
        await mark(row.status);
        if ((await env.db.prisma.relayerTransaction.count({ where: { kind: "FLUSH" } })) > flushesBefore) await mark("payoutSent");
        return row.status === "COMPLETED";
      },
      { everyMs: 25, timeoutMs: 60_000 },
    );
    const payout = await env.db.prisma.chainTransfer.findFirst({ where: { chargeId: charge.id, kind: "PAYOUT" } });
    const clone = await env.db.prisma.clone.findUnique({ where: { chargeId_chainId: { chargeId: charge.id, chainId: CHAIN_ID } } });
    results[`confirmations${confirmations}`] = {
      paymentBlock,
      blocksToCompleted: marks.COMPLETED.blocks,
      secondsToCompleted: marks.COMPLETED.seconds,
      secondsFromBlockTimestamp: round(Date.now() / 1000 - timestamp, 1),
      blocksToReceived: marks.RECEIVED?.blocks ?? null,
      secondsToReceived: marks.RECEIVED?.seconds ?? null,
      blocksToPayoutSent: marks.payoutSent?.blocks ?? null,
      payoutBlock: payout ? Number(payout.blockNumber) : null,
      payoutBlocksAfterPayment: payout ? Number(payout.blockNumber) - paymentBlock : null,
      cloneDeployedByPayout: clone?.deployedAt != null && (await c.provider.getCode(charge.clone)) !== "0x",
      rpcCalls: c.proxy.total(),
      rpcCallsByMethod: c.proxy.calls(),
      // The payment's confirmations, one block to mine the payout, the payout's confirmations.
      floorBlocks: 2 * confirmations - 1,
      goalBlocksBeforeV2: confirmations + 2,
    };
    log(`completion confirmations=${confirmations}:`, JSON.stringify(results[`confirmations${confirmations}`]));
    await r.stop();
  }
  return results;
}

// ---- 3. 500 charges picked at once, then paid at once ---------------------------------------------
async function settle500() {
  const N = Number(process.env.BENCH_SETTLE_CHARGES ?? 500);
  log(`settle${N}: setting up`);
  const env = await freshDatabase("settle");
  const c = await startChain("settle");
  const chain = c.enabled(1);
  await c.fundPayer(USDC(String(N)));
  const r = runner(env.db, chain, 100);
  await waitFor("the indexer started", async () => (await cursorBlock(env.db)) >= 0, { timeoutMs: 30_000 });
  await sleep(300);
  c.proxy.reset();
  const relayerNonce = await c.provider.getTransactionCount(c.relayerAddress);
  let t = Date.now();
  const charges = await selectedCharges(env, chain, N, { amount: "1.00", prefix: "settle" });
  const createSeconds = (Date.now() - t) / 1000;
  const pickRpc = { calls: c.proxy.total(), byMethod: c.proxy.calls() };
  log(`settle: ${N} charges created and picked in ${createSeconds.toFixed(1)} s (${pickRpc.calls} RPC calls meanwhile)`);
  // The worker's first check of the picked addresses (money sent before a pick is counted), at most
  // 100 addresses a tick.
  await waitFor(`${N} picked clones checked`, async () => (await unchecked(env.db)) === 0, { timeoutMs: 60_000, everyMs: 50 });
  const checkSeconds = (Date.now() - t) / 1000;
  const checkRpc = { calls: c.proxy.total(), byMethod: c.proxy.calls() };
  const pickRelayerTxs = await env.db.prisma.relayerTransaction.count();
  const pickChainTxs = (await c.provider.getTransactionCount(c.relayerAddress)) - relayerNonce;
  const undeployed = (await Promise.all(charges.slice(0, 20).map((ch) => c.provider.getCode(ch.clone)))).every((code) => code === "0x");
  log(`settle: picked clones checked after ${checkSeconds.toFixed(1)} s (${checkRpc.calls} RPC calls); relayer transactions: ${pickRelayerTxs}`);

  // Sign all payments first, with sequential nonces; then send them as fast as anvil takes them.
  const nonce = await c.provider.getTransactionCount(c.payer.address, "pending");
  const fees = await c.provider.getFeeData();
  const raws = [];
  for (const [i, ch] of charges.entries()) {
    raws.push(
      await c.payer.signTransaction({
        type: 2,
        chainId: CHAIN_ID,
        to: c.usdcAddress,
        data: usdcInterface.encodeFunctionData("transfer", [ch.clone, USDC("1")]),
        nonce: nonce + i,
        gasLimit: 100_000,
        maxFeePerGas: fees.maxFeePerGas * 4n,
        maxPriorityFeePerGas: fees.maxPriorityFeePerGas ?? 1n,
      }),
    );
  }
  await sleep(500);
  const relayerBalanceBefore = await c.provider.getBalance(c.relayerAddress);
  c.proxy.reset();
  const payStart = Date.now();
  const firstBlock = (await c.provider.getBlockNumber()) + 1;
  const PIPE = 16;
  let next = 0;
  // In nonce order, a few in flight (anvil keeps a later nonce until the gap is filled).
  await Promise.all(
    Array.from({ length: PIPE }, async () => {
      while (next < raws.length) {
        const raw = raws[next++];
        await c.provider.send("eth_sendRawTransaction", [raw]);
      }
    }),
  );
  const sendSeconds = (Date.now() - payStart) / 1000;
  const lastPaymentBlock = await c.provider.getBlockNumber();
  log(`settle: ${N} payments sent in ${sendSeconds.toFixed(1)} s (blocks ${firstBlock}–${lastPaymentBlock}, anvil mines each)`);
  const ids = charges.map((ch) => ch.id);
  let lastLog = 0;
  let receivedAllAt = null;
  await waitFor(
    `${N} charges COMPLETED`,
    async () => {
      const rows = await env.db.prisma.charge.groupBy({ by: ["status"], where: { id: { in: ids } }, _count: true });
      const by = Object.fromEntries(rows.map((x) => [x.status, x._count]));
      if (!receivedAllAt && (by.PENDING ?? 0) === 0) receivedAllAt = Date.now();
      if (Date.now() - lastLog > 5_000) {
        lastLog = Date.now();
        log(`settle: ${JSON.stringify(by)}`);
      }
      return (by.COMPLETED ?? 0) === N;
    },
    { timeoutMs: 150_000, everyMs: 100 },
  );
  const seconds = (Date.now() - payStart) / 1000;
  const settleRpc = { calls: c.proxy.total(), byMethod: c.proxy.calls() };
  const payoutsAtCompleted = await env.db.prisma.relayerTransaction.groupBy({ by: ["status"], where: { kind: "FLUSH" }, _count: true });
  // The charges complete when the indexer confirms the payouts' transfers; the relayer's own
  // tracking of its transactions (receipts) follows in the same ticks, after confirming.
  await waitFor(
    "every payout transaction tracked to CONFIRMED",
    async () => (await env.db.prisma.relayerTransaction.count({ where: { kind: "FLUSH", status: { not: "CONFIRMED" } } })) === 0,
    { timeoutMs: 60_000, everyMs: 100 },
  );
  const payoutsTrackedSeconds = (Date.now() - payStart) / 1000;
  const payouts = await env.db.prisma.relayerTransaction.findMany({ where: { kind: "FLUSH" }, select: { status: true, txHash: true } });
  const otherTxs = await env.db.prisma.relayerTransaction.groupBy({ by: ["kind"], where: { kind: { not: "FLUSH" } }, _count: true });
  // Clones paid out per payout transaction, from the ledger's observations (one PAYOUT transfer per clone).
  const batches = await env.db.prisma.chainTransfer.groupBy({ by: ["txHash"], where: { kind: "PAYOUT" }, _count: true });
  const sizes = batches.map((b) => b._count).sort((a, b) => b - a);
  let gasUsed = 0n;
  let weiPaid = 0n;
  for (const p of payouts.filter((p) => p.txHash)) {
    const receipt = await c.provider.getTransactionReceipt(p.txHash);
    gasUsed += receipt.gasUsed;
    weiPaid += receipt.gasUsed * receipt.gasPrice;
  }
  if (payouts.some((p) => !p.txHash)) throw new Error("a confirmed payout without its transaction hash");
  const relayerSpent = relayerBalanceBefore - (await c.provider.getBalance(c.relayerAddress));
  const ledger = await env.db.prisma.balanceTransaction.groupBy({ by: ["type"], _count: true });
  const deployedClones = await env.db.prisma.clone.count({ where: { deployedAt: { not: null } } });
  const result = {
    charges: N,
    picks: {
      seconds: round(createSeconds, 1),
      rpcCalls: pickRpc.calls,
      rpcCallsByMethod: pickRpc.byMethod,
      relayerTransactions: pickRelayerTxs,
      relayerChainTransactions: pickChainTxs,
      clonesWithoutCode: undeployed,
      // From the first pick until the worker has compared every picked address with the chain once
      // (its idle polls of the latest block included).
      secondsToAllChecked: round(checkSeconds, 1),
      rpcCallsToAllChecked: checkRpc.calls,
      rpcCallsPerClone: round(checkRpc.calls / N, 3),
      rpcCallsToAllCheckedByMethod: checkRpc.byMethod,
      goal: { seconds: 5, relayerTransactions: 0, rpcCallsPerClone: 1.5 },
    },
    sendSeconds: round(sendSeconds, 1),
    paymentBlocks: lastPaymentBlock - firstBlock + 1,
    secondsToAllReceived: receivedAllAt ? round((receivedAllAt - payStart) / 1000, 1) : null,
    seconds: round(seconds, 1),
    settledPerMinute: Math.round((N / seconds) * 60),
    payoutTransactions: payouts.length,
    payoutTransactionsByStatusAtCompleted: Object.fromEntries(payoutsAtCompleted.map((x) => [x.status, x._count])),
    secondsToPayoutsTracked: round(payoutsTrackedSeconds, 1),
    clonesPerPayout: { max: sizes[0] ?? 0, min: sizes[sizes.length - 1] ?? 0, mean: round(N / Math.max(1, sizes.length), 1), sizes },
    otherRelayerTransactions: Object.fromEntries(otherTxs.map((x) => [x.kind, x._count])),
    clonesDeployed: deployedClones,
    relayerGasPerPaidCharge: Math.round(Number(gasUsed) / N),
    relayerWeiPerPaidCharge: (weiPaid / BigInt(N)).toString(),
    relayerBalanceSpentWei: relayerSpent.toString(),
    ledgerRows: ledger.reduce((s, x) => s + x._count, 0),
    ledgerRowsByType: Object.fromEntries(ledger.map((x) => [x.type, x._count])),
    settleRpcCalls: settleRpc.calls,
    settleRpcCallsPerCharge: round(settleRpc.calls / N, 1),
    settleRpcCallsByMethod: settleRpc.byMethod,
  };
  log("settle:", JSON.stringify(result));
  await r.stop();
  return result;
}

// ---- main -----------------------------------------------------------------------------------------
let exitCode = 0;
const out = { bench: "indexer" };
try {
  await admin.connect();
  out.rpcCallsPerBlock = await rpcCallsPerBlock();
  await cleanupAll();
  out.completion = await completion();
  await cleanupAll();
  out.settle500 = await settle500();
} catch (e) {
  exitCode = 1;
  out.error = e.message;
  log("failed:", e.stack ?? e);
} finally {
  await cleanupAll();
  await admin.end().catch(() => {});
}
out.workerLog = workerLog;
out.seconds = round((Date.now() - started) / 1000, 1);
console.log(JSON.stringify(out));
process.exit(exitCode);
