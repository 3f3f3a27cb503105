// What the relayer may be made to pay (issue 41, points 3 and 7), on anvil with Circle's USDC and the
// real service and worker:
// - a token whose transfer burns 250k gas (honest, only expensive) is swept: the sweep is sent with
//   the gas that gives the full-gas outcome, not the estimate with which the clone runs out inside;
// - a token that moves nothing when mined (it refuses only real transactions) costs the relayer one
//   sweep: asked again with the same balance it is refused (409 sweep_unchanged) without gas, until
//   the balance changes (a sweep that failed without seeing the balance in between does not lift it);
// - a merchant's payments without gas stop at its daily relayer gas (429 relayer_budget_exhausted,
//   saying when it resets), sweeps too, and /metrics counts the gas and the refusals; sweeps still
//   waiting count at the least a sweep costs, so a burst of them is refused once they could not all fit;
// - an authorization its signer cancels on chain ends its lock at once and is never relayed.
import { createRequire } from "node:module";
import { Contract, ContractFactory, hexlify, parseEther, parseUnits, randomBytes, Signature, Wallet } from "ethers";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { authorizationReaders } from "../../src/chain/authorizations.js";
import { ChainSet, type EnabledChain } from "../../src/chain/chains.js";
import { authorizationSchema } from "../../src/domain/authorizations.js";
import { submitChargeAuthorization } from "../../src/domain/charge-authorizations.js";
import { parseInput } from "../../src/domain/validation.js";
import { type ChainRunner, startChainRunner } from "../../src/jobs/chain-runner.js";
import { blockProducer, runnerPassed, startTestChain, type TestChain, waitFor } from "../helpers/chain.js";
import { expectError, POLLING, SETTINGS, startApp, type TestApp, WALLET } from "../helpers/harness.js";
import { TRANSFER_WITH_AUTHORIZATION_TYPES } from "../../src/lib/eip3009.js";

/** The API's RELAYER_GAS_BUDGET_PER_MERCHANT: a few payments without gas. The worker keeps the default (2M), so an expensive sweep fits. */
const BUDGET = 250_000n;
const FEE_BPS = 100n;
const usdc = (s: string) => parseUnits(s, 6);
const feeOf = (amount: bigint) => (amount * FEE_BPS) / 10_000n;

/** Test tokens: `burn` gas spent in every transfer; with `trap`, a real transaction (gas price above 0) moves nothing. */
const TOKEN_SOURCE = `
// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;
contract TestToken {
    mapping(address => uint256) public balanceOf;
    uint256 public immutable burn;
    bool public immutable trap;
    event Transfer(address indexed from, address indexed to, uint256 value);
    constructor(uint256 burn_, bool trap_) { burn = burn_; trap = trap_; }
    function mint(address to, uint256 amount) external { balanceOf[to] += amount; emit Transfer(address(0), to, amount); }
    function transfer(address to, uint256 amount) external returns (bool) {
        uint256 start = gasleft();
        while (start - gasleft() < burn) {}
        if (trap && tx.gasprice > 0) return false;
        require(balanceOf[msg.sender] >= amount, "balance");
        balanceOf[msg.sender] -= amount;
        balanceOf[to] += amount;
        emit Transfer(msg.sender, to, amount);
        return true;
    }
}`;

function compileTestToken(): { abi: unknown[]; bytecode: string } {
  const solc = createRequire(import.meta.url)("solc") as { compile(input: string): string };
  const input = {
    language: "Solidity",
    sources: { "TestToken.sol": { content: TOKEN_SOURCE } },
    settings: { optimizer: { enabled: true, runs: 200 }, outputSelection: { "*": { "*": ["abi", "evm.bytecode.object"] } } },
  };
  const out = JSON.parse(solc.compile(JSON.stringify(input)));
  const errors = (out.errors ?? []).filter((e: { severity: string }) => e.severity === "error");
  if (errors.length > 0) throw new Error(JSON.stringify(errors));
  const c = out.contracts["TestToken.sol"].TestToken;
  return { abi: c.abi, bytecode: `0x${c.evm.bytecode.object}` };
}

