// No stranger can stall payouts (issue 41). Anyone may deploy a charge's clone, and a payout that
// creates a clone onto existing code burns the creation's whole allowance: with automine off, a
// stranger who sees our payout batch in the mempool deploys some of its clones with a higher tip, into
// the same block, ahead of it. Every charge is still paid out within a few blocks, with no operator and
// no failure counted; clones deployed before the payout is sent are not created again; and a batch that
// reverts as a whole splits itself until the clone that fails waits alone, while the others are paid.
import { concat, type Contract, getAddress, id, type JsonRpcProvider, Transaction, type TransactionReceipt, Wallet } from "ethers";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ChainSet, type EnabledChain } from "../../src/chain/chains.js";
import { type ChainRunner, startChainRunner } from "../../src/jobs/chain-runner.js";
import { runnerPassed, startTestChain, type TestChain, waitFor } from "../helpers/chain.js";
import { POLLING, SETTINGS, startApp, type TestApp } from "../helpers/harness.js";

const CONFIRMATIONS = 2;
const PAID = 10_000_000n;
const DEPLOYED = 1n << 255n;
const logger = pino({ level: process.env.TEST_LOG ?? "silent" });

let chain: TestChain;
let app: TestApp;
let devnet: EnabledChain;
let runner: ChainRunner | null = null;
let stranger: Wallet;

beforeAll(async () => {
  chain = await startTestChain();
  devnet = await chain.enabled(CONFIRMATIONS);
  app = await startApp({ ...POLLING, RATE_LIMIT_CREATE: "1000000" }, { chains: new ChainSet([devnet]) });
  stranger = chain.wallet(6);
}, 60_000);
afterAll(async () => {
  await runner?.stop();
  await app?.stop();
  await chain?.stop();
});

let seq = 0;
/** `n` charges picked on the test chain, each paid PAID, all in one block (so they are due together). */
async function paidCharges(n: number): Promise<{ id: string; clone: string }[]> {
  const charges = [];
  for (let i = 0; i < n; i++) {
    const made = (await app.call("POST", "/v1/charges", { body: { orderId: `stall-${++seq}`, amount: "10" } })).body;
    const picked = await app.call("POST", `/v1/public/charges/${made.id}/chain`, { body: { chainId: devnet.chainId }, key: null });
    expect(picked.status, JSON.stringify(picked.body)).toBe(200);
    charges.push({ id: made.id as string, clone: picked.body.cloneAddress as string });
  }
  await chain.automine(false);
  try {
    for (const c of charges) await chain.mint(c.clone, PAID);
    await chain.mine();
  } finally {
    await chain.automine(true);
  }
  return charges;
}

/** The entries of a payout transaction of ours: each clone's charge key, merchant, fee and DEPLOYED flag. */
function entriesOf(raw: string): { charge: string; merchant: string; feeBps: number; deployed: boolean }[] {
  const tx = Transaction.from(raw);
  const [, words] = chain.factory.interface.decodeFunctionData("payout", tx.data) as unknown as [string, bigint[]];
  const out = [];
  for (let i = 0; i < words.length; i += 2) {
    const account = words[i + 1]!;
    out.push({
      charge: `0x${words[i]!.toString(16).padStart(64, "0")}`,
      merchant: getAddress(`0x${(account & ((1n << 160n) - 1n)).toString(16).padStart(40, "0")}`),
      feeBps: Number((account >> 160n) & 0xffffn),
      deployed: (account & DEPLOYED) !== 0n,
    });
  }
  return out;
}

const flushTxs = () => app.db.prisma.relayerTransaction.findMany({ where: { kind: "FLUSH" }, orderBy: { nonce: "asc" } });

/**
 * Mines a block every 150 ms while `done` is false (automine off). Before each block, `onPending` sees
 * each of our payout transactions that waits in the mempool, once.
 */
