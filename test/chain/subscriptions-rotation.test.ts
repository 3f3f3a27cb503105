// SubscriptionsV1 as the service sees it: the devnet deploys it (also into a devnet saved before it
// existed); the chain runner records whether the contract has code (the chains a checkout may offer;
// /readyz names a chain without it), and, with RELAYER_PREVIOUS_KEYS,
// hands every old relayer key's permissions to the current key, so permissions signed naming the old
// key are pulled by the new one without the payers signing again and without gas on the old key.
import { Contract, JsonRpcProvider, MaxUint256, parseEther, toQuantity, Wallet } from "ethers";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startAnvil } from "../../src/chain/anvil.js";
import { SubscriptionsV1Artifact } from "../../src/chain/artifacts.js";
import { devnetChain, setUpDevnet } from "../../src/chain/devnet.js";
import type { EnabledChain } from "../../src/chain/chains.js";
import {
  type Permission,
  permissionTuple,
  permissionTypedData,
  subscriptionsDeployed,
  subscriptionSalt,
  UNTIL_REVOKED,
} from "../../src/chain/subscriptions.js";
import type { Database } from "../../src/db/client.js";
import { recordRelayerBalance, relayerProblems, subscriptionChainIds } from "../../src/domain/chain-status.js";
import { startChainRunner } from "../../src/jobs/chain-runner.js";
import { ANVIL_KEYS, runnerPassed, startTestChain, type TestChain, waitFor } from "../helpers/chain.js";
import { freshDatabase, SETTINGS } from "../helpers/harness.js";

let chain: TestChain;
let db: Database;
let drop: () => Promise<void>;
/** The chain as the service enables it after the rotation: relaying from anvil account 7. */
let rotated: EnabledChain;

beforeAll(async () => {
  chain = await startTestChain();
  ({ db, drop } = await freshDatabase());
  rotated = { ...(await chain.enabled(1)), relayerKey: ANVIL_KEYS[7] };
}, 60_000);
afterAll(async () => {
  await drop?.();
  await chain?.stop();
});

const logger = pino({ level: "silent" });
const PERIOD = 86_400n;
const CAP = 10_000_000n;

/** A funded payer's permission naming `spender`, approved on chain (submitted by a stranger) with an allowance in place. */
async function approvedPermission(spender: string): Promise<Permission> {
  const payer = Wallet.createRandom().connect(chain.provider);
  await chain.provider.send("anvil_setBalance", [payer.address, toQuantity(parseEther("1"))]);
  await chain.mint(payer.address, 100_000_000n);
  const contract = new Contract(rotated.subscriptions, SubscriptionsV1Artifact.abi, chain.wallet(5));
  await (await (chain.usdc.connect(payer) as Contract).getFunction("approve")(rotated.subscriptions, MaxUint256)).wait();
  const p: Permission = {
    payer: payer.address,
    merchant: Wallet.createRandom().address,
    token: await chain.usdc.getAddress(),
    spender,
    amount: CAP,
    feeBps: 100,
    period: PERIOD,
    start: BigInt((await chain.provider.getBlock("latest"))!.timestamp),
    end: UNTIL_REVOKED,
    salt: subscriptionSalt(`sub_rot_${spender}`),
  };
  const t = permissionTypedData(31337, rotated.subscriptions, p);
  await (await contract.getFunction("approve")(permissionTuple(p), await payer.signTypedData(t.domain, t.types, t.message))).wait();
  return p;
}

