// `npm run build && node test/bench/reconcile.mjs`: one reconciliation pass of the ledger with the chain
// (jobs/reconcile.ts `reconcileChain`, read-only, as `stablegate reconcile` and the worker run it) over
// 10,000 charge addresses in scope on anvil, behind a counting JSON-RPC proxy, on a throwaway
// PostgreSQL database. Prints one JSON line (progress on stderr).
//
// The state is made by the service's own code, not written by hand: 10,000 version 2 charges picked on
// the chain (inserted in bulk, with the addresses ChargeFactoryV2 gives them, as already checked once
// since their pick), of which
//   - 7,000 open and unpaid (counterfactual clones, nothing on chain),
//   - 2,000 open and partly paid (0.40 of 1.00 USDC: the clone holds it, nothing is paid out),
//   - 1,000 paid in full, paid out by the worker (deployed by their payout, empty, COMPLETED),
// the payments minted straight to the addresses by USDC's issuer, then the chain runner (indexer,
// confirmations, ledger, payouts) run until it has settled everything and stopped. The pass is then
// run with Multicall3 (the registry's setting for 31337: USDC and native balances, 500 reads to an
// eth_call) and, as the baseline, without (one eth_call or eth_getBalance per read, batched over
// HTTP by the client). Goal: differences 0. A control follows: 3 payments the indexer never read
// (the chain's confirmed block moved past them by hand) must show as exactly 3 differences both ways.
import { JsonRpcProvider, Wallet, parseUnits, toQuantity } from "ethers";
import pg from "pg";
import { startAnvil } from "../../dist/chain/anvil.js";
import { predictCloneV2 } from "../../dist/chain/clones.js";
import { deployFactoryV2, placeMulticall3 } from "../../dist/chain/devnet.js";
import { ChainRpc } from "../../dist/chain/rpc.js";
import { circleUsdc, deployCircleUsdc, usdcInterface } from "../../dist/chain/usdc.js";
import { openDatabase } from "../../dist/db/client.js";
import { migrate } from "../../dist/db/migrate.js";
import { newId } from "../../dist/domain/ids.js";
import { createMerchant } from "../../dist/domain/merchants.js";
import { reconcileInputs } from "../../dist/domain/reconcile.js";
import { startChainRunner } from "../../dist/jobs/chain-runner.js";
import { reconcileChain, recentWindow } from "../../dist/jobs/reconcile.js";
import { startRpcProxy } from "../helpers/rpc-proxy.mjs";
import { benchChain, benchClock, cleanups, countingLogger, round, sleep } from "./kit.mjs";
import { throwawayDatabase } from "./throwaway-db.mjs";

const KEYS = {
  relayer: "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80", // account 0, also the deployer
  feeRecipient: "0x5de4111afa1a4b94908f83103eb1f1706367c2e68ca870fc3fb9a804cdab365a", // account 2
  usdcIssuer: "0xdbda1821b80551c9d65939329250298aa3472ba22feea921c0cf5d620ea67b97", // account 8 (unlocked on anvil)
  usdcAdmin: "0x2a871d0798f97d79848a013d4936a73bf4cc922c825d33c1cf7073dff6d409c6", // account 9
};
const MERCHANT_WALLET = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";
const SETTINGS = { paymentBaseUrl: "http://localhost/pay", partialExtensionMinutes: 15, payoutMinAmount: 10_000n };
const FEE_BPS = 100;
const AMOUNT = 1_000_000n;
const PARTIAL = 400_000n;
const N = Number(process.env.BENCH_RECONCILE_CLONES ?? 10_000);
const MIX = { open: Math.round(N * 0.7), partlyPaid: Math.round(N * 0.2) };
MIX.paidOut = N - MIX.open - MIX.partlyPaid;

const { started, log, waitFor } = benchClock("reconcile-bench", { everyMs: 200 });

// ---- cleanup: everything started registers its stop, run in reverse order whatever happens --------
const stops = cleanups(log);
const cleanupAll = () => stops.runAll();

// ---- the worker's log: counted, warnings and errors echoed to stderr ------------------------------
const { logger, counts: workerLog } = countingLogger();

/** Sends JSON-RPC calls to `url` in batches of 200 (setup only: not through the counting proxy). */
async function rpcBatch(url, calls) {
  const out = [];
  for (let i = 0; i < calls.length; i += 200) {
    const body = calls.slice(i, i + 200).map(([method, params], j) => ({ jsonrpc: "2.0", id: i + j, method, params }));
    const res = await (await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) })).json();
    for (const r of res.sort((a, b) => a.id - b.id)) {
      if (r.error) throw new Error(`${body[0].method}: ${r.error.message}`);
      out.push(r.result);
    }
  }
  return out;
}