async function mineUntil(done: () => Promise<boolean>, onPending: (raw: string, hash: string) => Promise<void>, timeoutMs = 90_000): Promise<void> {
  const seen = new Set<string>();
  const deadline = Date.now() + timeoutMs;
  while (!(await done())) {
    if (Date.now() > deadline) throw new Error("timed out");
    for (const tx of await flushTxs()) {
      const hash = tx.txHashes.at(-1)!;
      if (tx.status !== "SENT" || seen.has(hash) || !(await chain.provider.getTransaction(hash))) continue;
      seen.add(hash);
      await onPending(tx.rawTx, hash);
    }
    await chain.mine();
    await runnerPassed(runner!, chain.provider);
  }
}

/** The stranger's deployment of a clone, with a tip that puts it ahead of our payout in the block. */
async function frontRun(e: { charge: string; merchant: string; feeBps: number }, nonce: number): Promise<string> {
  const data = chain.factory.interface.encodeFunctionData("deploy", [e.charge, e.merchant, e.feeBps]);
  const tx = await stranger.sendTransaction({
    to: await chain.factory.getAddress(),
    data,
    nonce,
    gasLimit: 200_000,
    maxPriorityFeePerGas: 50_000_000_000n,
    maxFeePerGas: 200_000_000_000n,
  });
  return tx.hash;
}

async function receipt(provider: JsonRpcProvider, hash: string): Promise<TransactionReceipt> {
  return (await provider.getTransactionReceipt(hash))!;
}

async function allPaidOut(charges: { clone: string }[]): Promise<boolean> {
  for (const c of charges) if ((await chain.balance(c.clone)) !== 0n) return false;
  return true;
}

describe("a front-running stranger", () => {
  // K=48: every clone the batch creates (the other two were deployed before it was sent).
  for (const k of [2, 48]) {
    it(`N=50, K=${k}: deploys ${k} of our batch's clones into the block ahead of it; every charge is paid out within a few blocks, no failure, no operator`, async () => {
      const charges = await paidCharges(50);
      // Two more clones a stranger deployed before our payout was even sent: never created again.
      const early = charges.slice(10, 12);
      for (const c of early) {
        await (await (chain.factory.connect(stranger) as Contract).getFunction("deploy")(id(c.id), await walletOf(c.id), 100)).wait();
      }
      const flushesBefore = (await flushTxs()).length;
      await chain.automine(false);
      runner = startChainRunner(app.db, devnet, logger, { intervalMs: 50, settings: { ...SETTINGS, feed: app.live }, bumpAfterMs: 60_000 });
      const attacks: { ours: string; theirs: string[]; sentAt: number }[] = [];
      try {
        await mineUntil(
          async () => allPaidOut(charges),
          async (raw, hash) => {
            const sentAt = await chain.provider.getBlockNumber();
            const entries = entriesOf(raw);
            const keys = new Set(early.map((c) => id(c.id)));
            expect(entries.filter((e) => keys.has(e.charge)).every((e) => e.deployed)).toBe(true);
            const nonce = await chain.provider.getTransactionCount(stranger.address, "pending");
            const victims = entries.filter((e) => !e.deployed).slice(0, k);
            attacks.push({ ours: hash, theirs: await Promise.all(victims.map((e, i) => frontRun(e, nonce + i))), sentAt });
          },
        );
      } finally {
        await chain.automine(true);
        await runner.stop();
        runner = null;
      }
      expect(attacks.length).toBeGreaterThan(0);
      // The stranger's deployments were mined in the same block as our payout, ahead of it, and it still
      // paid, in the very next block: no payout waited for a retry. (How many blocks the whole run takes
      // depends on how fast the database confirms the payments, not on the stranger.)
      for (const a of attacks) {
        const ours = await receipt(chain.provider, a.ours);
        expect(ours.status).toBe(1);
        expect(ours.blockNumber).toBe(a.sentAt + 1);
        for (const t of a.theirs) {
          const theirs = await receipt(chain.provider, t);
          expect(theirs.blockNumber).toBe(ours.blockNumber);
          expect(theirs.index).toBeLessThan(ours.index);
        }
      }
      expect(attacks.flatMap((a) => a.theirs).length).toBe(k);
      // No payout of ours reverted or was dropped.
      const ours = (await flushTxs()).slice(flushesBefore);
      expect(ours.map((t) => t.status)).not.toContain("FAILED");
      const clones = await app.db.prisma.clone.findMany({ where: { chargeId: { in: charges.map((c) => c.id) } } });
      expect(clones.map((c) => [c.flushFailures, c.payoutBlockedReason])).toEqual(clones.map(() => [0, null]));
      // The ledger saw it all: every charge completes.
      runner = startChainRunner(app.db, devnet, logger, { intervalMs: 50, settings: { ...SETTINGS, feed: app.live }, bumpAfterMs: 60_000 });
      const producer = setInterval(() => void chain.mine().catch(() => {}), 100);
      try {
        await waitFor(
          "every charge completed",
          async () => (await app.db.prisma.charge.count({ where: { id: { in: charges.map((c) => c.id) }, status: "COMPLETED" } })) === charges.length,
        );
      } finally {
        clearInterval(producer);
        await runner.stop();
        runner = null;
      }
    }, 180_000);
  }
});

