// Sweeps on anvil with the real service, worker and CLI (.docs/payments.md "Chains and the payment contract"); a clone pays
// what it holds to the merchant less the charge's fee, so each sweep below is checked to the wei:
// - ETH sent to a charge's address before its clone exists is swept by the dashboard's `sweepCharge`:
//   the payout deploys the clone, the merchant gets the rest after the fee, the relayer only pays gas.
// - another ERC-20 at a paid-out clone is in strayAssets after a reconcile pass, swept by
//   `stablegate sweep`, and gone after the next pass; its only transfers are to merchant and fee recipient.
// - USDC, a bad token, an unknown charge (or another merchant's) are refused over GraphQL and by the
//   CLI, and change nothing: no sweep, no relayer transaction.
// - an RPC failure while a sweep is simulated fails the worker's round, not the sweep, which is sent
//   once the node answers.
// - a merchant whose relayer gas is spent has its waiting sweeps refused (and counted) without a call
//   to the node, SWEEPS_PER_ROUND a round at most.
// - on a node that keeps only recent state, a sweep's handlers read the clone's balance now rather
//   than throw (which would stop the tracking of every later relayer transaction) or take the node's
//   refusal for the token's.
// - a sweep's gas counts toward the UTC day its transaction was sent, not the day it was asked.
// - the worker checks the budget again in the transaction that claims the sweep: gas spent while it
//   simulated and signed (a payment without gas) is seen, the sweep FAILED unsent and the refusal counted.
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Contract, ContractFactory, getAddress, hexlify, id as keccakId, makeError, parseEther, parseUnits, type Provider } from "ethers";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type { App } from "../../src/app.js";
import { MockUSDCArtifact } from "../../src/chain/artifacts.js";
import { ChainSet, type EnabledChain } from "../../src/chain/chains.js";
import { Relayer } from "../../src/chain/relayer.js";
import { RpcError } from "../../src/chain/rpc.js";
import { loadConfig } from "../../src/config.js";
import { type Database, openDatabase } from "../../src/db/client.js";
import { migrate } from "../../src/db/migrate.js";
import { createMerchant } from "../../src/domain/merchants.js";
import { relayerGasToday } from "../../src/domain/relayer-budget.js";
import { getSweep, sweepResource } from "../../src/domain/sweeps.js";
import { OPERATOR } from "../../src/domain/confirmation.js";
import { createUser } from "../../src/domain/users.js";
import { type ChainRunner, startChainRunner } from "../../src/jobs/chain-runner.js";
import type { OpenTx } from "../../src/jobs/relayer-txs.js";
import { runSweeps, SWEEPS_PER_ROUND, sweepHandlers } from "../../src/jobs/sweeps.js";
import { ANVIL_KEYS, runnerPassed, startTestChain, type TestChain, waitFor } from "../helpers/chain.js";
import { buildTestApp, freshDatabase, POLLING, SETTINGS, UNLIMITED_ADDRESS, WALLET } from "../helpers/harness.js";

const FEE_BPS = 100n;
const PASSWORD = "correct horse battery";
/** The CLI needs a database it can open too: on the embedded one, a directory (never in memory). */
const EMBEDDED = !process.env.DATABASE_URL;
const logger = pino({ level: process.env.TEST_LOG ?? "silent" });
const usdc = (s: string) => parseUnits(s, 6);
const feeOf = (amount: bigint) => (amount * FEE_BPS) / 10_000n;

let chain: TestChain;
let devnet: EnabledChain;
/** "Another ERC-20": a MockUSDC the chain watches (CHAIN_<id>_WATCH_TOKENS). */
let stray: Contract;
let db: Database;
let dataDir: string | undefined;
let dbUrl: string | undefined;
let dropDb: (() => Promise<void>) | undefined;
let service: { app: App; url: string; runner: ChainRunner } | null = null;
let testKey: string;
let browser: { cookie: string; csrf: string };

