// `npm run build && node test/bench/workers.mjs`: settled charges per minute over four chains (four
// anvils with Circle's USDC and ChargeFactoryV2, a block every BLOCK_MS) with one worker and with two,
// in the same run, each on a throwaway PostgreSQL database. Each worker is a thread of its own (its
// own event loop and connections) running startJobs, as `dist/worker.js` does. Each phase creates
// and picks CHARGES_PER_CHAIN charges per chain, pays them all, then starts the workers and times
// until every charge is COMPLETED (its payout confirmed). Prints one JSON line (progress on stderr):
// per phase the charges, seconds, settled per minute and which chains each worker held, and the
// machine's CPUs and load average (two workers gain only where the machine has CPU to spare).
import { availableParallelism, loadavg } from "node:os";
import { isMainThread, parentPort, Worker, workerData } from "node:worker_threads";
import { JsonRpcProvider, Wallet, parseUnits } from "ethers";
import { startAnvil } from "../../dist/chain/anvil.js";
import { ChainSet } from "../../dist/chain/chains.js";
import { deployFactoryV2, placeMulticall3 } from "../../dist/chain/devnet.js";
import { circleUsdc, deployCircleUsdc } from "../../dist/chain/usdc.js";
import { openDatabase } from "../../dist/db/client.js";
import { migrate } from "../../dist/db/migrate.js";
import { selectChain } from "../../dist/domain/chain-selection.js";
import { createCharge } from "../../dist/domain/charges/create.js";
import { createMerchant } from "../../dist/domain/merchants.js";
import { startJobs } from "../../dist/jobs/index.js";
import { ProcessMetrics } from "../../dist/lib/process-metrics.js";
import { benchChain, benchClock, cleanups, countingLogger, round } from "./kit.mjs";
import { throwawayDatabase } from "./throwaway-db.mjs";

const CHAIN_IDS = [31337, 84532, 11155111, 11155420];
const CHARGES_PER_CHAIN = Number(process.env.BENCH_CHARGES_PER_CHAIN ?? 100);
const BLOCK_MS = 500;
const POLL_MS = 250;
// Anvil's well-known development keys (public test mnemonic).
const KEYS = {
  relayer: "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80", // account 0, also the deployer
  feeRecipient: "0x5de4111afa1a4b94908f83103eb1f1706367c2e68ca870fc3fb9a804cdab365a", // account 2
  payer: "0x7c852118294e51e653712a81e05800f419141751be58f605c371e15141b007a6", // account 3
  usdcIssuer: "0xdbda1821b80551c9d65939329250298aa3472ba22feea921c0cf5d620ea67b97", // account 8
  usdcAdmin: "0x2a871d0798f97d79848a013d4936a73bf4cc922c825d33c1cf7073dff6d409c6", // account 9
};
const SETTINGS = {
  amount: { min: 10_000n, max: 1_000_000_000_000n },
  paymentBaseUrl: "http://localhost/pay",
  partialExtensionMinutes: 15,
  payoutMinAmount: 10_000n,
};
const AMOUNT = "1.00";

