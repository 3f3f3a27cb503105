// The ledger's invariants under random histories: payments (dust among them), payouts by us and by
// strangers, refunds paid by the merchant's wallet, shallow and deep reorgs (some transactions
// re-included, some not) and worker restarts, in an order a seeded generator picks; and deep reorgs
// whose handling is interrupted (the node refusing receipts for 2 s, the worker killed between the
// rollback and the re-check, a second reorg while the re-checks wait). Once the chain is quiet (after
// each interrupted reorg, and at the end), the reconciliation finds no difference, every clone holds
// what its ledger rows say, every charge's money fields are the sums of its rows, and no money waits
// in a clone. LEDGER_PROPERTY_SEEDS=50 tries more histories.
import { type Contract, parseUnits, Wallet } from "ethers";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ChainSet, type EnabledChain } from "../../src/chain/chains.js";
import { chargeKey, payoutWords } from "../../src/chain/clones.js";
import { ChainRpc } from "../../src/chain/rpc.js";
import { parseAmount } from "../../src/domain/money.js";
import { type ChainRunner, startChainRunner } from "../../src/jobs/chain-runner.js";
import { ChainIndexer } from "../../src/jobs/indexer.js";
import { reconcileChain } from "../../src/jobs/reconcile.js";
import { runnerPassed, startTestChain, type TestChain, waitFor } from "../helpers/chain.js";
import { POLLING, SETTINGS, startApp, type TestApp, WALLET } from "../helpers/harness.js";
import { type RpcProxy, startRpcProxy } from "../helpers/rpc-proxy.mjs";
import { seeded } from "../helpers/seeded.js";

const CONFIRMATIONS = 2;
const STEPS = 30;
const usdc = (s: string) => parseUnits(s, 6);
const logger = pino({ level: process.env.TEST_LOG ?? "silent" });

let chain: TestChain;
let app: TestApp;
let devnet: EnabledChain;
let runner: ChainRunner | null = null;
/** Between the worker and the node: it refuses receipts when an interrupted reorg asks it to. */
let proxy: RpcProxy;

beforeAll(async () => {
  chain = await startTestChain();
  proxy = await startRpcProxy(chain.anvil.url);
  devnet = await chain.enabled(CONFIRMATIONS, proxy.url);
  app = await startApp(POLLING, { chains: new ChainSet([devnet]) });
  // The merchant's wallet pays refunds; the payers and strangers pay gas.
  await chain.mint(WALLET, usdc("1000"));
}, 60_000);
afterAll(async () => {
  await runner?.stop();
  await app?.stop();
  await proxy?.close();
  await chain?.stop();
});

function startRunner() {
  runner = startChainRunner(app.db, devnet, logger, { intervalMs: 50, settings: { ...SETTINGS, feed: app.live }, bumpAfterMs: 2_000 });
}
async function restart() {
  await runner?.stop();
  startRunner();
}

interface Charge {
  id: string;
  address: string;
  wallet: string;
}

const signed = (amount: string) => (amount.startsWith("-") ? -parseAmount(amount.slice(1))! : parseAmount(amount)!);

/**
 * Quiet: the indexer stands on the chain's head (a chain a reorg made shorter is noticed only once it
 * grows past the indexer again), nothing waits for confirmations or for a relayer transaction, and no
 * payout is due.
 */
async function quiet(): Promise<boolean> {
  const { prisma } = app.db;
  const [cursor, head] = await Promise.all([prisma.chainCursor.findUnique({ where: { chainId: devnet.chainId } }), chain.provider.getBlock("latest")]);
  if (!cursor || cursor.blockNumber !== BigInt(head!.number) || cursor.blockHash !== head!.hash) return false;
  const [seen, open, due, rechecks] = await Promise.all([
    prisma.chainTransfer.count({ where: { status: "SEEN" } }),
    prisma.relayerTransaction.count({ where: { status: { in: ["SENT", "MINED"] } } }),
    prisma.$queryRaw<{ n: bigint }[]>`
      SELECT count(*) AS n FROM clones k JOIN charges c ON c.id = k.charge_id
      WHERE k.held >= ${SETTINGS.payoutMinAmount} AND c.status <> 'PENDING' AND k.payout_blocked_reason IS NULL`,
    prisma.reorgRecheck.count({ where: { doneAt: null } }),
  ]);
  return seen === 0 && open === 0 && due[0]!.n === 0n && rechecks === 0;
}

