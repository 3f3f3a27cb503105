import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Interface } from "ethers";
import { ChargeFactoryArtifact } from "../../src/chain/artifacts.js";
import { ChainSet } from "../../src/chain/chains.js";
import { cloneSalt, predictCloneAddress } from "../../src/chain/clones.js";
import { Relayer } from "../../src/chain/relayer.js";
import { expireDueCharges } from "../../src/domain/charges.js";
import { claimDeployments } from "../../src/domain/deployments.js";
import { newId } from "../../src/domain/ids.js";
import { relayerTxHandlers } from "../../src/jobs/chain-runner.js";
import { runDeployments } from "../../src/jobs/deployments.js";
import { resendStored, trackRelayerTxs } from "../../src/jobs/relayer-txs.js";
import { startTestChain, type TestChain } from "../helpers/chain.js";
import { expectError, POLLING, SETTINGS, startApp, type TestApp, WALLET } from "../helpers/harness.js";

let chain: TestChain;
let app: TestApp;
let chains: ChainSet;
const logger = pino({ level: "silent" });

beforeAll(async () => {
  chain = await startTestChain();
  chains = new ChainSet([await chain.enabled(1)]);
  app = await startApp(POLLING, { chains });
}, 60_000);
afterAll(async () => {
  await app?.stop();
  await chain?.stop();
});

let seq = 0;
const newCharge = async (key = app.testKey, body: Record<string, unknown> = {}) =>
  (await app.call("POST", "/v1/charges", { body: { orderId: `sel-${++seq}`, amount: "25", ...body }, key })).body;
const select = (id: string, body: unknown = { chainId: 31337 }) => app.call("POST", `/v1/public/charges/${id}/chain`, { body, key: null });
const relayerNonce = () => chain.provider.getTransactionCount(chain.deployer.address, "latest");

describe("public view", () => {
  it("shows the hosted page what it needs, the mode's chains, and never caches", async () => {
    const charge = await newCharge(app.testKey, { description: "Mugs" });
    const res = await app.call("GET", `/v1/public/charges/${charge.id}`, { key: null });
    expect(res.status).toBe(200);
    expect(res.headers.get("cache-control")).toBe("no-store");
    expect(res.body).toEqual({
      id: charge.id,
      orderId: charge.orderId,
      amount: "25.00",
      currency: "USDC",
      status: "PENDING",
      amountReceived: null,
      amountRemaining: "25.00",
      amountPending: "0.00",
      confirmationsRequired: null,
      payments: [],
      chainId: null,
      cloneAddress: null,
      flushTxHash: null,
      expiresAt: charge.expiresAt,
      description: "Mugs",
      merchantName: "Test Shop",
      successUrl: null,
      cancelUrl: null,
      livemode: false,
      chains: [{ chainId: 31337, name: "Local devnet", usdcAddress: await chain.usdc.getAddress(), explorerUrl: null }],
      statusMessage: "Choose a network to pay on.",
    });
    const live = await newCharge(app.liveKey);
    expect((await app.call("GET", `/v1/public/charges/${live.id}`, { key: null })).body.chains).toEqual([]);
    expectError(await app.call("GET", `/v1/public/charges/${newId("chrg")}`, { key: null }), 404, "resource_missing", "id");
  });
});