/** A worker thread: startJobs on its own connections until told to stop; answers which chains it held. */
async function workerThread({ url, chains }) {
  const { logger } = countingLogger();
  const db = await openDatabase({ url, applicationName: "bench-worker" });
  const metrics = new ProcessMetrics();
  const jobs = startJobs({
    config: {
      expirySweepIntervalMs: 5000,
      chainPollIntervalMs: POLL_MS,
      relayerBumpAfterMs: 60_000,
      reconcileIntervalMs: 3_600_000,
      relayerGasBudgetPerMerchant: 10n ** 18n,
      email: { smtpUrl: undefined, from: "no-reply@bench.example", alertTo: undefined },
    },
    db,
    chains: new ChainSet(chains.map((c) => benchChain({ ...c, confirmations: 1 }))),
    logger,
    settings: { ...SETTINGS },
    metrics,
  });
  parentPort.on("message", async () => {
    const held = [...(await metrics.registry.metrics()).matchAll(/^stablegate_chain_lock_held\{chain_id="(\d+)",worker="[^"]+"\} 1$/gm)].map((m) =>
      Number(m[1]),
    );
    await jobs.stop();
    await db.close();
    parentPort.postMessage({ held });
  });
  parentPort.postMessage("started");
}

if (!isMainThread) {
  await workerThread(workerData);
} else {
  const { log, waitFor } = benchClock("workers-bench", { everyMs: 200 });
  const stops = cleanups(log);
  const feeRecipient = new Wallet(KEYS.feeRecipient).address;
  try {
    log(`four anvils, ${CHARGES_PER_CHAIN} charges per chain per phase`);
    const chains = await Promise.all(CHAIN_IDS.map((chainId) => startChain(chainId)));
    const producer = setInterval(() => chains.forEach((c) => void c.provider.send("evm_mine", []).catch(() => {})), BLOCK_MS);
    stops.push(["block producer", () => clearInterval(producer)]);
    const phases = {};
    for (const workers of [1, 2]) phases[`${workers}_worker${workers > 1 ? "s" : ""}`] = await phase(chains, workers);
    console.log(
      JSON.stringify({
        bench: "workers",
        chains: CHAIN_IDS.length,
        chargesPerChain: CHARGES_PER_CHAIN,
        blockMs: BLOCK_MS,
        pollMs: POLL_MS,
        cpus: availableParallelism(),
        loadAverage: round(loadavg()[0]),
        ...phases,
      }),
    );
  } finally {
    await stops.runAll();
  }

  /** An anvil standing in for `chainId`, with Circle's USDC, ChargeFactoryV2 and Multicall3. */
  async function startChain(chainId) {
    const anvil = await startAnvil({ chainId });
    stops.push([`anvil ${chainId}`, () => anvil.stop()]);
    const provider = new JsonRpcProvider(anvil.url, chainId, { staticNetwork: true, cacheTimeout: -1 });
    stops.push([`provider ${chainId}`, () => provider.destroy()]);
    const wallet = (k) => new Wallet(k, provider);
    const usdc = await deployCircleUsdc({ admin: wallet(KEYS.usdcAdmin), issuer: wallet(KEYS.usdcIssuer) });
    const factory = await deployFactoryV2(wallet(KEYS.relayer), feeRecipient);
    await placeMulticall3(provider);
    log(`chain ${chainId} ready`);
    return { chainId, provider, usdc, factory, rpcUrl: anvil.url };
  }

  /** One phase: a fresh database, charges picked and paid on every chain, then `workers` workers until all are COMPLETED. */
  async function phase(chains, workers) {
    const throwaway = await throwawayDatabase("workers");
    const db = await openDatabase({ url: throwaway.url });
    try {
      await migrate(db);
      const { merchant } = await createMerchant(db.prisma, { name: "Bench Shop", testWallet: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8" }, { feeBps: 100 });
      const set = new ChainSet(chains.map((c) => benchChain({ ...c, feeRecipient, relayerKey: KEYS.relayer })));
      const settings = { ...SETTINGS, factory: set.factory() };
      await Promise.all(
        chains.map(async (c) => {
          const clones = [];
          for (let i = 0; i < CHARGES_PER_CHAIN; i++) {
            const charge = await createCharge(
              db.prisma,
              { merchantId: merchant.id, livemode: false },
              { orderId: `${c.chainId}-${workers}-${i}`, amount: AMOUNT, expiresInMinutes: 120 },
              settings,
            );
            clones.push((await selectChain(db.prisma, set, SETTINGS, charge.id, { chainId: c.chainId })).cloneAddress);
          }
          await pay(c, clones);
        }),
      );
      log(`${workers} worker(s): ${chains.length * CHARGES_PER_CHAIN} charges paid; starting`);
      const started = Date.now();
      const threads = await Promise.all(
        Array.from({ length: workers }, () =>
          startThread({
            url: throwaway.url,
            chains: chains.map((c) => ({ chainId: c.chainId, rpcUrl: c.rpcUrl, factory: c.factory, usdc: c.usdc, feeRecipient, relayerKey: KEYS.relayer })),
          }),
        ),
      );
      const total = chains.length * CHARGES_PER_CHAIN;
      await waitFor("every charge completed", async () => (await db.prisma.charge.count({ where: { status: "COMPLETED" } })) === total, { timeoutMs: 240_000 });
      const seconds = (Date.now() - started) / 1000;
      const held = await Promise.all(threads.map((t) => t.stop()));
      log(`${workers} worker(s): ${total} settled in ${round(seconds)} s`);
      return { charges: total, seconds: round(seconds), settledPerMinute: round((total / seconds) * 60, 0), chainsHeld: held };
    } finally {
      await db.close();
      await throwaway.drop();
    }
  }

  /** Mints to the payer and sends AMOUNT to each clone, with explicit nonces. */
  async function pay(c, clones) {
    const issuer = new Wallet(KEYS.usdcIssuer, c.provider);
    const payer = new Wallet(KEYS.payer, c.provider);
    const amount = parseUnits(AMOUNT, 6);
    await (await circleUsdc(c.usdc, issuer).getFunction("mint")(payer.address, amount * BigInt(clones.length))).wait();
    const token = circleUsdc(c.usdc, payer);
    let nonce = await c.provider.getTransactionCount(payer.address, "pending");
    const sent = [];
    for (const clone of clones) sent.push(await token.getFunction("transfer")(clone, amount, { nonce: nonce++ }));
    await Promise.all(sent.map((tx) => tx.wait()));
  }

  /** A worker thread running startJobs; `stop()` answers the chains it held just before stopping. */
  function startThread(data) {
    const thread = new Worker(new URL(import.meta.url), { workerData: data });
    stops.push(["worker thread", () => thread.terminate()]);
    return new Promise((resolve, reject) => {
      thread.once("error", reject);
      thread.once("message", () =>
        resolve({
          stop: () =>
            new Promise((done) => {
              thread.once("message", (m) => done(m.held.sort((a, b) => a - b)));
              thread.postMessage("stop");
            }),
        }),
      );
    });
  }
}
