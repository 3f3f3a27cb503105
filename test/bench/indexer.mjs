// `npm run build && node test/bench/indexer.mjs`: the chain runner (indexer, confirmations,
// settlement) on anvil behind a counting JSON-RPC proxy, on a throwaway PostgreSQL database. Prints
// one JSON line (progress on stderr):
// - rpcCallsPerBlock: RPC calls per new block with 10 and with 10,000 open charges (goal: the same,
//   and at most 3);
// - completion: blocks and seconds from a payment's block to COMPLETED, with 1 and 3 confirmations
//   on a 1-second block time (goal: confirmations + 2 blocks);
// - settle500: 500 chain selections at once, deployed in batches (goal: within 5 s, at most 1.5 RPC
//   calls per clone), then all paid at once until COMPLETED; payments settled per minute and the
//   flush transactions used.
// The token is Circle's USDC (FiatToken v2.2 behind its proxy), as on every real chain.
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { ContractFactory, JsonRpcProvider, Wallet, parseUnits } from "ethers";
import pg from "pg";
import { pino } from "pino";
import { anvilBinary } from "../../dist/chain/anvil.js";
import { ChargeFactoryArtifact } from "../../dist/chain/artifacts.js";
import { ChainSet, enableChain } from "../../dist/chain/chains.js";
import { circleUsdc, deployCircleUsdc, usdcInterface } from "../../dist/chain/usdc.js";
import { openDatabase } from "../../dist/db/client.js";
import { migrate } from "../../dist/db/migrate.js";
import { selectChain } from "../../dist/domain/chain-selection.js";
import { createCharge } from "../../dist/domain/charges.js";
import { createMerchant } from "../../dist/domain/merchants.js";
import { startChainRunner } from "../../dist/jobs/chain-runner.js";
import { startRpcProxy } from "../helpers/rpc-proxy.mjs";

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
const RUNNER_SETTINGS = { paymentBaseUrl: "http://localhost/pay", partialExtensionMinutes: 15 };
const CHARGE_SETTINGS = { amount: { min: 10_000n, max: 1_000_000_000_000n }, paymentBaseUrl: "http://localhost/pay" };
const USDC = (s) => parseUnits(s, 6);

const started = Date.now();
// Every wait fails past this, so a stuck run still cleans up and exits.
const DEADLINE = started + Number(process.env.BENCH_DEADLINE_SECONDS ?? 290) * 1000;
const log = (...a) => console.error(`[indexer-bench ${((Date.now() - started) / 1000).toFixed(1)}s]`, ...a);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const round = (x, d = 2) => Math.round(x * 10 ** d) / 10 ** d;

async function waitFor(what, check, { timeoutMs = 60_000, everyMs = 50 } = {}) {
  const deadline = Math.min(Date.now() + timeoutMs, DEADLINE);
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== false && value !== null) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(everyMs);
  }
}

// ---- cleanup: everything started registers its stop, run in reverse order whatever happens --------
const cleanups = [];
const children = new Set();
process.on("exit", () => {
  for (const c of children) c.kill("SIGKILL");
});
async function cleanupAll() {
  while (cleanups.length > 0) {
    const [what, fn] = cleanups.pop();
    try {
      await Promise.race([fn(), sleep(10_000).then(() => Promise.reject(new Error("took over 10 s")))]);
    } catch (e) {
      log(`cleanup of ${what} failed: ${e.message}`);
    }
  }
}

// ---- the worker's log: counted, warnings and errors echoed to stderr ------------------------------
const workerLog = { warn: 0, error: 0, messages: {} };
const logger = pino(
  { level: "info" },
  {
    write(line) {
      const rec = JSON.parse(line);
      if (rec.level < 40) return;
      const level = rec.level >= 50 ? "error" : "warn";
      workerLog[level]++;
      const key = `${level}: ${rec.msg}${rec.err ? ` (${String(rec.err).slice(0, 160)})` : ""}`;
      workerLog.messages[key] = (workerLog.messages[key] ?? 0) + 1;
      if (workerLog.messages[key] <= 3) console.error(`[worker ${level}] ${line.trim()}`);
    },
  },
);

// ---- infrastructure -------------------------------------------------------------------------------
const admin = new pg.Client({ connectionString: BASE });