let chain: TestChain;
let app: TestApp;
let devnet: EnabledChain;
let runner: ChainRunner;
let domain: { name: string; version: string; chainId: number; verifyingContract: string };
let artifact: { abi: unknown[]; bytecode: string };
const producer = blockProducer(() => chain.mine());
const startRunner = () =>
  startChainRunner(app.db, devnet, pino({ level: "silent" }), { intervalMs: 50, settings: { ...SETTINGS, feed: app.live }, bumpAfterMs: 60_000 });

beforeAll(async () => {
  artifact = compileTestToken();
  chain = await startTestChain();
  devnet = await chain.enabled(1);
  app = await startApp({ ...POLLING, RELAYER_GAS_BUDGET_PER_MERCHANT: String(BUDGET) }, { chains: new ChainSet([devnet]) });
  runner = startRunner();
  producer.start();
  const token = new Contract(devnet.usdc, ["function name() view returns (string)", "function version() view returns (string)"], chain.provider);
  domain = { name: await token.getFunction("name")(), version: await token.getFunction("version")(), chainId: devnet.chainId, verifyingContract: devnet.usdc };
}, 60_000);
afterAll(async () => {
  producer.stop();
  await runner?.stop();
  await app?.stop();
  await chain?.stop();
});

/** A test token deployed from an account of its own (the relayer's nonces are the runner's). */
async function deployToken(burn: bigint, trap: boolean): Promise<Contract> {
  const token = (await new ContractFactory(artifact.abi as never, artifact.bytecode, chain.wallet(6)).deploy(burn, trap)) as Contract;
  await token.waitForDeployment();
  return token;
}

let seq = 0;
/** A PENDING test charge of `key`'s merchant with the devnet picked. */
async function charge(key: string, amount = "5"): Promise<{ id: string; clone: string }> {
  const made = await app.call("POST", "/v1/charges", { key, body: { orderId: `cost-${++seq}`, amount } });
  expect(made.status, made.text).toBe(201);
  const picked = await app.call("POST", `/v1/public/charges/${made.body.id}/chain`, { body: { chainId: devnet.chainId }, key: null });
  return { id: made.body.id, clone: picked.body.cloneAddress };
}

const SWEEP_CHARGE = `mutation($id: ID!, $token: String!) { sweepCharge(id: $id, token: $token) { id status error txHash } }`;
const SWEEP = `query($id: ID!) { sweep(id: $id) { id status error txHash } }`;
async function askSweep(key: string, id: string, token: string) {
  return app.gql(SWEEP_CHARGE, { id, token }, key);
}
async function sweepEnd(key: string, id: string) {
  return waitFor("the sweep to end", async () => {
    const s = (await app.gql(SWEEP, { id }, key)).data.sweep;
    return s.status === "DONE" || s.status === "FAILED" ? s : undefined;
  });
}
const relayerTxs = (kind: "SWEEP" | "AUTHORIZATION") => app.db.prisma.relayerTransaction.count({ where: { kind } });
const metric = async (name: string, labels: string) => {
  const text = await (await fetch(`${app.url}/metrics`)).text();
  const line = text.split("\n").find((l) => l.startsWith(`${name}{${labels}}`));
  return line ? BigInt(line.split(" ").at(-1)!) : 0n;
};