describe("a batch that reverts as a whole", () => {
  it("splits itself until the clone that reverts it waits alone; the others are paid at once, and only that one counts a failure", async () => {
    const charges = await paidCharges(8);
    const [bad, ...good] = charges;
    // A clone whose payout behaves on chain unlike in any simulation: in a real transaction (a gas price)
    // it burns all the gas it is given, so the factory runs short before the next clone and the whole
    // batch reverts; in an eth_call or an estimate (no gas price) it is the real clone. Its code: the
    // ERC-7511 proxy of the factory behind GASPRICE ISZERO's jump, and the burner after it.
    const factory = (await chain.factory.getAddress()).toLowerCase().slice(2);
    const code = concat(["0x3a603057", `0x365f5f375f5f365f73${factory}5af43d5f5f3e5f3d91602e57fd5bf3`, "0x5b603056"]);
    await chain.provider.send("anvil_setCode", [bad!.clone, code]);
    runner = startChainRunner(app.db, devnet, logger, { intervalMs: 50, settings: { ...SETTINGS, feed: app.live }, bumpAfterMs: 60_000 });
    const producer = setInterval(() => void chain.mine().catch(() => {}), 100);
    const where = { chargeId_chainId: { chargeId: bad!.id, chainId: devnet.chainId } };
    try {
      await waitFor("the good clones paid out and the bad one failed alone", async () => (await allPaidOut(good)) && (await clone(bad!.id)).flushFailures > 0);
    } finally {
      clearInterval(producer);
      await runner.stop();
      runner = null;
    }
    // 8 reverted, then 4 + 4 (the half with the bad clone reverted), 2 + 2, 1 + 1: the bad one alone,
    // where the transaction goes through and only it is not paid.
    const withBad = (await flushTxs()).filter((t) => entriesOf(t.rawTx).some((e) => e.charge === id(bad!.id)));
    expect(withBad.map((t) => [entriesOf(t.rawTx).length, t.status])).toEqual([
      [8, "FAILED"],
      [4, "FAILED"],
      [2, "FAILED"],
      [1, "CONFIRMED"],
    ]);
    const badClone = await app.db.prisma.clone.findUniqueOrThrow({ where });
    expect(badClone).toMatchObject({ flushFailures: 1, flushBatchMax: 1, payoutBlockedReason: null, flushId: null });
    expect(await chain.balance(bad!.clone)).toBe(PAID);
    const others = await app.db.prisma.clone.findMany({ where: { chargeId: { in: good.map((c) => c.id) } } });
    expect(others.map((c) => c.flushFailures)).toEqual(good.map(() => 0));
  }, 120_000);
});

const clone = (chargeId: string) => app.db.prisma.clone.findUniqueOrThrow({ where: { chargeId_chainId: { chargeId, chainId: devnet.chainId } } });
async function walletOf(chargeId: string): Promise<string> {
  return (await app.db.prisma.charge.findUniqueOrThrow({ where: { id: chargeId } })).settlementWallet;
}