async function freshDatabase(label) {
  const name = `sg_bench_idx_${label}_${randomBytes(3).toString("hex")}`;
  await admin.query(`CREATE DATABASE ${name}`);
  cleanups.push([`database ${name}`, () => admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)]);
  const url = new URL(BASE);
  url.pathname = `/${name}`;
  const db = await openDatabase({ url: url.toString() });
  cleanups.push([`pool of ${name}`, () => db.close()]);
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
  cleanups.push([`anvil pid ${child.pid}`, stop]);
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

/** An anvil with Circle's USDC and ChargeFactory (from account 0) deployed, and a counting proxy in front. */
async function startChain(label, anvilArgs = []) {
  const anvilUrl = await spawnAnvil(anvilArgs);
  const provider = new JsonRpcProvider(anvilUrl, CHAIN_ID, { staticNetwork: true, cacheTimeout: -1 });
  provider.pollingInterval = 20;
  cleanups.push([`provider ${label}`, async () => provider.destroy()]);
  const deployer = new Wallet(KEYS.relayer, provider);
  const feeRecipient = new Wallet(KEYS.feeRecipient).address;
  const deploy = async (artifact, ...args) => {
    const c = await new ContractFactory(artifact.abi, artifact.bytecode, deployer).deploy(...args);
    await c.waitForDeployment();
    return c;
  };
  const issuer = new Wallet(KEYS.usdcIssuer, provider);
  const usdc = circleUsdc(await deployCircleUsdc({ admin: new Wallet(KEYS.usdcAdmin, provider), issuer }), issuer);
  const factory = await deploy(ChargeFactoryArtifact, feeRecipient);
  const proxy = await startRpcProxy(anvilUrl);
  cleanups.push([`rpc proxy ${label}`, () => proxy.close()]);
  const usdcAddress = await usdc.getAddress();
  const factoryAddress = await factory.getAddress();
  const payer = new Wallet(KEYS.payer, provider);
  return {
    anvilUrl,
    provider,
    proxy,
    usdcAddress,
    payer,
    payerUsdc: usdc.connect(payer),
    /** Has the issuer mint `amount` base units to the payer. */
    fundPayer: async (amount) => (await usdc.mint(payer.address, amount)).wait(),
    enabled: (confirmations) =>
      enableChain(
        { chainId: CHAIN_ID, rpcUrls: [proxy.url], factory: factoryAddress, confirmations, relayerKey: KEYS.relayer, relayerMinBalance: 0n },
        usdcAddress,
      ),
  };
}

function runner(db, chain, intervalMs) {
  const r = startChainRunner(db, chain, logger, { intervalMs, settings: RUNNER_SETTINGS, bumpAfterMs: 60_000 });
  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    await r.stop();
  };
  cleanups.push(["chain runner", stop]);
  return { stop };
}

/** Creates `n` charges through the domain and picks the chain for each (a few at a time). */
async function selectedCharges(env, chain, n, { amount = "1.00", prefix = "bench", concurrency = 8 } = {}) {
  const scope = { merchantId: env.merchantId, livemode: false };
  const chains = new ChainSet([chain]);
  const out = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(concurrency, n) }, async () => {
      while (next < n) {
        const i = next++;
        const charge = await createCharge(env.db.prisma, scope, { orderId: `${prefix}-${i}`, amount, expiresInMinutes: 60 }, CHARGE_SETTINGS);
        const picked = await selectChain(env.db.prisma, chains, RUNNER_SETTINGS, charge.id, { chainId: CHAIN_ID });
        out[i] = { id: charge.id, clone: picked.cloneAddress };
      }
    }),
  );
  return out;
}