describe("sweeps the relayer pays for", () => {
  it("sweeps a token whose transfer burns 250k gas: sent with the gas its full-gas simulation needed, not the estimate", async () => {
    const merchant = await app.newMerchant();
    const key = merchant.apiKeys.test.secret;
    const token = await deployToken(250_000n, false);
    const c = await charge(key);
    const amount = 1_000_000n;
    await (await token.getFunction("mint")(c.clone, amount)).wait();
    const before = await metric("stablegate_relayer_gas_used_total", `chain_id="${devnet.chainId}",kind="sweep"`);

    const asked = await askSweep(key, c.id, await token.getAddress());
    expect(asked.errors).toBeUndefined();
    const done = await sweepEnd(key, asked.data.sweepCharge.id);
    expect(done).toMatchObject({ status: "DONE", error: null });
    expect(await token.getFunction("balanceOf")(c.clone)).toBe(0n);
    expect(await token.getFunction("balanceOf")(WALLET)).toBe(amount - feeOf(amount));
    const receipt = (await chain.provider.getTransactionReceipt(done.txHash))!;
    // Two transfers of 250k each, and the clone's creation: far above what the node estimates.
    expect(receipt.gasUsed).toBeGreaterThan(500_000n);
    const estimate = await app.db.prisma.sweep.findUniqueOrThrow({ where: { id: done.id } });
    expect(estimate).toMatchObject({ gasNeeded: expect.any(BigInt), gasUsed: receipt.gasUsed });
    await waitFor("the gas in /metrics", async () =>
      (await metric("stablegate_relayer_gas_used_total", `chain_id="${devnet.chainId}",kind="sweep"`)) === before + receipt.gasUsed ? true : undefined,
    );
  });

  it("a sweep that moved nothing is not sent again (409 sweep_unchanged, no gas) until the clone's balance of the token changes", async () => {
    const merchant = await app.newMerchant();
    const key = merchant.apiKeys.test.secret;
    const token = await deployToken(0n, true);
    const tokenAddress = await token.getAddress();
    const c = await charge(key);
    await (await token.getFunction("mint")(c.clone, 1_000_000n)).wait();

    const first = await askSweep(key, c.id, tokenAddress);
    expect(first.errors).toBeUndefined();
    const failed = await sweepEnd(key, first.data.sweepCharge.id);
    expect(failed).toMatchObject({ status: "FAILED", error: expect.stringMatching(/^nothing moved/), txHash: expect.stringMatching(/^0x/) });
    expect(await token.getFunction("balanceOf")(c.clone)).toBe(1_000_000n);
    const sent = await relayerTxs("SWEEP");

    for (let i = 0; i < 3; i++) {
      const again = await askSweep(key, c.id, tokenAddress);
      expect(again.data).toBeNull();
      expect(again.errors![0].extensions).toMatchObject({ code: "sweep_unchanged", statusCode: 409, param: "token" });
      expect(again.errors![0].message).toMatch(new RegExp(`last sweep of ${tokenAddress} here \\(${failed.id}\\) moved nothing.*same 1000000 base units`));
    }
    await runnerPassed(runner, chain.provider);
    expect(await relayerTxs("SWEEP")).toBe(sent);
    expect(await app.db.prisma.sweep.count({ where: { chargeId: c.id } })).toBe(1);

    // A later sweep of it that ended without a look at the balance (refused for the budget, its
    // transaction dropped) says nothing about it: still refused.
    await app.db.prisma.sweep.create({
      data: { id: "swp_dropped", chargeId: c.id, chainId: devnet.chainId, token: tokenAddress, status: "FAILED", error: "its transaction was dropped" },
    });
    const afterDropped = await askSweep(key, c.id, tokenAddress);
    expect(afterDropped.errors![0].extensions).toMatchObject({ code: "sweep_unchanged", statusCode: 409 });
    expect(afterDropped.errors![0].message).toContain(`(${failed.id})`);
    expect(await relayerTxs("SWEEP")).toBe(sent);

    // More of the token arrives: the balance changed, so it is tried once more.
    await (await token.getFunction("mint")(c.clone, 1n)).wait();
    const changed = await askSweep(key, c.id, tokenAddress);
    expect(changed.errors).toBeUndefined();
    expect(await sweepEnd(key, changed.data.sweepCharge.id)).toMatchObject({ status: "FAILED" });
    expect(await relayerTxs("SWEEP")).toBe(sent + 1);
  });
});

