// `npm run build && node test/bench/subscriptions.mjs`: subscription renewals by the chain runner
// (jobs/subscriptions.ts) on anvil behind a counting JSON-RPC proxy, on a throwaway PostgreSQL
// database. Prints one JSON line (progress on stderr).
//
// Setup: N subscriptions (BENCH_SUBSCRIPTIONS, 10,000 by default) of 1.00 USDC a day, one payer
// wallet funded and approving SubscriptionsV1 for the maximum; N distinct permissions (spender: the
// relayer) signed and approved on chain through Multicall3 (approve() may be sent by anyone); N ACTIVE
// rows (a customer each, one plan) written straight to the database as if period 0 were paid, their
// next pull at the start of period 1. The runner starts and catches up with the chain (nothing due);
// then anvil's clock moves past period 0 and all N fall due at once.
//
// Measured from that block until every subscription is in period 1 with a SUCCEEDED pull (or the
// timeout, BENCH_SUBSCRIPTIONS_TIMEOUT_SECONDS, 45 minutes: 10,000 renewals take about 20 on a
// 2-core machine): renewalsPerMinute and seconds;
// rpcCallsPerRenewal (every JSON-RPC call the runner made in that time, idle polls included, / N) and
// its split by method; relayer gas per renewal (the PULL transactions' receipts, / N); the pulls that
// failed. Anvil automines (a block per transaction, as the other benches' settlement phases), so the
// figures are the engine's own pace, not a block time's. The runner ticks every 100 ms.
// Baseline, in the same run: the same N pulls one period later, the runner stopped, sent by a plain
// loop (rawRenewals); `ratio` is the service's renewals a second over the baseline's.
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { Interface, JsonRpcProvider, MaxUint256, Wallet, parseUnits } from "ethers";
import pg from "pg";
import { anvilBinary } from "../../dist/chain/anvil.js";
import { MULTICALL3 } from "../../dist/chain/clones.js";
import { deployFactoryV2, deploySubscriptionsV1, placeMulticall3 } from "../../dist/chain/devnet.js";
import {
  UNTIL_REVOKED,
  permissionDigest,
  permissionHash,
  permissionTuple,
  pullCalldata,
  storePermission,
  subscriptionSalt,
  subscriptionsInterface,
} from "../../dist/chain/subscriptions.js";
import { circleUsdc, deployCircleUsdc } from "../../dist/chain/usdc.js";
import { openDatabase } from "../../dist/db/client.js";
import { migrate } from "../../dist/db/migrate.js";
import { newId } from "../../dist/domain/ids.js";
import { createMerchant } from "../../dist/domain/merchants.js";
import { startChainRunner } from "../../dist/jobs/chain-runner.js";
import { startRpcProxy } from "../helpers/rpc-proxy.mjs";
import { benchChain, benchClock, cleanups, countingLogger, round, sleep } from "./kit.mjs";

const N = Number(process.env.BENCH_SUBSCRIPTIONS ?? 10_000);
const TIMEOUT_MS = Number(process.env.BENCH_SUBSCRIPTIONS_TIMEOUT_SECONDS ?? 2700) * 1000;
// The kit's run deadline (290 s by default, read when benchClock is called) is too short for 10,000
// renewals: setup plus the timeout.
process.env.BENCH_DEADLINE_SECONDS ??= String(TIMEOUT_MS / 1000 + 600);