const countWhere = (db, where) => db.prisma.charge.count({ where });
const cursorBlock = async (db) => {
  const c = await db.prisma.chainCursor.findUnique({ where: { chainId: CHAIN_ID } });
  return c ? Number(c.blockNumber) : -1;
};
const percentile = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] : null;
};

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
  await waitFor("10 clones deployed", async () => (await countWhere(env.db, { deployedAt: null })) === 0, { timeoutMs: 60_000 });
  log("rpcCallsPerBlock: 10 charges deployed");
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
      // Each block is read by one step (the latest block + two eth_getLogs: USDC transfers, clones'
      // Flushed events); every other latest-block read is an idle poll, whose number depends on the
      // poll interval, not on the chain's work.
      idlePollsPerBlock: round(((calls.eth_getBlockByNumber ?? 0) - (calls.eth_getLogs ?? 0) / 2) / BLOCKS),
      perBlockExcludingIdlePolls: round((total - ((calls.eth_getBlockByNumber ?? 0) - (calls.eth_getLogs ?? 0) / 2)) / BLOCKS),
      httpRequestsPerBlock: round(c.proxy.requests() / BLOCKS),
      callsPerSecond: round(total / seconds),
      // With the poll interval equal to the block time, a poll now and then finds no new block.
      indexLagMs: { p50: percentile(lags, 50), max: Math.max(...lags) },
    };
    log(`rpcCallsPerBlock ${label}:`, JSON.stringify(result));
    return result;
  };

  const openCharges10 = await measure("10");
  // 9,990 more open charges with distinct (fake) clones, already deployed, each with its MINED
  // deployment job, the way selected charges look once deployed.
  const t = Date.now();
  await env.db.prisma.$executeRawUnsafe(
    `INSERT INTO charges (id, merchant_id, livemode, order_id, amount, status, fee_bps, settlement_wallet, chain_id, confirmations,
       clone_address, expires_at, deployed_at)
     SELECT 'chrg_bench' || g, $1, false, 'bulk-' || g, 1000000, 'PENDING', 100, $2, ${CHAIN_ID}, 1,
       '0xbe7c' || lpad(to_hex(g), 36, '0'), now() + interval '1 day', now()
     FROM generate_series(1, 9990) g`,
    env.merchantId,
    MERCHANT_WALLET,
  );
  await env.db.prisma.$executeRawUnsafe(
    `INSERT INTO clone_deployments (charge_id, chain_id, status, attempts, updated_at)
     SELECT 'chrg_bench' || g, ${CHAIN_ID}, 'MINED', 1, now() FROM generate_series(1, 9990) g`,
  );
  await env.db.prisma.$executeRawUnsafe(`ANALYZE charges`);
  await env.db.prisma.$executeRawUnsafe(`ANALYZE clone_deployments`);
  log(`rpcCallsPerBlock: inserted 9,990 charges in ${Date.now() - t} ms`);
  const openCharges10000 = await measure("10000");
  await r.stop();
  return { openCharges10, openCharges10000, goal: { perBlock: 3, constant: true } };
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
    await waitFor("the clone deployed", async () => (await env.db.prisma.charge.findUnique({ where: { id: charge.id } })).deployedAt, { timeoutMs: 30_000 });
    c.proxy.reset();
    const tx = await c.payerUsdc.transfer(charge.clone, USDC("25"));
    // Polled every 10 ms: when the payment's block appeared, to within that.
    const receipt = await waitFor("the payment mined", () => c.provider.getTransactionReceipt(tx.hash), { everyMs: 10, timeoutMs: 30_000 });
    const paidAt = Date.now();
    const paymentBlock = receipt.blockNumber;
    const { timestamp } = await c.provider.getBlock(paymentBlock);
    const marks = {};
    await waitFor(
      "the charge COMPLETED",
      async () => {
        const row = await env.db.prisma.charge.findUnique({ where: { id: charge.id }, select: { status: true } });
        if (!marks[row.status]) {
          const head = Number(await c.provider.send("eth_blockNumber", []));
          marks[row.status] = { blocks: head - paymentBlock, seconds: round((Date.now() - paidAt) / 1000) };
        }
        return row.status === "COMPLETED";
      },
      { everyMs: 25, timeoutMs: 60_000 },
    );
    const lastFlush = await env.db.prisma.relayerTransaction.findFirst({ where: { kind: "FLUSH" }, orderBy: { createdAt: "desc" } });
    results[`confirmations${confirmations}`] = {
      paymentBlock,
      blocksToCompleted: marks.COMPLETED.blocks,
      secondsToCompleted: marks.COMPLETED.seconds,
      secondsFromBlockTimestamp: round(Date.now() / 1000 - timestamp, 1),
      blocksToReceived: marks.RECEIVED?.blocks ?? null,
      secondsToReceived: marks.RECEIVED?.seconds ?? null,
      flushBlock: lastFlush?.blockNumber == null ? null : Number(lastFlush.blockNumber),
      rpcCalls: c.proxy.total(),
      goalBlocks: confirmations + 2,
    };
    log(`completion confirmations=${confirmations}:`, JSON.stringify(results[`confirmations${confirmations}`]));
    await r.stop();
  }
  return results;
}