const CANCEL_TYPES = {
  CancelAuthorization: [
    { name: "authorizer", type: "address" },
    { name: "nonce", type: "bytes32" },
  ],
};

async function buyer(holds = "20"): Promise<Wallet> {
  const wallet = Wallet.createRandom().connect(chain.provider) as unknown as Wallet;
  await chain.mint(wallet.address, usdc(holds));
  return wallet;
}
async function sign(signer: Wallet, to: string, value: bigint) {
  const message = { from: signer.address, to, value, validAfter: 0, validBefore: Math.floor(Date.now() / 1000) + 3600, nonce: hexlify(randomBytes(32)) };
  const signature = await signer.signTypedData(domain, TRANSFER_WITH_AUTHORIZATION_TYPES, message);
  return { from: message.from, value: String(value), validAfter: "0", validBefore: String(message.validBefore), nonce: message.nonce, signature };
}
const submit = (chargeId: string, body: object) => app.call("POST", `/v1/public/charges/${chargeId}/authorizations`, { key: null, body });

describe("the merchant's daily relayer gas", () => {
  it("payments without gas stop at the budget with a 429 saying when it resets; sweeps too; /metrics counts gas and refusals", async () => {
    const merchant = await app.newMerchant();
    const key = merchant.apiKeys.test.secret;
    const labels = `chain_id="${devnet.chainId}",kind="gasless_payment"`;
    const [gasBefore, refusalsBefore] = [
      await metric("stablegate_relayer_gas_used_total", labels),
      await metric("stablegate_relayer_budget_refusals_total", labels),
    ];
    let refused;
    const accepted: string[] = [];
    for (let i = 0; i < 8 && !refused; i++) {
      const c = await charge(key);
      const res = await submit(c.id, await sign(await buyer(), c.clone, usdc("5")));
      if (res.status === 429) refused = res;
      else {
        expect(res.status, res.text).toBe(202);
        accepted.push(c.id);
        await waitFor("the charge paid", async () => (await app.call("GET", `/v1/charges/${c.id}`, { key })).body.status === "COMPLETED");
      }
    }
    expect(accepted.length).toBeGreaterThan(0);
    expectError(refused!, 429, "relayer_budget_exhausted");
    const midnight = new Date(Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth(), new Date().getUTCDate() + 1)).toISOString();
    expect(refused!.body.message).toContain(`it resets at ${midnight}`);
    expect(Number(refused!.headers.get("retry-after"))).toBeGreaterThan(0);
    // Nothing of the refused one was stored or sent; what was spent stays within the budget.
    const used = await app.db.prisma.authorization.findMany({ where: { charge: { merchantId: merchant.merchant.id } } });
    expect(used.length).toBe(accepted.length);
    const spent = used.reduce((sum, a) => sum + (a.gasUsed ?? a.gasEstimate ?? 0n), 0n);
    expect(spent).toBeLessThanOrEqual(BUDGET);

    // A sweep of this merchant is refused before anything is asked of the worker.
    const token = await deployToken(0n, false);
    const c = await charge(key);
    await (await token.getFunction("mint")(c.clone, 10n)).wait();
    const sweep = await askSweep(key, c.id, await token.getAddress());
    expect(sweep.errors![0].extensions).toMatchObject({ code: "relayer_budget_exhausted", statusCode: 429 });
    expect(await app.db.prisma.sweep.count({ where: { chargeId: c.id } })).toBe(0);

    // Another merchant's buyers still pay without gas: the budget is each merchant's.
    const other = await charge(app.testKey);
    expect((await submit(other.id, await sign(await buyer(), other.clone, usdc("5")))).status).toBe(202);

    await waitFor("the gas used in /metrics", async () =>
      (await metric("stablegate_relayer_gas_used_total", labels)) >= gasBefore + spent ? true : undefined,
    );
    expect(await metric("stablegate_relayer_budget_refusals_total", labels)).toBe(refusalsBefore + 1n);
    expect(await metric("stablegate_relayer_budget_refusals_total", `chain_id="${devnet.chainId}",kind="sweep"`)).toBeGreaterThanOrEqual(1n);
  });
});