/** One reconciliation pass, counted at the proxy and by the service itself. */
async function pass(db, proxy, chain) {
  const rpc = new ChainRpc(chain.chainId, [proxy.url]);
  try {
    proxy.reset();
    const r = await reconcileChain(db.prisma, rpc, chain);
    return {
      checked: r.checked,
      transfersChecked: r.transfersChecked,
      differences: r.differences.length,
      skipped: r.skipped,
      requests: r.requests,
      rpcCalls: proxy.total(),
      rpcCallsByMethod: proxy.calls(),
      httpRequests: proxy.requests(),
      seconds: round(r.seconds, 2),
      findings: r.differences.slice(0, 3).map((d) => d.message),
    };
  } finally {
    rpc.destroy();
  }
}

async function main() {
  // ---- chain -------------------------------------------------------------------------------------
  const anvil = await startAnvil();
  stops.push([`anvil (${anvil.url})`, () => anvil.stop()]);
  const provider = new JsonRpcProvider(anvil.url, anvil.chainId, { staticNetwork: true, cacheTimeout: -1 });
  provider.pollingInterval = 20;
  stops.push(["provider", async () => provider.destroy()]);
  const deployer = new Wallet(KEYS.relayer, provider);
  const issuer = new Wallet(KEYS.usdcIssuer, provider);
  const feeRecipient = new Wallet(KEYS.feeRecipient).address;
  const usdc = circleUsdc(await deployCircleUsdc({ admin: new Wallet(KEYS.usdcAdmin, provider), issuer }), issuer);
  const usdcAddress = await usdc.getAddress();
  const factory = await deployFactoryV2(deployer, feeRecipient);
  await placeMulticall3(provider);
  const proxy = await startRpcProxy(anvil.url);
  stops.push(["rpc proxy", () => proxy.close()]);
  const chain = benchChain({ chainId: anvil.chainId, rpcUrl: proxy.url, factory, feeRecipient, relayerKey: KEYS.relayer, usdc: usdcAddress });
  if (!chain.multicall3) throw new Error("the registry says chain 31337 has no Multicall3");

  // ---- database: 10,000 picked charges -------------------------------------------------------------
  const tdb = await throwawayDatabase("reconcile");
  stops.push(["throwaway database", () => tdb.drop()]);
  const db = await openDatabase({ url: tdb.url });
  stops.push(["database pool", () => db.close()]);
  await migrate(db);
  const { merchant } = await createMerchant(db.prisma, { name: "Bench Shop", testWallet: MERCHANT_WALLET }, { feeBps: FEE_BPS });
  let t = Date.now();
  const charges = Array.from({ length: N }, (_, i) => {
    const id = newId("chrg");
    const group = i < MIX.open ? "open" : i < MIX.open + MIX.partlyPaid ? "partlyPaid" : "paidOut";
    return { id, group, address: predictCloneV2({ factory, chargeId: id, wallet: MERCHANT_WALLET, feeBps: FEE_BPS }) };
  });
  const sql = new pg.Client({ connectionString: tdb.url });
  await sql.connect();
  stops.push(["sql client", () => sql.end()]);
  await sql.query(
    `INSERT INTO charges (id, merchant_id, livemode, order_id, amount, status, fee_bps, settlement_wallet, contract_version, deposit_address,
       chain_id, confirmations, clone_address, expires_at)
     SELECT c.id, $1, false, 'rec-' || c.n, $3, 'PENDING', $4, $2, 2, c.address, $5, 1, c.address, now() + interval '1 day'
     FROM unnest($6::text[], $7::text[]) WITH ORDINALITY AS c(id, address, n)`,
    [merchant.id, MERCHANT_WALLET, AMOUNT.toString(), FEE_BPS, anvil.chainId, charges.map((c) => c.id), charges.map((c) => c.address)],
  );
  // Checked once since their pick (the worker's first check), as in the steady state.
  await sql.query(
    `INSERT INTO clones (charge_id, chain_id, address, version, held, deployed_at, balance_checked_at)
     SELECT c.id, $1, c.address, 2, 0, NULL, now() FROM unnest($2::text[], $3::text[]) AS c(id, address)`,
    [anvil.chainId, charges.map((c) => c.id), charges.map((c) => c.address)],
  );
  await sql.query("ANALYZE charges; ANALYZE clones");
  const insertSeconds = (Date.now() - t) / 1000;
  log(`${N} picked charges inserted in ${insertSeconds.toFixed(1)} s (${JSON.stringify(MIX)})`);

  // ---- the payments, minted straight to the addresses, many to a block ------------------------------
  t = Date.now();
  const paid = charges.filter((c) => c.group !== "open");
  await provider.send("evm_setAutomine", [false]);
  let issuerNonce = await provider.getTransactionCount(issuer.address, "pending");
  await rpcBatch(
    anvil.url,
    paid.map((c) => [
      "eth_sendTransaction",
      [
        {
          from: issuer.address,
          nonce: toQuantity(issuerNonce++),
          to: usdcAddress,
          gas: toQuantity(150_000),
          data: usdc.interface.encodeFunctionData("mint", [c.address, c.group === "partlyPaid" ? PARTIAL : AMOUNT]),
        },
      ],
    ]),
  );
  const firstPaymentBlock = (await provider.getBlockNumber()) + 1;
  await waitFor(
    "the payments mined",
    async () => {
      await provider.send("anvil_mine", ["0x1"]);
      return Number((await provider.send("txpool_status", [])).pending) === 0;
    },
    { everyMs: 0, timeoutMs: 60_000 },
  );
  const paymentBlocks = (await provider.getBlockNumber()) - firstPaymentBlock + 1;
  await provider.send("evm_setAutomine", [true]);
  const sample = await Promise.all(paid.slice(0, 5).map((c) => usdc.balanceOf(c.address)));
  if (sample.some((b) => b === 0n)) throw new Error("a payment was not minted");
  log(`${paid.length} payments mined in ${paymentBlocks} blocks in ${((Date.now() - t) / 1000).toFixed(1)} s`);

  // ---- the chain runner settles everything, then stops ----------------------------------------------
  t = Date.now();
  const runner = startChainRunner(db, chain, logger, { intervalMs: 50, settings: SETTINGS, bumpAfterMs: 60_000, reconcileMs: 3_600_000 });
  let stopped = false;
  const stop = async () => {
    if (!stopped) await runner.stop();
    stopped = true;
  };
  stops.push(["chain runner", stop]);
  let lastLog = 0;
  await waitFor(
    "the runner to settle every payment",
    async () => {
      const [row] = (
        await sql.query(`SELECT
          (SELECT count(*) FROM charges WHERE status = 'COMPLETED')::int AS completed,
          (SELECT count(*) FROM clones WHERE held > 0)::int AS holding,
          (SELECT count(*) FROM chain_transfers WHERE status = 'SEEN')::int AS seen,
          (SELECT count(*) FROM relayer_transactions WHERE status <> 'CONFIRMED')::int AS open_txs,
          (SELECT count(*) FROM balance_transactions)::int AS ledger,
          (SELECT confirmed_block FROM chain_cursors)::int AS confirmed`)
      ).rows;
      const head = await provider.getBlockNumber();
      if (Date.now() - lastLog > 10_000) {
        lastLog = Date.now();
        log(`runner: ${JSON.stringify({ ...row, head })}`);
      }
      return row.completed === MIX.paidOut && row.holding === MIX.partlyPaid && row.seen === 0 && row.open_txs === 0 && row.confirmed === head && row;
    },
    { timeoutMs: 200_000, everyMs: 250 },
  );
  await stop();
  const runnerSeconds = (Date.now() - t) / 1000;
  const payoutTxs = await db.prisma.relayerTransaction.count({ where: { kind: "FLUSH" } });
  const ledgerRows = await db.prisma.balanceTransaction.count();
  log(`runner settled everything in ${runnerSeconds.toFixed(1)} s (${payoutTxs} payout transactions, ${ledgerRows} ledger rows); stopped`);

  // ---- what the pass compares, checked independently: the ledger's totals against the chain ---------
  t = performance.now();
  const inputs = await reconcileInputs(db.prisma, chain, recentWindow(chain));
  // The database side of a pass: the addresses in scope with their ledger balances, and the recent transfers.
  const scopeQuerySeconds = (performance.now() - t) / 1000;
  const block = toQuantity(inputs.block);
  const onChain = (
    await rpcBatch(
      anvil.url,
      inputs.targets.map((x) => ["eth_call", [{ to: usdcAddress, data: usdcInterface.encodeFunctionData("balanceOf", [x.address]) }, block]]),
    )
  ).map(BigInt);
  const ledgerTotal = inputs.targets.reduce((s, x) => s + x.expected, 0n);
  const chainTotal = onChain.reduce((s, b) => s + b, 0n);
  const independent = {
    targets: inputs.targets.length,
    holdingByLedger: inputs.targets.filter((x) => x.expected > 0n).length,
    holdingOnChain: onChain.filter((b) => b > 0n).length,
    ledgerTotal: ledgerTotal.toString(),
    chainTotal: chainTotal.toString(),
    recentTransfers: inputs.recent.length,
  };
  if (
    independent.targets !== N ||
    ledgerTotal !== chainTotal ||
    independent.holdingByLedger !== MIX.partlyPaid ||
    independent.holdingOnChain !== MIX.partlyPaid
  ) {
    throw new Error(`the state is not what the bench set up: ${JSON.stringify(independent)}`);
  }
  const deployed = (
    await rpcBatch(
      anvil.url,
      charges.filter((c) => c.group !== "open").map((c) => ["eth_getCode", [c.address, "latest"]]),
    )
  ).filter((code) => code !== "0x").length;

  // ---- the passes ----------------------------------------------------------------------------------
  log("reconciling with Multicall3");
  const multicall3 = await pass(db, proxy, chain);
  log(`with Multicall3: ${JSON.stringify(multicall3)}`);
  log("reconciling without Multicall3 (the baseline)");
  const withoutMulticall3 = await pass(db, proxy, { ...chain, multicall3: false });
  log(`without Multicall3: ${JSON.stringify(withoutMulticall3)}`);
  const multicall3Again = await pass(db, proxy, chain);

  // ---- control: 3 payments the indexer never read --------------------------------------------------
  // The confirmed block is moved past them by hand (its real hash stored), as if the node had answered
  // the indexer's eth_getLogs without them: the pass must find exactly these 3.
  const planted = charges.filter((c) => c.group === "open").slice(0, 3);
  await provider.send("evm_setAutomine", [false]);
  await rpcBatch(
    anvil.url,
    planted.map((c) => [
      "eth_sendTransaction",
      [
        {
          from: issuer.address,
          nonce: toQuantity(issuerNonce++),
          to: usdcAddress,
          gas: toQuantity(150_000),
          data: usdc.interface.encodeFunctionData("mint", [c.address, 10_000n]),
        },
      ],
    ]),
  );
  await provider.send("anvil_mine", ["0x1"]);
  await provider.send("evm_setAutomine", [true]);
  const head = await provider.getBlock("latest");
  await sql.query(`INSERT INTO chain_blocks (chain_id, number, hash, parent_hash, timestamp) VALUES ($1, $2, $3, $4, to_timestamp($5))`, [
    anvil.chainId,
    head.number,
    head.hash,
    head.parentHash,
    head.timestamp,
  ]);
  await sql.query(`UPDATE chain_cursors SET confirmed_block = $2, confirmed_time = to_timestamp($3) WHERE chain_id = $1`, [
    anvil.chainId,
    head.number,
    head.timestamp,
  ]);
  const controlWith = await pass(db, proxy, chain);
  const controlWithout = await pass(db, proxy, { ...chain, multicall3: false });
  const control = {
    planted: planted.length,
    found: { multicall3: controlWith.differences, withoutMulticall3: controlWithout.differences },
    example: controlWith.findings[0] ?? null,
  };
  if (controlWith.differences !== planted.length || controlWithout.differences !== planted.length) {
    throw new Error(`the control found ${controlWith.differences} and ${controlWithout.differences} differences, not ${planted.length}`);
  }

  delete multicall3.findings;
  delete withoutMulticall3.findings;
  return {
    clones: N,
    mix: MIX,
    state: {
      paymentBlocks,
      payoutTransactions: payoutTxs,
      ledgerRows,
      clonesDeployed: deployed,
      insertSeconds: round(insertSeconds, 1),
      runnerSeconds: round(runnerSeconds, 1),
      scopeQuerySeconds: round(scopeQuerySeconds, 2),
      independent,
    },
    multicall3: { ...multicall3, secondsAgain: multicall3Again.seconds, rpcCallsAgain: multicall3Again.rpcCalls },
    withoutMulticall3,
    ratio: {
      rpcCalls: round(withoutMulticall3.rpcCalls / multicall3.rpcCalls, 1),
      httpRequests: round(withoutMulticall3.httpRequests / multicall3.httpRequests, 1),
      seconds: round(withoutMulticall3.seconds / multicall3.seconds, 1),
    },
    control,
    goal: { differences: 0 },
  };
}

// ---- main -----------------------------------------------------------------------------------------
let exitCode = 0;
let out = { bench: "reconcile" };
try {
  out = { ...out, ...(await main()) };
} catch (e) {
  exitCode = 1;
  out.error = e.message;
  log("failed:", e.stack ?? e);
} finally {
  await cleanupAll();
}
out.workerLog = workerLog;
out.seconds = round((Date.now() - started) / 1000, 1);
console.log(JSON.stringify(out));
process.exit(exitCode);