describe("relayer key rotation (RELAYER_PREVIOUS_KEYS)", () => {
  it("delegates each old key to the current relayer once, with no gas on the old keys; the new key then pulls the old permissions", async () => {
    const olds = [Wallet.createRandom(), Wallet.createRandom()];
    const permissions: Permission[] = [];
    for (const o of olds) permissions.push(await approvedPermission(o.address));
    const relayer = new Wallet(ANVIL_KEYS[7], chain.provider);
    const contract = new Contract(rotated.subscriptions, SubscriptionsV1Artifact.abi, relayer);
    const pull = async (p: Permission) => (await contract.getFunction("pull")(permissionTuple(p), CAP)).wait();
    // Before the rotation the new key is nobody to these permissions.
    await expect(contract.getFunction("pull").staticCall(permissionTuple(permissions[0]!), CAP)).rejects.toThrow();

    // The current key in the list too (an operator who appended rather than replaced): left alone.
    const runner = startChainRunner(db, rotated, logger, {
      intervalMs: 50,
      settings: SETTINGS,
      bumpAfterMs: 60_000,
      previousRelayerKeys: [...olds.map((o) => o.privateKey), ANVIL_KEYS[7]],
    });
    try {
      await waitFor("both old keys delegated", async () => {
        const delegates = await Promise.all(olds.map((o) => contract.getFunction("delegateOf")(o.address)));
        return delegates.every((d) => d === relayer.address);
      });
      await waitFor(
        "the delegations confirmed",
        async () => (await db.prisma.relayerTransaction.count({ where: { kind: "DELEGATE", status: "CONFIRMED" } })) === 2,
      );
      // Done: later ticks send nothing more.
      await runnerPassed(runner, chain.provider);
      expect(await db.prisma.relayerTransaction.count({ where: { kind: "DELEGATE" } })).toBe(2);
      expect(await contract.getFunction("delegateOf")(relayer.address)).toBe("0x0000000000000000000000000000000000000000");
    } finally {
      await runner.stop();
    }
    for (const o of olds) {
      expect(await chain.provider.getBalance(o.address)).toBe(0n);
      expect(await chain.provider.getTransactionCount(o.address)).toBe(0);
    }
    for (const p of permissions) {
      const fees = await chain.balance(chain.feeRecipient);
      await pull(p);
      expect(await chain.balance(p.merchant)).toBe(CAP - CAP / 100n);
      expect(await chain.balance(p.payer)).toBe(100_000_000n - CAP);
      expect((await chain.balance(chain.feeRecipient)) - fees).toBe(CAP / 100n);
    }

    // A second rotation (7 → 8): key 7, now the controller of the first keys' permissions, hands them
    // on; key 7 keeps no power over them and key 8 pulls them in the next window.
    const again = { ...rotated, relayerKey: ANVIL_KEYS[8] };
    const newest = new Wallet(ANVIL_KEYS[8], chain.provider);
    const second = startChainRunner(db, again, logger, {
      intervalMs: 50,
      settings: SETTINGS,
      bumpAfterMs: 60_000,
      previousRelayerKeys: [...olds.map((o) => o.privateKey), ANVIL_KEYS[7]],
    });
    try {
      await waitFor("the first keys handed on to key 8", async () => {
        const controllers = await Promise.all(olds.map((o) => contract.getFunction("controllerOf")(o.address)));
        return controllers.every((c) => c === newest.address);
      });
    } finally {
      await second.stop();
    }
    await chain.provider.send("evm_increaseTime", [Number(PERIOD)]);
    await chain.provider.send("evm_mine", []);
    await expect(contract.getFunction("pull").staticCall(permissionTuple(permissions[0]!), CAP)).rejects.toThrow();
    for (const p of permissions) {
      await (await (contract.connect(newest) as Contract).getFunction("pull")(permissionTuple(p), CAP)).wait();
      expect(await chain.balance(p.merchant)).toBe(2n * (CAP - CAP / 100n));
    }
  }, 90_000);
});

describe("where SubscriptionsV1 is deployed", () => {
  it("the runner records it per chain; a chain checked without it is named in /readyz's reasons and offered to no checkout", async () => {
    expect(await subscriptionsDeployed(chain.provider, rotated)).toBe(true);
    expect(await subscriptionsDeployed(chain.provider, { subscriptions: Wallet.createRandom().address })).toBe(false);
    const runner = startChainRunner(db, rotated, logger, { intervalMs: 50, settings: SETTINGS, bumpAfterMs: 60_000, balanceCheckMs: 50 });
    try {
      await waitFor("the chain checked", async () => (await subscriptionChainIds(db.prisma)).includes(31337));
    } finally {
      await runner.stop();
    }
    const chains = [{ chainId: 31337, nativeSymbol: "ETH", stuckAfterSeconds: 600 }];
    expect(await relayerProblems(db.prisma, chains)).toEqual([]);
    const row = (await db.prisma.chainStatus.findUniqueOrThrow({ where: { chainId: 31337 } }))!;
    await recordRelayerBalance(db.prisma, {
      chainId: 31337,
      relayerAddress: row.relayerAddress,
      balance: BigInt(row.relayerBalance.toFixed()),
      minBalance: 0n,
      checkedAt: new Date(),
      subscriptionsDeployed: false,
    });
    expect(await subscriptionChainIds(db.prisma)).toEqual([]);
    expect(await relayerProblems(db.prisma, chains)).toEqual([
      "chain 31337: SubscriptionsV1 is not deployed, so subscriptions cannot be offered there; deploy it with npm run contracts:deploy -- --chain 31337",
    ]);
    // A balance recorded without the check keeps what the last check found.
    await recordRelayerBalance(db.prisma, { chainId: 31337, relayerAddress: row.relayerAddress, balance: 1n, minBalance: 0n, checkedAt: new Date() });
    expect((await db.prisma.chainStatus.findUniqueOrThrow({ where: { chainId: 31337 } })).subscriptionsDeployed).toBe(false);
  }, 60_000);
});

describe("the devnet", () => {
  it("deploys SubscriptionsV1 for its fee recipient, and into a devnet state that lacks it on the next start", async () => {
    const anvil = await startAnvil();
    const provider = new JsonRpcProvider(anvil.url, anvil.chainId, { staticNetwork: true, cacheTimeout: -1 });
    try {
      const info = await setUpDevnet(anvil.url);
      const devnet = devnetChain(info);
      expect(await subscriptionsDeployed(provider, devnet)).toBe(true);
      const contract = new Contract(devnet.subscriptions, SubscriptionsV1Artifact.abi, provider);
      expect(await contract.getFunction("feeRecipient")()).toBe(info.feeRecipient);
      // A devnet saved by a version before subscriptions: everything but this contract.
      await provider.send("anvil_setCode", [devnet.subscriptions, "0x"]);
      await provider.send("anvil_setNonce", [devnet.subscriptions, "0x0"]);
      expect(await subscriptionsDeployed(provider, devnet)).toBe(false);
      expect(await setUpDevnet(anvil.url)).toEqual(info);
      expect(await subscriptionsDeployed(provider, devnet)).toBe(true);
    } finally {
      provider.destroy();
      await anvil.stop();
    }
  }, 60_000);
});