describe("sweeps still waiting", () => {
  it("count at the least a sweep costs: a burst of requests is refused with a 429 once they could not all fit the merchant's day", async () => {
    const merchant = await app.newMerchant();
    const key = merchant.apiKeys.test.secret;
    const token = await deployToken(0n, false);
    // The worker stopped: the requests alone decide.
    await runner.stop();
    try {
      const answers = [];
      for (let i = 0; i < 3; i++) answers.push(await askSweep(key, (await charge(key)).id, await token.getAddress()));
      // 250k of gas: two waiting sweeps at 100k each fit, a third does not.
      expect(answers.slice(0, 2).map((a) => a.errors)).toEqual([undefined, undefined]);
      expect(answers[2]!.errors![0].extensions).toMatchObject({ code: "relayer_budget_exhausted", statusCode: 429 });
      expect(answers[2]!.errors![0].message).toContain("this needs 300000");
      expect(await app.db.prisma.sweep.count({ where: { charge: { merchantId: merchant.merchant.id } } })).toBe(2);
    } finally {
      await app.db.prisma.sweep.deleteMany({ where: { charge: { merchantId: merchant.merchant.id }, status: "PENDING" } });
      runner = startRunner();
    }
  });
});

describe("an authorization cancelled on chain", () => {
  it("ends its lock as soon as the indexer sees AuthorizationCanceled, and is never relayed", async () => {
    const c = await charge((await app.newMerchant()).apiKeys.test.secret);
    const payer = await buyer();
    const body = await sign(payer, c.clone, usdc("5"));
    const relayedBefore = await relayerTxs("AUTHORIZATION");
    await runner.stop();
    let stored;
    try {
      const chains = new ChainSet([devnet]);
      stored = await submitChargeAuthorization(
        app.db.prisma,
        chains,
        authorizationReaders(chains),
        { gasless: { minAmount: usdc("1") } },
        c.id,
        parseInput(authorizationSchema, body),
      );
      expect(stored).toMatchObject({ status: "RELAYING", endedAt: null });
      // The buyer cancels the nonce on chain (with gas of its own) before the relay.
      await (await chain.wallet(5).sendTransaction({ to: payer.address, value: parseEther("1") })).wait();
      const sig = Signature.from(await payer.signTypedData(domain, CANCEL_TYPES, { authorizer: payer.address, nonce: body.nonce }));
      const fiat = new Contract(devnet.usdc, ["function cancelAuthorization(address authorizer, bytes32 nonce, uint8 v, bytes32 r, bytes32 s)"], payer);
      await (await fiat.getFunction("cancelAuthorization")(payer.address, body.nonce, sig.v, sig.r, sig.s)).wait();
      // While the lock holds, its value counts as on its way: the charge takes no other payment without gas.
      const locked = await submit(c.id, await sign(await buyer(), c.clone, usdc("5")));
      expectError(locked, 400, "authorization_invalid", "value");
      expect(locked.body.message).toMatch(/at most what is still due, 0 base units/);
    } finally {
      runner = startRunner();
    }
    const ended = await waitFor("the authorization to end", async () => {
      const a = await app.db.prisma.authorization.findUniqueOrThrow({ where: { id: stored.id } });
      return a.endedAt ? a : undefined;
    });
    expect(ended).toMatchObject({ status: "FAILED", endReason: "cancelled", error: expect.stringMatching(/^cancelled on chain by its signer/), txId: null });
    expect(await relayerTxs("AUTHORIZATION")).toBe(relayedBefore);
    // The lock is gone: another buyer pays without gas at once.
    const next = await submit(c.id, await sign(await buyer(), c.clone, usdc("5")));
    expect(next.status, next.text).toBe(202);
    await waitFor("the payment seen", async () => (await app.db.prisma.charge.findUniqueOrThrow({ where: { id: c.id } })).status === "COMPLETED");
  });
});