const BASE = process.env.DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/postgres";
const CHAIN_ID = 31337;
const DAY = 86_400;
// Anvil's well-known development keys (public test mnemonic).
const KEYS = {
  relayer: "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80", // account 0, also the deployer
  feeRecipient: "0x5de4111afa1a4b94908f83103eb1f1706367c2e68ca870fc3fb9a804cdab365a", // account 2
  payer: "0x7c852118294e51e653712a81e05800f419141751be58f605c371e15141b007a6", // account 3
  submitter: "0x47e179ec197488593b187f80a00eb0da91f1b9d0b13f8733639f19c30a34926a", // account 4: sends the approvals
  usdcIssuer: "0xdbda1821b80551c9d65939329250298aa3472ba22feea921c0cf5d620ea67b97", // account 8
  usdcAdmin: "0x2a871d0798f97d79848a013d4936a73bf4cc922c825d33c1cf7073dff6d409c6", // account 9
};
const MERCHANT_WALLET = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";
const RUNNER_SETTINGS = { paymentBaseUrl: "http://localhost/pay", partialExtensionMinutes: 15, payoutMinAmount: 10_000n };
const AMOUNT = parseUnits("1", 6);
const FEE_BPS = 100;
/** approve() calls per Multicall3 transaction (about 50,000 gas each). */
const APPROVALS_PER_TX = 200;
const multicall = new Interface([
  "function aggregate3((address target, bool allowFailure, bytes callData)[] calls) payable returns ((bool success, bytes returnData)[])",
]);

const { started, log, waitFor } = benchClock("subscriptions-bench", { everyMs: 250 });
const stops = cleanups(log);
const children = new Set();
process.on("exit", () => {
  for (const c of children) c.kill("SIGKILL");
});
const { logger, counts: workerLog } = countingLogger();
const admin = new pg.Client({ connectionString: BASE });

async function freshDatabase() {
  const name = `sg_bench_sub_${randomBytes(3).toString("hex")}`;
  await admin.query(`CREATE DATABASE ${name}`);
  stops.push([`database ${name}`, () => admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)]);
  const url = new URL(BASE);
  url.pathname = `/${name}`;
  const db = await openDatabase({ url: url.toString() });
  stops.push([`pool of ${name}`, () => db.close()]);
  await migrate(db);
  const { merchant } = await createMerchant(db.prisma, { name: "Bench Shop", testWallet: MERCHANT_WALLET }, { feeBps: FEE_BPS });
  return { db, merchantId: merchant.id };
}

