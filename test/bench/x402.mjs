// `npm run build && node test/bench/x402.mjs`: x402 settlements through the facilitator
// (POST /x402/settle) on anvil with Circle's USDC, automine off and a block every second (as the
// issue asks: a real chain's pace), on a throwaway PostgreSQL database. Prints one JSON line.
//
// N payers (BENCH_X402_PAYMENTS, 200) each sign one EIP-3009 authorization of 0.01 USDC to the
// merchant's x402 address; C clients (BENCH_X402_CLIENTS, 20) hand them to settle, each answer
// waiting until its transaction is in a block. Measured: settled payments a second, settle latency
// p50/p99 (against the 1 s block time), relayer gas per settled payment.
// Baseline, in the same run: the same number of authorizations sent straight to the token by a plain
// loop (C senders, each waiting for its receipt, as settle does), with no service: its rate, latency
// and the gas of a bare transferWithAuthorization. `ratio` is the service's rate over the baseline's;
// `gasRatio` the relayer's gas per payment over the bare call's (goal ≤ 1.1).
import { hexlify, JsonRpcProvider, NonceManager, parseUnits, randomBytes, Wallet } from "ethers";
import { pino } from "pino";
import { buildApp } from "../../dist/app.js";
import { startAnvil } from "../../dist/chain/anvil.js";
import { ChainSet } from "../../dist/chain/chains.js";
import { deployFactoryV2 } from "../../dist/chain/devnet.js";
import { circleUsdc, deployCircleUsdc } from "../../dist/chain/usdc.js";
import { loadConfig } from "../../dist/config.js";
import { openDatabase } from "../../dist/db/client.js";
import { migrate } from "../../dist/db/migrate.js";
import { createMerchant } from "../../dist/domain/merchants.js";
import { startChainRunner } from "../../dist/jobs/chain-runner.js";
import { TRANSFER_WITH_AUTHORIZATION_TYPES } from "../../dist/lib/eip3009.js";
import { buildServices } from "../../dist/services.js";
import { benchChain, benchClock, cleanups, percentile, round } from "./kit.mjs";
import { throwawayDatabase } from "./throwaway-db.mjs";

const N = Number(process.env.BENCH_X402_PAYMENTS ?? 200);
const C = Number(process.env.BENCH_X402_CLIENTS ?? 20);
const PRICE = parseUnits("0.01", 6);
// Anvil's well-known development keys (public test mnemonic).
const KEYS = {
  relayer: "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80",
  baseline: "0x7c852118294e51e653712a81e05800f419141751be58f605c371e15141b007a6",
  issuer: "0xdbda1821b80551c9d65939329250298aa3472ba22feea921c0cf5d620ea67b97",
  admin: "0x2a871d0798f97d79848a013d4936a73bf4cc922c825d33c1cf7073dff6d409c6",
};
const WALLET = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";

const { log } = benchClock("x402-bench");
const stops = cleanups(log);

/** Runs `work(i)` for i in [0, n) on `clients` concurrent loops; returns each one's latency (ms) and the wall time. */
async function loops(n, clients, work) {
  const latencies = [];
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: clients }, async () => {
      while (next < n) {
        const i = next++;
        const t = performance.now();
        await work(i);
        latencies.push(performance.now() - t);
      }
    }),
  );
  return { latencies, seconds: (performance.now() - started) / 1000 };
}

const anvil = await startAnvil();
stops.push(["anvil", () => anvil.stop()]);
const provider = new JsonRpcProvider(anvil.url, anvil.chainId, { staticNetwork: true, cacheTimeout: -1 });
provider.pollingInterval = 50;
stops.push(["provider", () => provider.destroy()]);
const relayerWallet = new Wallet(KEYS.relayer, provider);
const issuer = new NonceManager(new Wallet(KEYS.issuer, provider));
const usdc = circleUsdc(await deployCircleUsdc({ admin: new Wallet(KEYS.admin, provider), issuer: new Wallet(KEYS.issuer, provider) }), issuer);
const token = await usdc.getAddress();
const feeRecipient = Wallet.createRandom().address;
const factory = await deployFactoryV2(relayerWallet, feeRecipient);
const chain = benchChain({ chainId: anvil.chainId, rpcUrl: anvil.url, factory, feeRecipient, relayerKey: KEYS.relayer, usdc: token });
const domain = { name: await usdc.getFunction("name")(), version: await usdc.getFunction("version")(), chainId: anvil.chainId, verifyingContract: token };

// Payers for both runs, funded while anvil still automines; the baseline pays one address that
// already holds USDC, as the x402 address does after its first payment (a first balance costs more).
const payers = Array.from({ length: 2 * N }, () => Wallet.createRandom());
const sink = Wallet.createRandom().address;
await Promise.all([...payers.map((p) => p.address), sink].map((to) => usdc.mint(to, PRICE).then((tx) => tx.wait())));
await provider.send("evm_setAutomine", [false]);
await provider.send("evm_setIntervalMining", [1]);
log("anvil: a block every second");