async function expectInvariants(charges: Charge[]) {
  const rpc = new ChainRpc(devnet.chainId, [chain.anvil.url]);
  try {
    const result = await reconcileChain(app.db.prisma, rpc, devnet);
    expect(result.skipped).toBeNull();
    expect(result.differences).toEqual([]);
  } finally {
    rpc.destroy();
  }
  for (const c of charges) {
    const rows = await app.db.prisma.balanceTransaction.findMany({ where: { chargeId: c.id } });
    const typeOf = new Map(rows.map((r) => [r.id, r.type]));
    const sum = (type: string) =>
      rows.filter((r) => (r.type === "reversal" ? typeOf.get(r.reversesId!) : r.type) === type).reduce((s, r) => s + BigInt(r.amount.toFixed()), 0n);
    const charge = (await app.call("GET", `/v1/charges/${c.id}`)).body;
    const money = (v: string | null) => (v === null ? 0n : signed(v));
    expect(money(charge.amountReceived), c.id).toBe(sum("payment"));
    expect(money(charge.netAmount), c.id).toBe(-sum("payout"));
    expect(money(charge.feeAmount), c.id).toBe(-sum("fee"));
    expect(money(charge.amountRefunded), c.id).toBe(-sum("refund"));
    // What the address holds on chain is what the ledger says it holds.
    const held = sum("payment") + sum("payout") + sum("fee");
    expect(await chain.balance(c.address), c.id).toBe(held);
    const clone = await app.db.prisma.clone.findUnique({ where: { chargeId_chainId: { chargeId: c.id, chainId: devnet.chainId } } });
    expect(BigInt(clone?.held.toFixed() ?? "0"), c.id).toBe(held);
  }
}