describe("chain selection", () => {
  it("fixes the predicted clone address, confirmations and payment window, queues the deployment and records the event", async () => {
    const charge = await newCharge();
    const before = Date.now();
    const res = await select(charge.id);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const predicted = predictCloneAddress({ ...chains.get(31337)!, chargeId: charge.id, wallet: WALLET, feeBps: 100 });
    expect(res.body).toMatchObject({ chainId: 31337, cloneAddress: predicted });
    const row = await app.db.prisma.charge.findUniqueOrThrow({ where: { id: charge.id }, include: { deployment: true } });
    expect(row).toMatchObject({ chainId: 31337, confirmations: 1, cloneAddress: predicted, deployedAt: null });
    expect(row.expiresAt.getTime() - before).toBeGreaterThan(14 * 60_000);
    expect(row.expiresAt.getTime() - before).toBeLessThan(16 * 60_000);
    expect(row.deployment).toMatchObject({ status: "PENDING", chainId: 31337 });
    const events = await app.db.prisma.event.findMany({ where: { type: "charge.chain_selected" } });
    expect(events.map((e) => (e.data as { id: string }).id)).toContain(charge.id);
    expect((await app.call("GET", `/v1/charges/${charge.id}`)).body).toMatchObject({ chainId: 31337, cloneAddress: predicted, explorerUrl: null });
  });

  it("lets exactly one of ten racing selections win", async () => {
    const charge = await newCharge();
    const results = await Promise.all(Array.from({ length: 10 }, () => select(charge.id)));
    expect(results.map((r) => r.status).sort()).toEqual([200, ...Array(9).fill(409)]);
    for (const r of results.filter((r) => r.status === 409)) expectError(r, 409, "chain_already_selected", "chainId");
    expect(await app.db.prisma.cloneDeployment.count({ where: { chargeId: charge.id } })).toBe(1);
  });

  it("refuses unsupported and wrong-mode chains, unknown charges and charges that cannot be paid", async () => {
    const charge = await newCharge();
    expectError(await select(charge.id, { chainId: 8453 }), 400, "chain_unsupported", "chainId");
    expectError(await select(charge.id, { chainId: 999_999 }), 400, "chain_unsupported", "chainId");
    expectError(await select(charge.id, { chainId: "31337" }), 400, "parameter_invalid", "chainId");
    expectError(await select(charge.id, {}), 400, "parameter_missing", "chainId");
    expectError(await select(charge.id, { chainId: 31337, extra: 1 }), 400, "parameter_unknown", "extra");
    expectError(await select(newId("chrg")), 404, "resource_missing", "id");
    expectError(await select((await newCharge(app.liveKey)).id), 400, "chain_unsupported", "chainId");

    const cancelled = await newCharge();
    await app.call("DELETE", `/v1/charges/${cancelled.id}`);
    expectError(await select(cancelled.id), 409, "charge_not_payable", null);
    const expired = await newCharge(app.testKey, { expiresInMinutes: 5 });
    await expireDueCharges(app.db.prisma, SETTINGS, new Date(Date.now() + 3_600_000));
    expectError(await select(expired.id), 409, "charge_not_payable", null);
    expect(await app.db.prisma.cloneDeployment.count({ where: { chargeId: { in: [charge.id, cancelled.id, expired.id] } } })).toBe(0);
  });

  it("works over GraphQL: paymentSession and selectPaymentChain without a key", async () => {
    const charge = await newCharge();
    const q = await app.gql(`query($id: ID!) { paymentSession(chargeId: $id) { id amountRemaining chains { chainId name } } }`, { id: charge.id }, null);
    expect(q.data.paymentSession).toEqual({ id: charge.id, amountRemaining: "25.00", chains: [{ chainId: 31337, name: "Local devnet" }] });
    const m = await app.gql(`mutation($id: ID!) { selectPaymentChain(chargeId: $id, chainId: 31337) { chainId cloneAddress } }`, { id: charge.id }, null);
    expect(m.data.selectPaymentChain.chainId).toBe(31337);
    const again = await app.gql(`mutation($id: ID!) { selectPaymentChain(chargeId: $id, chainId: 31337) { chainId } }`, { id: charge.id }, null);
    expect(again.errors?.[0].extensions).toMatchObject({ code: "chain_already_selected", statusCode: 409 });
    expect((await app.gql(`{ chains { chainId } }`)).data.chains).toEqual([{ chainId: 31337 }]);
  });
});