/** `payer`'s signed authorization of PRICE to `to`. */
async function authorization(payer, to) {
  const message = {
    from: payer.address,
    to,
    value: PRICE.toString(),
    validAfter: "0",
    validBefore: String(Math.floor(Date.now() / 1000) + 600),
    nonce: hexlify(randomBytes(32)),
  };
  return { message, signature: await payer.signTypedData(domain, TRANSFER_WITH_AUTHORIZATION_TYPES, message) };
}

// The service: API and worker in one process, on a throwaway database.
const database = await throwawayDatabase("x402");
stops.push(["database", () => database.drop()]);
const db = await openDatabase({ url: database.url });
stops.push(["pool", () => db.close()]);
await migrate(db);
const { apiKeys } = await createMerchant(db.prisma, { name: "Bench API", testWallet: WALLET }, { feeBps: 100 });
const key = apiKeys.test.secret;
const config = loadConfig({
  NODE_ENV: "test",
  LOG_LEVEL: "silent",
  PORT: "0",
  RATE_LIMIT_X402: "1000000",
  RATE_LIMIT_READ: "1000000",
  RELAYER_GAS_BUDGET_PER_MERCHANT: "1000000000",
  X402_MIN_AMOUNT: "0.01",
});
const services = await buildServices(config, { db, chains: new ChainSet([chain]) });
const app = buildApp(services);
const url = await app.start(0);
stops.push(["app", () => app.stop()]);
const runner = startChainRunner(db, chain, pino({ level: "silent" }), { intervalMs: 100, settings: services.settings, bumpAfterMs: 60_000 });
stops.push(["runner", () => runner.stop()]);

const auth = { authorization: `Bearer ${key}`, "content-type": "application/json" };
const x402 = await (await fetch(`${url}/v1/x402`, { headers: auth })).json();
const requirements = {
  scheme: "exact",
  network: `eip155:${anvil.chainId}`,
  amount: PRICE.toString(),
  asset: token,
  payTo: x402.payTo,
  maxTimeoutSeconds: 600,
  extra: x402.accepts[0].extra,
};
const signed = await Promise.all(payers.slice(0, N).map((p) => authorization(p, x402.payTo)));
let failures = 0;
const service = await loops(N, C, async (i) => {
  const { message, signature } = signed[i];
  const body = {
    x402Version: 2,
    paymentPayload: { x402Version: 2, accepted: requirements, payload: { signature, authorization: message } },
    paymentRequirements: requirements,
  };
  const answer = await (await fetch(`${url}/x402/settle`, { method: "POST", headers: auth, body: JSON.stringify(body) })).json();
  if (!answer.success) {
    failures++;
    if (failures <= 3) log(`settle failed: ${JSON.stringify(answer)}`);
  }
});
const gas = await db.prisma.x402Payment.aggregate({ where: { status: "SETTLED" }, _sum: { gasUsed: true }, _count: true });
log(`service: ${N} settled in ${round(service.seconds)} s`);
await runner.stop();

// Baseline: the same authorizations sent straight to the token, C senders each waiting for its receipt.
const baselineWallet = new NonceManager(new Wallet(KEYS.baseline, provider));
const bare = await Promise.all(payers.slice(N).map((p) => authorization(p, sink)));
const gasOfBare = [];
const baseline = await loops(N, C, async (i) => {
  const { message, signature } = bare[i];
  const tx = await usdc.connect(baselineWallet).getFunction("transferWithAuthorization(address,address,uint256,uint256,uint256,bytes32,bytes)")(
    message.from,
    message.to,
    message.value,
    message.validAfter,
    message.validBefore,
    message.nonce,
    signature,
  );
  gasOfBare.push((await tx.wait()).gasUsed);
});
const bareGas = gasOfBare.reduce((a, b) => a + b, 0n) / BigInt(gasOfBare.length);
const relayerGas = gas._count > 0 ? Number(gas._sum.gasUsed) / gas._count : 0;

console.log(
  JSON.stringify({
    bench: "x402",
    payments: N,
    clients: C,
    blockTimeSeconds: 1,
    settled: gas._count,
    failures,
    settledPerSecond: round(N / service.seconds),
    settleP50Ms: percentile(service.latencies, 50),
    settleP99Ms: percentile(service.latencies, 99),
    baseline: { perSecond: round(N / baseline.seconds), p50Ms: percentile(baseline.latencies, 50), p99Ms: percentile(baseline.latencies, 99) },
    ratio: round(baseline.seconds / service.seconds),
    relayerGasPerPayment: Math.round(relayerGas),
    bareTransferWithAuthorizationGas: Number(bareGas),
    gasRatio: round(relayerGas / Number(bareGas), 3),
  }),
);
await stops.runAll();