// ---- 3. 500 charges paid at once ------------------------------------------------------------------
async function settle500() {
  const N = Number(process.env.BENCH_SETTLE_CHARGES ?? 500);
  log(`settle${N}: setting up`);
  const env = await freshDatabase("settle");
  const c = await startChain("settle");
  const chain = c.enabled(1);
  await c.fundPayer(USDC(String(N)));
  const r = runner(env.db, chain, 100);
  let t = Date.now();
  const selectStart = t;
  const charges = await selectedCharges(env, chain, N, { amount: "1.00", prefix: "settle" });
  const createSeconds = (Date.now() - t) / 1000;
  log(`settle: ${N} charges created and selected in ${createSeconds.toFixed(1)} s; waiting for the runner to deploy them`);
  t = Date.now();
  const deployStart = t;
  let lastLog = 0;
  let firstDeployedAt = null;
  await waitFor(
    `${N} clones deployed`,
    async () => {
      const left = await countWhere(env.db, { deployedAt: null });
      if (left < N && firstDeployedAt === null) firstDeployedAt = Date.now();
      if (Date.now() - lastLog > 10_000) {
        lastLog = Date.now();
        log(`settle: ${N - left}/${N} deployed`);
      }
      return left === 0;
    },
    { timeoutMs: 150_000, everyMs: 200 },
  );
  const deploySeconds = (Date.now() - t) / 1000;
  const deployRpc = { calls: c.proxy.total(), byMethod: c.proxy.calls() };
  log(`settle: deployed in ${deploySeconds.toFixed(1)} s (${deployRpc.calls} RPC calls)`);

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
  c.proxy.reset();
  const payStart = Date.now();
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
  log(`settle: ${N} payments sent in ${sendSeconds.toFixed(1)} s`);
  const ids = charges.map((ch) => ch.id);
  lastLog = 0;
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
  const flushes = await env.db.prisma.relayerTransaction.groupBy({ by: ["status"], where: { kind: "FLUSH" }, _count: true });
  const deployTxs = await env.db.prisma.relayerTransaction.count({ where: { kind: "DEPLOY" } });
  const payments = await env.db.prisma.payment.count();
  const result = {
    charges: N,
    createAndSelectSeconds: round(createSeconds, 1),
    deploySeconds: round(deploySeconds, 1),
    firstSelectionToAllDeployedSeconds: round((deployStart + deploySeconds * 1000 - selectStart) / 1000, 1),
    secondsToFirstDeployedAt: firstDeployedAt === null ? null : round((firstDeployedAt - deployStart) / 1000, 1),
    deployRpcCallsPerClone: round(deployRpc.calls / N, 1),
    deployRpcCalls: deployRpc.calls,
    deployRpcCallsByMethod: deployRpc.byMethod,
    deployTransactions: deployTxs,
    deployGoal: { seconds: 5, rpcCallsPerClone: 1.5 },
    sendSeconds: round(sendSeconds, 1),
    secondsToAllReceived: receivedAllAt ? round((receivedAllAt - payStart) / 1000, 1) : null,
    seconds: round(seconds, 1),
    settledPerMinute: Math.round((N / seconds) * 60),
    flushes: flushes.reduce((s, f) => s + f._count, 0),
    flushesByStatus: Object.fromEntries(flushes.map((f) => [f.status, f._count])),
    paymentsRecorded: payments,
    settleRpcCalls: c.proxy.total(),
    settleRpcCallsByMethod: c.proxy.calls(),
  };
  log("settle:", JSON.stringify(result));
  await r.stop();
  return result;
}

// ---- main -----------------------------------------------------------------------------------------
let exitCode = 0;
const out = { bench: "indexer" };
const watchdog = setTimeout(
  () => {
    log("watchdog: the run is far past its deadline; exiting");
    process.exit(2);
  },
  DEADLINE - started + 60_000,
);
watchdog.unref();
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