describe("clone deployment", () => {
  const factoryAbi = new Interface(ChargeFactoryArtifact.abi);
  /** Runs the worker's deployment steps as a process taking the chain over would, until no job on the chain is left to do. */
  async function drain(relayer: Relayer): Promise<void> {
    const handlers = relayerTxHandlers(app.db.prisma, SETTINGS, logger, () => new Date());
    await resendStored(app.db.prisma, relayer);
    for (let i = 0; i < 100; i++) {
      await app.db.prisma.cloneDeployment.updateMany({ where: { status: "PENDING" }, data: { nextAttemptAt: new Date(0) } });
      const tip = BigInt(await chain.provider.getBlockNumber());
      await trackRelayerTxs(app.db.prisma, relayer, tip, handlers, { bumpAfterMs: 60_000, now: () => new Date() }, logger);
      await runDeployments(app.db.prisma, relayer, logger);
      if ((await app.db.prisma.cloneDeployment.count({ where: { status: { not: "MINED" } } })) === 0) return;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error("deployments never finished");
  }
  const deployManyData = (chargeIds: string[]) =>
    factoryAbi.encodeFunctionData("deployMany", [chargeIds.map(cloneSalt), chargeIds.map(() => WALLET), chargeIds.map(() => 100)]);
  /** Signs a batch and stores it with its jobs claimed, as the worker does, without broadcasting it. */
  async function storeUnsent(relayer: Relayer, chargeIds: string[]) {
    const signed = await relayer.sign({ to: relayer.chain.factory, data: deployManyData(chargeIds) });
    const id = newId("rtx");
    await app.db.prisma.$transaction(async (tx) => {
      await tx.relayerTransaction.create({ data: { id, chainId: 31337, kind: "DEPLOY", nonce: signed.nonce, rawTx: signed.raw, txHashes: [signed.hash] } });
      expect(await claimDeployments(tx, id, chargeIds)).toBe(true);
    });
    return signed;
  }
  const selected = async () => {
    const charge = await newCharge();
    return (await select(charge.id)).body as { id: string; cloneAddress: string };
  };

  it("deploys a burst of selections in one batch transaction and sets deployedAt", async () => {
    const relayer = new Relayer(chains.get(31337)!);
    try {
      await drain(relayer);
      const charges = [];
      for (let i = 0; i < 12; i++) charges.push(await selected());
      const nonce = await relayerNonce();
      await drain(relayer);
      expect(await relayerNonce()).toBe(nonce + 1);
      for (const charge of charges) {
        expect(await chain.provider.getCode(charge.cloneAddress)).not.toBe("0x");
        expect((await app.call("GET", `/v1/charges/${charge.id}`)).body.deployedAt).toMatch(/Z$/);
      }
      const txs = await app.db.prisma.relayerTransaction.findMany({ where: { kind: "DEPLOY" }, orderBy: { createdAt: "desc" }, take: 1 });
      expect(await app.db.prisma.cloneDeployment.count({ where: { txId: txs[0]!.id } })).toBe(12);
    } finally {
      relayer.close();
    }
  });

  it("ends with each clone deployed once whichever step the worker died after, or if someone deployed it first", async () => {
    const info = chains.get(31337)!;
    const relayer = new Relayer(info);
    try {
      await drain(relayer);
      // A: signed and stored as SENT, then the process died before broadcasting it: the very same
      // transaction is sent after the restart.
      const a = await selected();
      const before = await relayerNonce();
      const dying = new Relayer(info);
      const signedA = await storeUnsent(dying, [a.id]);
      dying.close();
      await drain(new Relayer(info));
      expect(await relayerNonce()).toBe(before + 1);
      expect((await chain.provider.getTransactionReceipt(signedA.hash))?.status).toBe(1);

      // B: broadcast and mined, but the process died before recording that: nothing new is sent.
      const b = await selected();
      const crashing = new Relayer(info);
      const signedB = await storeUnsent(crashing, [b.id]);
      await crashing.broadcast(signedB.raw);
      await chain.provider.waitForTransaction(signedB.hash);
      crashing.close();
      const afterB = await relayerNonce();
      await drain(new Relayer(info));
      expect(await relayerNonce()).toBe(afterB);

      // C: someone else deployed the clone first (anyone may): our batch skips it and succeeds.
      const c = await selected();
      await (await chain.wallet(4).sendTransaction({ to: info.factory, data: deployManyData([c.id]) })).wait();
      await drain(new Relayer(info));
      const batch = await app.db.prisma.relayerTransaction.findFirstOrThrow({ where: { deployments: { some: { chargeId: c.id } } } });
      expect((await chain.provider.getTransactionReceipt(batch.txHash!))?.status).toBe(1);

      for (const charge of [a, b, c]) {
        expect(await chain.provider.getCode(charge.cloneAddress)).not.toBe("0x");
        expect((await app.db.prisma.charge.findUniqueOrThrow({ where: { id: charge.id } })).deployedAt).not.toBeNull();
      }
    } finally {
      relayer.close();
    }
  });
});