beforeAll(async () => {
  const opened = (async () => {
    if (!EMBEDDED) {
      const fresh = await freshDatabase();
      [db, dbUrl, dropDb] = [fresh.db, fresh.url, fresh.drop];
      return;
    }
    dataDir = mkdtempSync(join(tmpdir(), "sg-sweeps-"));
    db = await openDatabase({ dataDir, poolSize: 2 });
    await migrate(db);
  })();
  chain = await startTestChain();
  // Deployed from an account of its own: the relayer's nonces are the chain runner's.
  stray = (await new ContractFactory(MockUSDCArtifact.abi, MockUSDCArtifact.bytecode, chain.wallet(6)).deploy()) as Contract;
  await stray.waitForDeployment();
  // One confirmation: a reconcile pass every 200 ms reads balances at the tip.
  devnet = { ...(await chain.enabled(1)), watchTokens: [await stray.getAddress()] };
  await opened;
  const merchant = await createMerchant(db.prisma, { name: "Sweep Shop", testWallet: WALLET, liveWallet: WALLET }, { feeBps: Number(FEE_BPS) });
  testKey = merchant.apiKeys.test.secret;
  // Random: on Redis the sign-in counters outlive the run.
  const email = `sweeps-${randomBytes(4).toString("hex")}@example.com`;
  await createUser(db.prisma, merchant.merchant.id, { email, password: PASSWORD }, OPERATOR);
  await startService();
  const signedIn = await call("POST", "/dashboard/session", { key: null, body: { email, password: PASSWORD } });
  expect(signedIn.status, JSON.stringify(signedIn.body)).toBe(201);
  browser = { cookie: signedIn.headers.get("set-cookie")!.split(";")[0]!, csrf: signedIn.body.csrfToken };
}, 60_000);
afterAll(async () => {
  await stopService();
  if (dropDb) await dropDb();
  else await db?.close();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  await chain?.stop();
});

async function startService(): Promise<void> {
  const config = loadConfig({ NODE_ENV: "test", LOG_LEVEL: "silent", REDIS_URL: process.env.REDIS_URL, PORT: "0", ...UNLIMITED_ADDRESS, ...POLLING });
  const app = await buildTestApp(config, { db, chains: new ChainSet([devnet]) });
  const url = await app.start(0);
  service = { app, url, runner: startRunner() };
}

const startRunner = () => startChainRunner(db, devnet, logger, { intervalMs: 50, settings: SETTINGS, bumpAfterMs: 60_000, reconcileMs: 200 });

async function stopService(): Promise<void> {
  await service?.runner.stop();
  await service?.app.stop();
  service = null;
}

/**
 * Runs operator commands as an operator can: beside the running service on PostgreSQL; on the
 * embedded database, which one process holds at a time, with the service stopped and started again.
 */
async function asOperator<T>(commands: () => Promise<T>): Promise<T> {
  if (!EMBEDDED) return commands();
  await stopService();
  await db.close();
  try {
    return await commands();
  } finally {
    db = await openDatabase({ dataDir: dataDir!, poolSize: 2 });
    await startService();
  }
}