/** Anvil from its npm package (automine), as src/chain/anvil.ts starts it. */
function spawnAnvil() {
  const args = ["--host", "127.0.0.1", "--port", "0", "--chain-id", String(CHAIN_ID)];
  const child = spawn(anvilBinary(), args, { stdio: ["ignore", "pipe", "pipe"] });
  children.add(child);
  stops.push([
    `anvil pid ${child.pid}`,
    () =>
      new Promise((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once("exit", () => resolve());
        child.kill("SIGTERM");
        setTimeout(() => child.kill("SIGKILL"), 3_000).unref();
      }),
  ]);
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

/** N permissions signed by the payer, approved on chain through Multicall3 in batches. */
async function approvedPermissions(provider, { payer, usdc, subscriptions, spender, ids, start }) {
  const perms = ids.map((id) => ({
    payer: payer.address,
    merchant: MERCHANT_WALLET,
    token: usdc,
    spender,
    amount: AMOUNT,
    feeBps: FEE_BPS,
    period: BigInt(DAY),
    start,
    end: UNTIL_REVOKED,
    salt: subscriptionSalt(id),
  }));
  // The digest signed directly: what payer.signTypedData signs, without its per-call set-up.
  const signatures = perms.map((p) => payer.signingKey.sign(permissionDigest(CHAIN_ID, subscriptions, p)).serialized);
  log(`${N} permissions signed`);
  const submitter = new Wallet(KEYS.submitter, provider);
  let nonce = await provider.getTransactionCount(submitter.address);
  const sent = [];
  for (let i = 0; i < perms.length; i += APPROVALS_PER_TX) {
    const calls = perms.slice(i, i + APPROVALS_PER_TX).map((p, k) => ({
      target: subscriptions,
      allowFailure: false,
      callData: subscriptionsInterface.encodeFunctionData("approve", [permissionTuple(p), signatures[i + k]]),
    }));
    sent.push(
      await submitter.sendTransaction({ to: MULTICALL3, data: multicall.encodeFunctionData("aggregate3", [calls]), nonce: nonce++, gasLimit: 15_000_000 }),
    );
  }
  const receipts = await Promise.all(sent.map((tx) => tx.wait()));
  if (receipts.some((r) => r.status !== 1)) throw new Error("an approval batch reverted");
  log(`${N} permissions approved on chain in ${sent.length} transactions`);
  return perms.map((p, i) => ({ p, signature: signatures[i] }));
}

/** N ACTIVE subscriptions in period 0 (paid), next pull at period 1's start; a customer each, one plan. */
async function activeRows(prisma, merchantId, { ids, perms, contract, relayer }) {
  const plan = await prisma.plan.create({
    data: { id: newId("plan"), merchantId, livemode: false, name: "Daily plan", amount: AMOUNT, interval: "day", intervalCount: 1 },
  });
  const CHUNK = 1000;
  for (let i = 0; i < ids.length; i += CHUNK) {
    const slice = ids.slice(i, i + CHUNK);
    const customers = slice.map((_, k) => ({
      id: newId("cus"),
      merchantId,
      livemode: false,
      name: `Buyer ${i + k}`,
      email: `buyer-${i + k}@example.com`,
    }));
    await prisma.customer.createMany({ data: customers });
    await prisma.subscription.createMany({
      data: slice.map((id, k) => {
        const { p, signature } = perms[i + k];
        const start = new Date(Number(p.start) * 1000);
        const end = new Date((Number(p.start) + DAY) * 1000);
        return {
          id,
          merchantId,
          livemode: false,
          customerId: customers[k].id,
          planId: plan.id,
          status: "ACTIVE",
          amount: AMOUNT,
          periodSeconds: DAY,
          feeBps: FEE_BPS,
          chainId: CHAIN_ID,
          payer: p.payer,
          settlementWallet: MERCHANT_WALLET,
          spender: relayer,
          contractAddress: contract,
          permission: storePermission(p),
          permissionHash: permissionHash(p),
          permissionSignature: signature,
          periodIndex: 0,
          currentPeriodStart: start,
          currentPeriodEnd: end,
          nextPullAt: end,
          manageToken: randomBytes(24).toString("base64url"),
          expiresAt: start,
        };
      }),
    });
  }
  log(`${ids.length} ACTIVE subscriptions written`);
}

async function bench() {
  const env = await freshDatabase();
  const anvilUrl = await spawnAnvil();
  const provider = new JsonRpcProvider(anvilUrl, CHAIN_ID, { staticNetwork: true, cacheTimeout: -1 });
  provider.pollingInterval = 20;
  stops.push(["provider", async () => provider.destroy()]);
  const deployer = new Wallet(KEYS.relayer, provider);
  const feeRecipient = new Wallet(KEYS.feeRecipient).address;
  const issuer = new Wallet(KEYS.usdcIssuer, provider);
  const usdc = circleUsdc(await deployCircleUsdc({ admin: new Wallet(KEYS.usdcAdmin, provider), issuer }), issuer);
  const usdcAddress = await usdc.getAddress();
  const factory = await deployFactoryV2(deployer, feeRecipient);
  const subscriptions = await deploySubscriptionsV1(deployer, feeRecipient);
  await placeMulticall3(provider);
  const proxy = await startRpcProxy(anvilUrl);
  stops.push(["rpc proxy", () => proxy.close()]);
  const chain = benchChain({ chainId: CHAIN_ID, rpcUrl: proxy.url, factory, feeRecipient, relayerKey: KEYS.relayer, usdc: usdcAddress });
  if (chain.subscriptions !== subscriptions) throw new Error(`the chain names SubscriptionsV1 at ${chain.subscriptions}, deployed at ${subscriptions}`);

  const payer = new Wallet(KEYS.payer, provider);
  await (await usdc.mint(payer.address, AMOUNT * BigInt(N))).wait();
  await (await usdc.connect(payer).approve(subscriptions, MaxUint256)).wait();
  const start = BigInt((await provider.getBlock("latest")).timestamp);
  const ids = Array.from({ length: N }, () => newId("sub"));
  const perms = await approvedPermissions(provider, { payer, usdc: usdcAddress, subscriptions, spender: deployer.address, ids, start });
  await activeRows(env.db.prisma, env.merchantId, { ids, perms, contract: subscriptions, relayer: deployer.address });

  // The runner catches up with the chain first (nothing is due yet), so the measured phase is the renewals'.
  const r = startChainRunner(env.db, chain, logger, { intervalMs: 100, settings: RUNNER_SETTINGS, bumpAfterMs: 60_000, reconcileMs: 3_600_000 });
  let stopped = false;
  stops.push(["chain runner", () => (stopped ? undefined : ((stopped = true), r.stop()))]);
  const head = await provider.getBlockNumber();
  await waitFor(
    "the indexer at the head",
    async () => {
      const c = await env.db.prisma.chainCursor.findUnique({ where: { chainId: CHAIN_ID } });
      return c && Number(c.blockNumber) >= head;
    },
    { timeoutMs: 120_000 },
  );
  await sleep(500);
  if ((await env.db.prisma.subscriptionPull.count()) !== 0) throw new Error("a pull before anything was due");

  // Period 1 opens: every subscription falls due in the same block.
  await provider.send("evm_increaseTime", [DAY + 60]);
  proxy.reset();
  const relayerBalanceBefore = await provider.getBalance(deployer.address);
  await provider.send("evm_mine", []);
  const t0 = Date.now();
  log(`clock moved to period 1: ${N} renewals due`);
  const renewed = () => env.db.prisma.subscriptionPull.count({ where: { periodIndex: 1, status: "SUCCEEDED", checkout: false } });
  let lastLog = 0;
  let timedOut = false;
  let firstRenewalSeconds = null;
  try {
    await waitFor(
      `${N} renewals`,
      async () => {
        const [done, failed] = await Promise.all([renewed(), env.db.prisma.subscriptionPull.count({ where: { status: "FAILED" } })]);
        if (done > 0 && firstRenewalSeconds === null) firstRenewalSeconds = (Date.now() - t0) / 1000;
        if (Date.now() - lastLog > 10_000) {
          lastLog = Date.now();
          log(`renewed ${done}/${N}, failed ${failed}, ${proxy.total()} RPC calls`);
        }
        return done + failed >= N;
      },
      { timeoutMs: TIMEOUT_MS },
    );
  } catch (e) {
    if (!/timed out/.test(e.message)) throw e;
    timedOut = true;
    log(e.message);
  }
  const seconds = (Date.now() - t0) / 1000;
  // Counted before the runner stops: a tick still running would add renewals past `seconds`.
  const done = await renewed();
  const calls = proxy.total();
  const byMethod = proxy.calls();
  const httpRequests = proxy.requests();
  stopped = true;
  await r.stop();

  const inPeriod1 = await env.db.prisma.subscription.count({ where: { status: "ACTIVE", periodIndex: 1 } });
  const pulls = await env.db.prisma.subscriptionPull.groupBy({ by: ["status"], _count: true });
  const pullTxs = await env.db.prisma.relayerTransaction.findMany({ where: { kind: "PULL" }, select: { status: true, txHash: true, bumps: true } });
  let gasUsed = 0n;
  let reverted = 0;
  for (const tx of pullTxs.filter((t) => t.txHash)) {
    const receipt = await provider.getTransactionReceipt(tx.txHash);
    gasUsed += receipt.gasUsed;
    if (receipt.status !== 1) reverted++;
  }
  const otherTxs = await env.db.prisma.relayerTransaction.groupBy({ by: ["kind"], where: { kind: { not: "PULL" } }, _count: true });
  const invoices = await env.db.prisma.invoice.groupBy({ by: ["status"], _count: true });
  const relayerSpent = relayerBalanceBefore - (await provider.getBalance(deployer.address));
  const per = Math.max(1, done);
  await (await usdc.mint(payer.address, AMOUNT * BigInt(N))).wait();
  const baseline = await rawRenewals(provider, { perms, subscriptions, relayer: deployer });
  return {
    subscriptions: N,
    anvil: "automine (a block per transaction)",
    runnerIntervalMs: 100,
    renewed: done,
    activeInPeriod1: inPeriod1,
    failed: pulls.find((x) => x.status === "FAILED")?._count ?? 0,
    notRenewed: N - done,
    timedOut,
    seconds: round(seconds, 1),
    secondsToFirstRenewal: firstRenewalSeconds === null ? null : round(firstRenewalSeconds, 1),
    renewalsPerMinute: Math.round((done / seconds) * 60),
    rpcCalls: calls,
    rpcCallsPerRenewal: round(calls / per, 2),
    rpcCallsPerRenewalByMethod: Object.fromEntries(
      Object.entries(byMethod)
        .sort((a, b) => b[1] - a[1])
        .map(([m, n]) => [m, round(n / per, 3)]),
    ),
    httpRequestsPerRenewal: round(httpRequests / per, 2),
    pullsByStatus: Object.fromEntries(pulls.map((x) => [x.status, x._count])),
    pullTransactions: pullTxs.length,
    pullTransactionsByStatus: pullTxs.reduce((o, t) => ((o[t.status] = (o[t.status] ?? 0) + 1), o), {}),
    pullTransactionsReverted: reverted,
    feeBumps: pullTxs.reduce((s, t) => s + t.bumps, 0),
    otherRelayerTransactions: Object.fromEntries(otherTxs.map((x) => [x.kind, x._count])),
    invoicesByStatus: Object.fromEntries(invoices.map((x) => [x.status, x._count])),
    relayerGasPerRenewal: Math.round(Number(gasUsed) / per),
    relayerWeiPerRenewal: (relayerSpent / BigInt(per)).toString(),
    baseline,
    ratio: round(done / seconds / (baseline.renewals / baseline.seconds), 3),
  };
}

/**
 * The baseline: the same N pulls, one period later, with the runner stopped, signed and sent by the
 * relayer in a plain loop (fees read once, fixed gas limit, no database, no simulation) straight to
 * anvil, then every receipt read: what the node itself allows.
 */
async function rawRenewals(provider, { perms, subscriptions, relayer }) {
  await provider.send("evm_increaseTime", [DAY]);
  await provider.send("evm_mine", []);
  const fees = await provider.getFeeData();
  let nonce = await provider.getTransactionCount(relayer.address, "pending");
  const t0 = Date.now();
  const hashes = [];
  for (const { p } of perms) {
    const raw = await relayer.signTransaction({
      to: subscriptions,
      data: pullCalldata(p, AMOUNT),
      nonce: nonce++,
      gasLimit: 200_000,
      maxFeePerGas: fees.maxFeePerGas,
      maxPriorityFeePerGas: fees.maxPriorityFeePerGas,
      chainId: CHAIN_ID,
      type: 2,
    });
    hashes.push(await provider.send("eth_sendRawTransaction", [raw]));
  }
  let gas = 0n;
  for (const hash of hashes) {
    // Automine mines each on arrival, but a busy anvil may answer before the receipt is readable.
    const receipt = await provider.waitForTransaction(hash, 1, 60_000);
    if (receipt?.status !== 1) throw new Error(`a baseline pull was ${receipt ? "reverted" : "not mined in 60 s"}: ${hash}`);
    gas += receipt.gasUsed;
  }
  const seconds = (Date.now() - t0) / 1000;
  log(`baseline: ${perms.length} pulls sent and mined in ${round(seconds, 1)} s`);
  return {
    renewals: perms.length,
    seconds: round(seconds, 1),
    renewalsPerMinute: Math.round((perms.length / seconds) * 60),
    gasPerRenewal: Math.round(Number(gas) / perms.length),
  };
}

let exitCode = 0;
const out = { bench: "subscriptions" };
try {
  await admin.connect();
  out.renewals = await bench();
  if (out.renewals.notRenewed > 0) exitCode = 1;
} catch (e) {
  exitCode = 1;
  out.error = e.message;
  log("failed:", e.stack ?? e);
} finally {
  await stops.runAll();
  await admin.end().catch(() => {});
}
out.workerLog = workerLog;
out.seconds = round((Date.now() - started) / 1000, 1);
console.log(JSON.stringify(out));
process.exit(exitCode);