describe("random histories", () => {
  const extra = Number(process.env.LEDGER_PROPERTY_SEEDS ?? 0);
  for (const seed of [7, 2026, ...Array.from({ length: extra }, (_, i) => 1000 + i)]) {
    it(`seed ${seed}: after ${STEPS} steps, reconcile finds nothing and every field is the sum of its rows`, async () => {
      const rand = seeded(seed);
      const pick = <T>(xs: readonly T[]) => xs[Math.floor(rand() * xs.length)]!;
      startRunner();
      const charges: Charge[] = [];
      for (let i = 0; i < 4; i++) {
        const made = (await app.call("POST", "/v1/charges", { body: { orderId: `prop-${seed}-${i}`, amount: pick(["5", "10", "20"]) } })).body;
        const picked = await app.call("POST", `/v1/public/charges/${made.id}/chain`, { body: { chainId: devnet.chainId }, key: null });
        const { settlementWallet } = await app.db.prisma.charge.findUniqueOrThrow({ where: { id: made.id } });
        charges.push({ id: made.id, address: picked.body.cloneAddress, wallet: settlementWallet });
      }
      const payers = [3, 4, 5].map((i) => chain.wallet(i));
      for (const p of payers) await chain.mint(p.address, usdc("500"));
      const stranger = chain.wallet(6);
      /** Raw transactions sent since the last snapshot, to re-include some after a deep reorg. */
      let sent: string[] = [];
      let snapshot: string | null = null;
      const sendSigned = async (wallet: Wallet, tx: { to: string; data: string }) => {
        const raw = await wallet.signTransaction(await wallet.populateTransaction({ ...tx, gasLimit: 1_000_000 }));
        await chain.provider.broadcastTransaction(raw);
        sent.push(raw);
      };
      const token = chain.usdc as Contract;

      /**
       * A reorg deeper than the confirmations, every history has one: a payment confirmed, then the
       * chain forks from before it and never includes it again (the random reorgs may be too quick).
       */
      const deepReorg = async (c: Charge) => {
        const fork = await chain.provider.send("evm_snapshot", []);
        const data = token.interface.encodeFunctionData("transfer", [c.address, usdc("1.5")]);
        const tx = await pick(payers).sendTransaction({ to: await token.getAddress(), data, gasLimit: 1_000_000 });
        const confirmed = () => app.db.prisma.chainTransfer.count({ where: { txHash: tx.hash.toLowerCase(), status: "CONFIRMED" } });
        const producer = setInterval(() => void chain.mine().catch(() => {}), 100);
        try {
          await waitFor("the payment to be confirmed", async () => (await confirmed()) > 0, 30_000);
        } finally {
          clearInterval(producer);
        }
        await chain.provider.send("evm_revert", [fork]);
        // Snapshots taken after the fork are gone with it.
        snapshot = null;
        sent = [];
      };

      /**
       * Strangers before our payout: two clones (without code, if there are) deployed by someone else,
       * one of them paid in full so that our payout of it finds it deployed (it must not create it
       * again; a reorg may take the deployment away), the other paid a little that the stranger pays
       * out at once through the clone's own public flush.
       */
      const strangerDeploys = async () => {
        const bare = [];
        for (const c of charges) if ((await chain.provider.getCode(c.address)) === "0x") bare.push(c);
        const [a, b] = [...new Set([...bare, ...charges])] as [Charge, Charge];
        const [factory, usdcAddress] = [await chain.factory.getAddress(), await token.getAddress()];
        for (const c of [a, b]) {
          await sendSigned(stranger, { to: factory, data: chain.factory.interface.encodeFunctionData("deploy", [chargeKey(c.id), c.wallet, 100]) });
        }
        await sendSigned(pick(payers), { to: usdcAddress, data: token.interface.encodeFunctionData("transfer", [b.address, usdc("20")]) });
        await sendSigned(pick(payers), { to: usdcAddress, data: token.interface.encodeFunctionData("transfer", [a.address, usdc("1")]) });
        await sendSigned(stranger, { to: a.address, data: chain.factory.interface.encodeFunctionData("flush", [usdcAddress, chargeKey(a.id), a.wallet, 100]) });
      };

      /** Blocks come until the chain is quiet; then the ledger must equal the chain, with nothing stranded. */
      const quietAndAgreeing = async () => {
        const producer = setInterval(() => void chain.mine().catch(() => {}), 100);
        try {
          await waitFor("a quiet chain", quiet, 90_000);
        } finally {
          clearInterval(producer);
        }
        await expectInvariants(charges);
      };
      /** A payment into `c` sent now and waited for until it is confirmed; its block. */
      const paidAndConfirmed = async (c: Charge) => {
        const data = token.interface.encodeFunctionData("transfer", [c.address, usdc("2")]);
        const tx = await pick(payers).sendTransaction({ to: await token.getAddress(), data, gasLimit: 1_000_000 });
        const producer = setInterval(() => void chain.mine().catch(() => {}), 100);
        try {
          await waitFor(
            "the payment to be confirmed",
            async () => (await app.db.prisma.chainTransfer.count({ where: { txHash: tx.hash.toLowerCase(), status: "CONFIRMED" } })) > 0,
          );
        } finally {
          clearInterval(producer);
        }
      };
      const cursorBlock = async () => (await app.db.prisma.chainCursor.findUniqueOrThrow({ where: { chainId: devnet.chainId } })).blockNumber;
      /** The chain forks from `fork` (a snapshot taken at block `at`) and grows past the indexer. */
      const forkFrom = async (fork: string, at: number) => {
        await chain.provider.send("evm_revert", [fork]);
        await chain.mine(Number((await cursorBlock()) - BigInt(at)) + 3);
      };

      /**
       * A deep reorg while the node refuses receipts (several requests of them): the re-check fails, and
       * is done once they come back.
       */
      const reorgWithoutReceipts = async () => {
        const at = await chain.provider.getBlockNumber();
        const fork = await chain.provider.send("evm_snapshot", []);
        await paidAndConfirmed(pick(charges));
        proxy.setFaults({ refuseMethods: ["eth_getTransactionReceipt"] });
        proxy.reset();
        try {
          await forkFrom(fork, at);
          await waitFor("the rollback", async () => (await cursorBlock()) <= BigInt(at));
          // The worker asks for the receipts again and again, and is refused each time.
          await waitFor("three refused receipt requests", async () => (proxy.calls().eth_getTransactionReceipt ?? 0) >= 3);
        } finally {
          proxy.setFaults({});
        }
      };

      /**
       * A deep reorg whose worker is killed between the rollback and the re-check (a step that dies
       * once the rollback is committed), sometimes with a second, deeper reorg while the re-checks
       * wait; then a fresh worker.
       */
      const reorgThenKill = async () => {
        const outer = await chain.provider.getBlockNumber();
        const first = await chain.provider.send("evm_snapshot", []);
        await paidAndConfirmed(pick(charges));
        const inner = await chain.provider.getBlockNumber();
        const second = await chain.provider.send("evm_snapshot", []);
        await paidAndConfirmed(pick(charges));
        await runner?.stop();
        runner = null;
        const killed = new ChainRpc(devnet.chainId, [chain.anvil.url]);
        killed.getTransactionReceipt = async () => {
          throw new Error("the worker was killed");
        };
        // What the step did after the receipts were asked for died with the worker.
        const dies = () => new ChainIndexer(app.db.prisma, killed, devnet, logger, { ...SETTINGS, feed: app.live }).step().catch(() => null);
        try {
          await forkFrom(second, inner);
          await dies();
          // What the reorg left above its fork waits to be checked, once per transfer.
          const open = await app.db.prisma.reorgRecheck.findMany({ where: { doneAt: null }, select: { transferId: true } });
          expect(open.length).toBeGreaterThan(0);
          expect(new Set(open.map((r) => r.transferId)).size).toBe(open.length);
          // Sometimes a second, deeper reorg comes while they wait: the next worker finds both.
          if (rand() < 0.5) await forkFrom(first, outer);
        } finally {
          killed.destroy();
        }
        startRunner();
      };

      for (let step = 0; step < STEPS; step++) {
        if (step === STEPS / 2) await deepReorg(pick(charges));
        if (step === STEPS / 6) await strangerDeploys();
        // Interrupted reorg handling: the same invariants must hold right after each.
        if (step === STEPS / 3 || step === (2 * STEPS) / 3) {
          await (step === STEPS / 3 ? reorgWithoutReceipts() : reorgThenKill());
          snapshot = null;
          sent = [];
          await quietAndAgreeing();
        }
        const roll = rand();
        const c = pick(charges);
        if (roll < 0.35) {
          // A payment: mostly real money, sometimes dust.
          const amount = rand() < 0.2 ? 1n + BigInt(Math.floor(rand() * 5000)) : usdc(pick(["1", "2.5", "5", "10"]));
          const data = token.interface.encodeFunctionData("transfer", [c.address, amount]);
          await sendSigned(pick(payers), { to: await token.getAddress(), data });
        } else if (roll < 0.45) {
          // A stranger pays a clone out (all it holds), deploying it if needed.
          const data = chain.factory.interface.encodeFunctionData("payout", [
            await token.getAddress(),
            payoutWords({ chargeId: c.id, wallet: c.wallet, feeBps: 100, amount: 0n, deployed: false }),
          ]);
          await sendSigned(stranger, { to: await chain.factory.getAddress(), data });
        } else if (roll < 0.55) {
          // A refund of a little confirmed money, paid by the merchant's wallet.
          const res = await app.call("POST", `/v1/charges/${c.id}/refunds`, { body: { amount: "0.50", address: Wallet.createRandom().address } });
          if (res.status === 201) {
            const data = token.interface.encodeFunctionData("transfer", [res.body.address, usdc("0.5")]);
            await sendSigned(chain.wallet(1), { to: await token.getAddress(), data });
          }
        } else if (roll < 0.65) {
          snapshot = await chain.provider.send("evm_snapshot", []);
          sent = [];
        } else if (roll < 0.75 && snapshot) {
          // A reorg: shallow or deeper than the confirmations, with some of what it removed sent again.
          await chain.provider.send("evm_revert", [snapshot]);
          snapshot = null;
          for (const raw of sent) if (rand() < 0.5) await chain.provider.broadcastTransaction(raw).catch(() => {});
          sent = [];
        } else if (roll < 0.8) {
          await restart();
        } else if (roll < 0.85) {
          // A charge ends (cancelled with whatever it has, paid out then).
          await app.call("DELETE", `/v1/charges/${c.id}`);
        }
        await chain.mine(1 + Math.floor(rand() * 3));
        // Kept: the worker runs beside the walk, and a step in wall time lets it interleave anywhere in a
        // tick (mid-range, mid-payout); waiting for whole ticks instead would never catch it halfway.
        await new Promise((r) => setTimeout(r, 100));
      }

      // Quiet: blocks keep coming until nothing is left to confirm, send or pay out.
      const producer = setInterval(() => void chain.mine().catch(() => {}), 100);
      try {
        await waitFor("a quiet chain", quiet, 90_000);
        await chain.mine(CONFIRMATIONS + 2);
        await waitFor("a quiet chain", quiet, 30_000);
      } finally {
        clearInterval(producer);
      }
      await waitFor("the indexer at the head", quiet, 10_000);
      await runnerPassed(runner!, chain.provider);
      await expectInvariants(charges);
      // No money stranded: no payout stopped (strangers' deployments and flushes stall none).
      expect(await app.db.prisma.clone.count({ where: { chargeId: { in: charges.map((c) => c.id) }, payoutBlockedReason: { not: null } } })).toBe(0);
      // The history did what it is for: a reorg took confirmed money away.
      expect(await app.db.prisma.balanceTransaction.count({ where: { type: "reversal", chargeId: { in: charges.map((c) => c.id) } } })).toBeGreaterThan(0);
      await runner?.stop();
      runner = null;
    }, 180_000);
  }
});