/** `stablegate …` (the built CLI), configured for this chain and database as the service is. */
async function stablegate(...args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const env = {
    ...process.env,
    NODE_ENV: "test",
    LOG_LEVEL: "warn",
    DEVNET: "false",
    DATABASE_URL: dbUrl ?? "",
    DATA_DIR: dataDir ?? "",
    REDIS_URL: "",
    FEE_RECIPIENT: chain.feeRecipient,
    RELAYER_PRIVATE_KEY: ANVIL_KEYS[0],
    CHAIN_31337_RPC_URL: chain.anvil.url,
    CHAIN_31337_FACTORY: devnet.factory,
    CHAIN_31337_USDC: devnet.usdc,
    CHAIN_31337_CONFIRMATIONS: "1",
    CHAIN_31337_WATCH_TOKENS: devnet.watchTokens.join(","),
  };
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ["dist/cli/main.js", ...args], { env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

async function call(method: string, path: string, opts: { key?: string | null; body?: unknown; headers?: Record<string, string> } = {}) {
  const headers: Record<string, string> = { ...opts.headers };
  const key = opts.key === undefined ? testKey : opts.key;
  if (key !== null) headers["x-api-key"] = key;
  if (opts.body !== undefined) headers["content-type"] = "application/json";
  const res = await fetch(service!.url + path, { method, headers, body: opts.body === undefined ? undefined : JSON.stringify(opts.body) });
  const text = await res.text();
  let body: any = null;
  try {
    body = JSON.parse(text);
  } catch {}
  return { status: res.status, headers: res.headers, body };
}

/** GraphQL as the dashboard sends it: the session's cookie and CSRF token, no API key. */
async function dashboard(query: string, variables: Record<string, unknown>): Promise<{ data: any; errors?: any[] }> {
  return (await call("POST", "/graphql", { key: null, body: { query, variables }, headers: { cookie: browser.cookie, "x-csrf-token": browser.csrf } })).body;
}

const SWEEP_FIELDS = "id chargeId chainId token status txHash error createdAt";
const SWEEP_CHARGE = `mutation($id: ID!, $token: String!) { sweepCharge(id: $id, token: $token) { ${SWEEP_FIELDS} } }`;
const SWEEP = `query($id: ID!) { sweep(id: $id) { ${SWEEP_FIELDS} } }`;
const STRAYS = `query($id: ID!) { charge(id: $id) { strayAssets { chainId token amount } } }`;

let orders = 0;
/** A test charge with the devnet picked: its address is known, and has no code until a payout deploys it. */
async function pickedCharge(amount: string, key = testKey): Promise<{ id: string; clone: string }> {
  const created = await call("POST", "/v1/charges", { key, body: { orderId: `sweep-${++orders}`, amount } });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  const picked = await call("POST", `/v1/public/charges/${created.body.id}/chain`, { key: null, body: { chainId: devnet.chainId } });
  expect(picked.status, JSON.stringify(picked.body)).toBe(200);
  return { id: created.body.id, clone: picked.body.cloneAddress };
}

const strayAssetsOf = async (id: string) => (await call("GET", `/v1/charges/${id}`)).body.strayAssets as { chainId: number; token: string; amount: string }[];
const tokenBalance = async (holder: string) => (await stray.getFunction("balanceOf")(holder)) as bigint;
/** The balances of `balanceOf` at everyone a clone's money could reach, and the clone's own. */
async function holdings(balanceOf: (a: string) => Promise<bigint>, clone: string) {
  const [merchant, feeRecipient, relayer, factory, held] = await Promise.all(
    [WALLET, chain.feeRecipient, chain.deployer.address, devnet.factory, clone].map((a) => balanceOf(a)),
  );
  return { merchant: merchant!, feeRecipient: feeRecipient!, relayer: relayer!, factory: factory!, clone: held! };
}

describe("sweeps", () => {
  it("ETH sent before the clone exists: the dashboard's sweepCharge deploys it and pays it out; the merchant gets it less the fee, the relayer only pays gas", async () => {
    const { id, clone } = await pickedCharge("10");
    expect(await chain.provider.getCode(clone)).toBe("0x");
    const amount = parseEther("0.123456789");
    await (await chain.wallet(5).sendTransaction({ to: clone, value: amount })).wait();
    // The dashboard learns of it from the charge, once a reconcile pass has seen it.
    const seen = await waitFor("the ETH in strayAssets", async () => {
      const strays = (await dashboard(STRAYS, { id })).data.charge.strayAssets;
      return strays.length > 0 ? strays : undefined;
    });
    expect(seen).toEqual([{ chainId: devnet.chainId, token: "native", amount: amount.toString() }]);
    const before = await holdings((a) => chain.provider.getBalance(a), clone);
    expect(before.clone).toBe(amount);

    const asked = await dashboard(SWEEP_CHARGE, { id, token: "eth" });
    expect(asked.errors).toBeUndefined();
    const sweep = asked.data.sweepCharge;
    expect(sweep).toMatchObject({ chargeId: id, chainId: devnet.chainId, token: "native", status: "PENDING", txHash: null, error: null });
    const done = await waitFor("the sweep to end", async () => {
      const now = (await dashboard(SWEEP, { id: sweep.id })).data.sweep;
      return now.status === "DONE" || now.status === "FAILED" ? now : undefined;
    });
    expect(done).toMatchObject({ id: sweep.id, status: "DONE", error: null, txHash: expect.stringMatching(/^0x[0-9a-f]{64}$/) });
    const receipt = (await chain.provider.getTransactionReceipt(done.txHash))!;
    expect(receipt).toMatchObject({ status: 1, from: chain.deployer.address, to: devnet.factory });

    const after = await holdings((a) => chain.provider.getBalance(a), clone);
    expect(after.clone).toBe(0n);
    expect(after.merchant - before.merchant).toBe(amount - feeOf(amount));
    expect(after.feeRecipient - before.feeRecipient).toBe(feeOf(amount));
    // The relayer paid for the one transaction and received nothing; the factory kept nothing.
    expect(after.relayer - before.relayer).toBe(-receipt.fee);
    expect(after.factory).toBe(before.factory);
    expect(await chain.provider.getCode(clone)).not.toBe("0x");
    await waitFor("the ETH gone from strayAssets", async () => (await dashboard(STRAYS, { id })).data.charge.strayAssets.length === 0);
  });

  it("another ERC-20 at a paid-out clone: in strayAssets after a reconcile pass, swept by `stablegate sweep` to the merchant, gone after the next pass", async () => {
    const { id, clone } = await pickedCharge("5");
    await chain.pay(chain.wallet(3), clone, usdc("5"));
    await waitFor("the charge paid out", async () => {
      const c = (await call("GET", `/v1/charges/${id}`)).body;
      return c.status === "COMPLETED" && c.flushTxHash !== null;
    });
    expect(await chain.provider.getCode(clone)).not.toBe("0x");
    const token = await stray.getAddress();
    const amount = 123_456_789n; // its fee, 1234567.89, rounds down
    await (await stray.getFunction("mint")(chain.wallet(6).address, amount)).wait();
    await (await stray.getFunction("transfer")(clone, amount)).wait();
    const listed = await waitFor("the token in strayAssets", async () => {
      const strays = await strayAssetsOf(id);
      return strays.length > 0 ? strays : undefined;
    });
    expect(listed).toEqual([{ chainId: devnet.chainId, token, amount: amount.toString() }]);
    const before = await holdings(tokenBalance, clone);
    expect(before.clone).toBe(amount);

    const run = await asOperator(() => stablegate("sweep", id, "--token", token));
    expect(run.code, run.stderr).toBe(0);
    const asked = await db.prisma.sweep.findMany({ where: { chargeId: id } });
    expect(asked).toMatchObject([{ chainId: devnet.chainId, token }]);
    const swept = await waitFor("the sweep to end", async () => {
      const now = sweepResource(await getSweep(db.prisma, null, asked[0]!.id));
      return now.status === "DONE" || now.status === "FAILED" ? now : undefined;
    });
    expect(swept).toMatchObject({ status: "DONE", error: null });
    // On PostgreSQL the CLI waited for the worker; the embedded database's service sends it once started again.
    expect(run.stdout).toBe(
      EMBEDDED
        ? `Sweep ${swept.id} asked for; the worker sends it once the service runs again.\n`
        : `Swept ${token} of ${id} on chain ${devnet.chainId} in ${swept.txHash}.\n`,
    );

    const receipt = (await chain.provider.getTransactionReceipt(swept.txHash!))!;
    expect(receipt).toMatchObject({ status: 1, from: chain.deployer.address, to: devnet.factory });
    // Everything the sweep moved: the merchant's share and the fee, and nothing to anyone else.
    const moved = receipt.logs
      .filter((l) => l.address === token && l.topics[0] === keccakId("Transfer(address,address,uint256)"))
      .map((l) => ({ from: getAddress(`0x${l.topics[1]!.slice(26)}`), to: getAddress(`0x${l.topics[2]!.slice(26)}`), value: BigInt(l.data) }));
    expect(moved).toEqual([
      { from: clone, to: WALLET, value: amount - feeOf(amount) },
      { from: clone, to: chain.feeRecipient, value: feeOf(amount) },
    ]);
    const after = await holdings(tokenBalance, clone);
    expect(after).toEqual({
      merchant: before.merchant + amount - feeOf(amount),
      feeRecipient: before.feeRecipient + feeOf(amount),
      relayer: before.relayer,
      factory: before.factory,
      clone: 0n,
    });
    await waitFor("the token gone from strayAssets", async () => (await strayAssetsOf(id)).length === 0);
    // The charge's USDC was never touched by the sweep: its payout stands as it was.
    expect(receipt.logs.filter((l) => l.address === devnet.usdc)).toEqual([]);
    expect((await call("GET", `/v1/charges/${id}`)).body).toMatchObject({ status: "COMPLETED", needsReview: false });
  });

  it("USDC, a bad token, an unknown or another merchant's charge: refused over GraphQL and by the CLI, and no sweep, no relayer transaction", async () => {
    const { id, clone } = await pickedCharge("5");
    // Something to sweep, so a refusal is not just an empty address.
    await (await stray.getFunction("mint")(clone, 1_000_000n)).wait();
    const other = await createMerchant(db.prisma, { name: "Other Shop", testWallet: WALLET }, { feeBps: 100 });
    const foreign = await pickedCharge("5", other.apiKeys.test.secret);
    const counts = async () => ({ sweeps: await db.prisma.sweep.count(), relayerTxs: await db.prisma.relayerTransaction.count() });
    const before = await counts();
    // Lowercase: USDC is USDC however its address is written.
    const usdcToken = devnet.usdc.toLowerCase();
    const refusal = async (vars: { id: string; token: string }) => {
      const res = await dashboard(SWEEP_CHARGE, vars);
      expect(res.data).toBeNull();
      return res.errors![0];
    };
    const isUsdc = await refusal({ id, token: usdcToken });
    expect(isUsdc.extensions).toMatchObject({ code: "sweep_not_possible", statusCode: 409, param: "token" });
    expect(isUsdc.message).toMatch(/^USDC is not swept/);
    const badToken = await refusal({ id, token: "0xnot-a-token" });
    expect(badToken.extensions).toMatchObject({ code: "parameter_invalid", statusCode: 400, param: "token" });
    expect(badToken.message).toBe('Invalid token: 0xnot-a-token is neither a token address nor "native"');
    const unknown = await refusal({ id: "chrg_000000000000000000000000", token: "eth" });
    expect(unknown.extensions).toMatchObject({ code: "resource_missing", statusCode: 404 });
    expect(unknown.message).toBe("No such charge: 'chrg_000000000000000000000000'");
    expect((await refusal({ id: foreign.id, token: "eth" })).extensions).toMatchObject({ code: "resource_missing", statusCode: 404 });

    const [usdcRun, badRun, unknownRun] = await asOperator(async () => [
      await stablegate("sweep", id, "--token", usdcToken),
      await stablegate("sweep", id, "--token", "0xnot-a-token"),
      await stablegate("sweep", "chrg_000000000000000000000000", "--token", "eth"),
    ]);
    expect(usdcRun).toMatchObject({ code: 1, stdout: "" });
    expect(usdcRun!.stderr).toMatch(/^Error: USDC is not swept: .* \(--token\)\n$/);
    expect(badRun).toMatchObject({ code: 1, stdout: "", stderr: 'Error: Invalid token: 0xnot-a-token is neither a token address nor "native" (--token)\n' });
    expect(unknownRun).toMatchObject({ code: 1, stdout: "", stderr: "Error: No such charge: 'chrg_000000000000000000000000'\n" });

    // Two runner ticks later: still nothing asked for, nothing sent, the token where it was.
    await runnerPassed(service!.runner, chain.provider);
    expect(await counts()).toEqual(before);
    expect(await tokenBalance(clone)).toBe(1_000_000n);
  });

  it("an RPC failure while a sweep is simulated fails the worker's round, not the sweep: it is sent once the node answers", async () => {
    const { id, clone } = await pickedCharge("5");
    const amount = parseEther("0.01");
    await (await chain.wallet(5).sendTransaction({ to: clone, value: amount })).wait();
    await service!.runner.stop();
    const relayer = new Relayer(devnet);
    let sweepId: string;
    try {
      const asked = await dashboard(SWEEP_CHARGE, { id, token: "native" });
      expect(asked.errors).toBeUndefined();
      sweepId = asked.data.sweepCharge.id;
      vi.spyOn(relayer.provider, "call").mockRejectedValue(new RpcError("no RPC endpoint answered eth_call (CHAIN_31337_RPC_URL: timed out)"));
      await expect(runSweeps(db.prisma, relayer, logger)).rejects.toThrow(/no RPC endpoint answered eth_call/);
      expect(await db.prisma.sweep.findUniqueOrThrow({ where: { id: sweepId } })).toMatchObject({ status: "PENDING", error: null, txId: null });
    } finally {
      relayer.close();
      service!.runner = startRunner();
    }
    const done = await waitFor("the sweep to end", async () => {
      const now = (await dashboard(SWEEP, { id: sweepId })).data.sweep;
      return now.status === "DONE" || now.status === "FAILED" ? now : undefined;
    });
    expect(done).toMatchObject({ status: "DONE", error: null });
    expect(await chain.provider.getBalance(clone)).toBe(0n);
  });

  it("a merchant whose relayer gas is spent: its waiting sweeps are refused and counted without a call to the node, SWEEPS_PER_ROUND a round", async () => {
    const { id } = await pickedCharge("5");
    const { merchantId } = await db.prisma.charge.findUniqueOrThrow({ where: { id } });
    const refusals = async () =>
      (await db.prisma.relayerBudgetRefusal.aggregate({ _sum: { count: true }, where: { merchantId, kind: "sweep" } }))._sum.count ?? 0;
    await service!.runner.stop();
    const relayer = new Relayer(devnet);
    try {
      // Queued before the budget ran out: one more than a round takes.
      const start = Date.now();
      for (let i = 0; i <= SWEEPS_PER_ROUND; i++) {
        const token = getAddress(hexlify(randomBytes(20)));
        await db.prisma.sweep.create({ data: { id: `swp_spent${i}`, chargeId: id, chainId: devnet.chainId, token, createdAt: new Date(start + i) } });
      }
      const before = await refusals();
      const asked = ["getCode", "getBlock", "call", "estimateGas"].map((m) => vi.spyOn(relayer.provider, m as "call"));
      await runSweeps(db.prisma, relayer, logger, { relayerGasBudget: 1n });
      for (const spy of asked) expect(spy).not.toHaveBeenCalled();
      const after = await db.prisma.sweep.findMany({ where: { chargeId: id }, orderBy: { createdAt: "asc" } });
      for (const s of after.slice(0, SWEEPS_PER_ROUND))
        expect(s).toMatchObject({ status: "FAILED", error: expect.stringMatching(/relayer gas for today/), txId: null });
      expect(after.at(-1)).toMatchObject({ status: "PENDING" });
      expect(await refusals()).toBe(before + SWEEPS_PER_ROUND);
    } finally {
      await db.prisma.sweep.deleteMany({ where: { chargeId: id, status: "PENDING" } });
      relayer.close();
      service!.runner = startRunner();
    }
  });

  it("a node that keeps only recent state: a sweep's handlers read the clone's balance now, neither throwing nor taking the refusal for the token's", async () => {
    const { id, clone } = await pickedCharge("5");
    await (await chain.wallet(5).sendTransaction({ to: clone, value: parseEther("0.001") })).wait();
    await (await stray.getFunction("mint")(clone, 7n)).wait();
    const receipt = (await (await chain.wallet(5).sendTransaction({ to: chain.wallet(5).address, value: 0n })).wait())!;
    // What such a node answers for a block it has no state of: eth_getBalance fails, and an eth_call's
    // error is one ethers cannot tell from a revert.
    const past = (tag: unknown) => tag !== undefined && tag !== "latest";
    const missing = (method: string) => makeError(`missing trie node (${method})`, "UNKNOWN_ERROR");
    const pruned = {
      getBalance: (a: string, tag?: number | string) => (past(tag) ? Promise.reject(missing("eth_getBalance")) : chain.provider.getBalance(a, tag)),
      call: (req: { to: string; data: string; blockTag?: number | string }) =>
        past(req.blockTag)
          ? Promise.reject(
              makeError("missing revert data", "CALL_EXCEPTION", {
                action: "call",
                data: null,
                reason: null,
                transaction: req,
                invocation: null,
                revert: null,
              }),
            )
          : chain.provider.call(req),
    } as unknown as Provider;
    const handlers = sweepHandlers(db.prisma, { provider: pruned, chain: devnet } as never, () => new Date());
    const rows = [
      { n: 1, token: "native" },
      { n: 2, token: await stray.getAddress() },
    ];
    for (const { n, token } of rows) {
      // Ended rows: the running tracker leaves them alone.
      await db.prisma.relayerTransaction.create({
        data: { id: `rtx_pruned${n}`, chainId: devnet.chainId, kind: "SWEEP", status: "FAILED", nonce: 900_000 + n, rawTx: "0x", txHashes: [receipt.hash] },
      });
      await db.prisma.sweep.create({ data: { id: `swp_pruned${n}`, chargeId: id, chainId: devnet.chainId, token, status: "SENT", txId: `rtx_pruned${n}` } });
    }
    await handlers.mined({ id: "rtx_pruned1" } as OpenTx, receipt);
    await handlers.failed({ id: "rtx_pruned2" } as OpenTx, receipt);
    const [native, token] = await Promise.all([1, 2].map((n) => db.prisma.sweep.findUniqueOrThrow({ where: { id: `swp_pruned${n}` } })));
    expect(native).toMatchObject({ status: "FAILED", error: expect.stringMatching(/^nothing moved/) });
    expect(native!.balanceSeen?.toString()).toBe(parseEther("0.001").toString());
    expect(token).toMatchObject({ status: "FAILED", error: "its transaction reverted" });
    expect(token!.balanceSeen?.toString()).toBe("7");
  });

  it("a sweep's gas counts toward the UTC day its transaction was sent: asked yesterday and sent today, it counts today", async () => {
    const { id } = await pickedCharge("5");
    const { merchantId } = await db.prisma.charge.findUniqueOrThrow({ where: { id } });
    const today = () => relayerGasToday(db.prisma, devnet.chainId, { kinds: ["sweep", "gasless_payment"], merchantId });
    const before = await today();
    const yesterday = new Date(Date.now() - 86_400_000);
    const sent = async (n: number, at: Date) => {
      await db.prisma.relayerTransaction.create({
        data: { id: `rtx_day${n}`, chainId: devnet.chainId, kind: "SWEEP", status: "CONFIRMED", nonce: 900_100 + n, rawTx: "0x", txHashes: [], createdAt: at },
      });
      const token = getAddress(hexlify(randomBytes(20)));
      await db.prisma.sweep.create({
        data: {
          id: `swp_day${n}`,
          chargeId: id,
          chainId: devnet.chainId,
          token,
          status: "DONE",
          txId: `rtx_day${n}`,
          gasNeeded: 90_000n,
          gasUsed: 80_000n,
          createdAt: yesterday,
        },
      });
    };
    await sent(1, new Date());
    await sent(2, yesterday);
    expect(await today()).toBe(before + 80_000n);
  });

  it("gas spent while a sweep was simulated and signed is seen when it is claimed: FAILED unsent, the refusal counted", async () => {
    const { id, clone } = await pickedCharge("5");
    const { merchantId } = await db.prisma.charge.findUniqueOrThrow({ where: { id } });
    await (await chain.wallet(5).sendTransaction({ to: clone, value: parseEther("0.001") })).wait();
    const refusals = async () =>
      (await db.prisma.relayerBudgetRefusal.aggregate({ _sum: { count: true }, where: { merchantId, kind: "sweep" } }))._sum.count ?? 0;
    await service!.runner.stop();
    const relayer = new Relayer(devnet);
    const spender = { id: "swp_meanwhile", chargeId: id, chainId: devnet.chainId, token: getAddress(hexlify(randomBytes(20))) };
    try {
      const asked = await dashboard(SWEEP_CHARGE, { id, token: "native" });
      expect(asked.errors).toBeUndefined();
      const [before, sent] = [await refusals(), await db.prisma.relayerTransaction.count()];
      // While the worker signs, the merchant's day is spent elsewhere (as by payments without gas).
      const sign = relayer.sign.bind(relayer);
      vi.spyOn(relayer, "sign").mockImplementation(async (...args) => {
        await db.prisma.sweep.create({ data: { ...spender, status: "DONE", gasNeeded: 2_000_000n, gasUsed: 2_000_000n } });
        return sign(...args);
      });
      await runSweeps(db.prisma, relayer, logger);
      const sweep = await db.prisma.sweep.findUniqueOrThrow({ where: { id: asked.data.sweepCharge.id } });
      expect(sweep).toMatchObject({ status: "FAILED", error: expect.stringMatching(/relayer gas for today .* cannot pay the \d+ gas it needs/), txId: null });
      expect(await db.prisma.relayerTransaction.count()).toBe(sent);
      expect(await refusals()).toBe(before + 1);
    } finally {
      await db.prisma.sweep.deleteMany({ where: { id: spender.id } });
      relayer.close();
      service!.runner = startRunner();
    }
    // The nonce it signed with was given back: the next sweep is sent and done.
    const again = await dashboard(SWEEP_CHARGE, { id, token: "native" });
    expect(again.errors).toBeUndefined();
    const done = await waitFor("the sweep to end", async () => {
      const now = (await dashboard(SWEEP, { id: again.data.sweepCharge.id })).data.sweep;
      return now.status === "DONE" || now.status === "FAILED" ? now : undefined;
    });
    expect(done).toMatchObject({ status: "DONE" });
  });
});
