// The charge contracts on Circle's real USDC (FiatToken v2.2 behind its proxy): ChargeFactoryV2, whose
// clones are counterfactual (deployed by the payout that first needs them), every path of it; and
// ChargeFactoryV1, whose clones in the field must still settle.
import { Contract, ContractFactory, type ContractRunner, getCreateAddress, Interface, parseEther, Wallet } from "ethers";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ChargeCloneV1Artifact, ChargeFactoryV2Artifact, MockUSDCArtifact, SubscriptionsV1Artifact } from "../../src/chain/artifacts.js";
import { chargeKey, factoryV2Address, type PayoutEntry, payoutWords, predictCloneV1, predictCloneV2 } from "../../src/chain/clones.js";
import { subscriptionsAddress } from "../../src/chain/subscriptions.js";
import { ANVIL_KEYS, type TestChain, startTestChain } from "../helpers/chain.js";
import { TRANSFER_WITH_AUTHORIZATION_TYPES } from "../../src/lib/eip3009.js";

let chain: TestChain;
beforeAll(async () => {
  chain = await startTestChain();
}, 60_000);
afterAll(() => chain?.stop());

let n = 0;
const merchant = () => Wallet.createRandom().address;
const newChargeId = () => `chrg_test${++n}`;
const balance = async (who: string, token = chain.usdc) => (await token.getFunction("balanceOf")(who)) as bigint;
const usdcAddress = () => chain.usdc.getAddress();
const FAILED = 2n ** 256n - 1n;
const factoryAbi = new Interface(ChargeFactoryV2Artifact.abi);
/** A clone: the factory's code, reached through the clone's proxy. */
const clone = (address: string, runner: ContractRunner = chain.deployer) => new Contract(address, ChargeFactoryV2Artifact.abi, runner);

async function pay(to: string, amount: bigint, token = chain.usdc) {
  await (await token.getFunction("mint")(to, amount)).wait();
}

/** An entry for `payout`, with the address it pays out of. */
function entry(amount = 0n, feeBps = 100, wallet = merchant(), deployed = false): PayoutEntry & { address: string } {
  const e = { chargeId: newChargeId(), wallet, feeBps, amount, deployed };
  return { ...e, address: predictCloneV2({ factory: chain.factory.target as string, ...e }) };
}

/** What `payout` reports for `entries` (simulated), then sends it; returns the simulation and the receipt. */
async function payout(entries: PayoutEntry[], token?: string, runner: ContractRunner = chain.deployer) {
  const f = chain.factory.connect(runner) as Contract;
  const words = entries.flatMap(payoutWords);
  const t = token ?? (await usdcAddress());
  const paid = (await f.getFunction("payout").staticCall(t, words)) as bigint[];
  const receipt = await (await f.getFunction("payout")(t, words)).wait();
  return { paid: [...paid], receipt };
}

describe("ChargeFactoryV2: addresses", () => {
  it("is at the deterministic address for its fee recipient, and predicts clones locally, on chain, before anything exists", async () => {
    expect(chain.factory.target).toBe(factoryV2Address(chain.feeRecipient));
    expect(await chain.factory.getFunction("feeRecipient")()).toBe(chain.feeRecipient);
    const e = entry();
    expect(await chain.factory.getFunction("predict")(chargeKey(e.chargeId), e.wallet, e.feeBps)).toBe(e.address);
    // The fee and the wallet are part of the address: a change of either is another address.
    expect(predictCloneV2({ factory: chain.factory.target as string, chargeId: e.chargeId, wallet: e.wallet, feeBps: 101 })).not.toBe(e.address);
    expect(predictCloneV2({ factory: chain.factory.target as string, chargeId: e.chargeId, wallet: merchant(), feeBps: 100 })).not.toBe(e.address);
    expect(await chain.provider.getCode(e.address)).toBe("0x");
  });

  it("deploy() makes the 44-byte proxy of the factory once; asked again, it returns the same clone", async () => {
    const e = entry();
    await (await chain.factory.getFunction("deploy")(chargeKey(e.chargeId), e.wallet, e.feeBps)).wait();
    const code = await chain.provider.getCode(e.address);
    expect(code.length).toBe(2 + 44 * 2);
    expect(code.toLowerCase()).toContain((chain.factory.target as string).slice(2).toLowerCase());
    expect(await chain.factory.getFunction("deploy").staticCall(chargeKey(e.chargeId), e.wallet, e.feeBps)).toBe(e.address);
    await expect(chain.factory.getFunction("deploy").staticCall(chargeKey(newChargeId()), merchant(), 10_001)).rejects.toThrow();
  });
});

describe("ChargeFactoryV2: payouts", () => {
  it("deploys the clone in the payout that first needs it and splits to the base unit: fee = floor(amount * bps / 10000)", async () => {
    const cases: [bigint, number][] = [
      [1n, 100],
      [99n, 100],
      [100n, 100],
      [1n, 10_000],
      [25_000_000n, 100],
      [25_000_000n, 0],
      [25_000_000n, 10_000],
      [999_999n, 250],
      [1_000_000_000_000n, 1],
      [123_456_789n, 9_999],
      [2n ** 128n, 333],
    ];
    const entries = cases.map(([amount, bps]) => entry(0n, bps));
    for (const [i, [amount]] of cases.entries()) await pay(entries[i]!.address, amount);
    const feeBefore = await balance(chain.feeRecipient);
    const { paid } = await payout(entries);
    expect(paid).toEqual(cases.map(([amount]) => amount));
    let fees = 0n;
    for (const [i, [amount, bps]] of cases.entries()) {
      const fee = (amount * BigInt(bps)) / 10_000n;
      fees += fee;
      expect(await balance(entries[i]!.wallet), `${amount} @ ${bps}`).toBe(amount - fee);
      expect(await balance(entries[i]!.address)).toBe(0n);
      expect(await chain.provider.getCode(entries[i]!.address)).not.toBe("0x");
    }
    expect((await balance(chain.feeRecipient)) - feeBefore).toBe(fees);
  });

  it("pays exactly the amount asked and leaves the rest; asks for more than there is: FAILED, nothing moves", async () => {
    const e = entry(7_000_000n);
    await pay(e.address, 10_000_000n);
    expect((await payout([e])).paid).toEqual([7_000_000n]);
    expect(await balance(e.wallet)).toBe(6_930_000n);
    expect(await balance(e.address)).toBe(3_000_000n);
    const again = { ...e, amount: 3_000_001n, deployed: true };
    expect((await payout([again])).paid).toEqual([FAILED]);
    expect(await balance(e.address)).toBe(3_000_000n);
    // Amount 0: all of it.
    expect((await payout([{ ...e, amount: 0n, deployed: true }])).paid).toEqual([3_000_000n]);
    expect(await balance(e.address)).toBe(0n);
    // Empty: 0, no transfer.
    const { paid, receipt } = await payout([{ ...e, amount: 0n, deployed: true }]);
    expect(paid).toEqual([0n]);
    expect(receipt.logs).toHaveLength(0);
  });

  it("takes a wrong `deployed` flag in its stride: flagged and absent pays nothing; unflagged and present still pays", async () => {
    const absent = entry(1_000_000n, 100, merchant(), true);
    await pay(absent.address, 1_000_000n);
    expect((await payout([absent])).paid).toEqual([FAILED]);
    expect(await balance(absent.address)).toBe(1_000_000n);
    expect(await chain.provider.getCode(absent.address)).toBe("0x");
    const present = entry(1_000_000n);
    await (await chain.factory.getFunction("deploy")(chargeKey(present.chargeId), present.wallet, present.feeBps)).wait();
    await pay(present.address, 1_000_000n);
    expect((await payout([{ ...present, deployed: false }])).paid).toEqual([1_000_000n]);
    expect(await balance(present.wallet)).toBe(990_000n);
  });

  it("pays 50 clones in one transaction; one the token refuses (a blacklisted wallet) is skipped whole, the others paid", async () => {
    const wallet = merchant();
    const entries = Array.from({ length: 50 }, (_, i) => entry(1_000_000n + BigInt(i), 100, wallet));
    const bad = entry(2_000_000n);
    for (const e of [...entries, bad]) await pay(e.address, e.amount);
    await (await chain.usdc.getFunction("blacklist")(bad.wallet)).wait();
    try {
      const all = [...entries.slice(0, 25), bad, ...entries.slice(25)];
      const { paid } = await payout(all);
      expect(paid[25]).toBe(FAILED);
      expect(paid.filter((p) => p !== FAILED)).toHaveLength(50);
      const total = entries.reduce((s, e) => s + e.amount, 0n);
      const fees = entries.reduce((s, e) => s + (e.amount * 100n) / 10_000n, 0n);
      expect(await balance(wallet)).toBe(total - fees);
      // Skipped whole: nothing left the refused clone, not even its fee.
      expect(await balance(bad.address)).toBe(2_000_000n);
    } finally {
      await (await chain.usdc.getFunction("unBlacklist")(bad.wallet)).wait();
    }
    // A fee over 100% is refused whole.
    await expect(
      chain.factory.getFunction("payout").staticCall(
        await usdcAddress(),
        payoutWords({ ...entry(), feeBps: 10_000 }).map((w, i) => (i === 1 ? BigInt(w) + (1n << 160n) : w)),
      ),
    ).rejects.toThrow();
  });

  it("never waits for the fee: with the fee recipient blacklisted the merchant is paid and the fee waits in the factory for it", async () => {
    const e = entry();
    await pay(e.address, 10_000_000n);
    const factory = chain.factory.target as string;
    const heldBefore = await balance(factory);
    await (await chain.usdc.getFunction("blacklist")(chain.feeRecipient)).wait();
    try {
      expect((await payout([e])).paid).toEqual([10_000_000n]);
      expect(await balance(e.wallet)).toBe(9_900_000n);
      expect((await balance(factory)) - heldBefore).toBe(100_000n);
      // The fee recipient cannot be paid while blacklisted: the fees wait.
      await expect(chain.factory.getFunction("withdrawFees").staticCall(await usdcAddress())).rejects.toThrow();
    } finally {
      await (await chain.usdc.getFunction("unBlacklist")(chain.feeRecipient)).wait();
    }
    const feeBefore = await balance(chain.feeRecipient);
    await (await (chain.factory.connect(chain.wallet(5)) as Contract).getFunction("withdrawFees")(await usdcAddress())).wait();
    expect((await balance(chain.feeRecipient)) - feeBefore).toBe(heldBefore + 100_000n);
    expect(await balance(factory)).toBe(0n);
  });

  it("pays nothing while the token is paused (FAILED), and pays once it is not", async () => {
    const e = entry();
    await pay(e.address, 1_000_000n);
    await (await chain.usdc.getFunction("pause")()).wait();
    try {
      expect((await payout([e])).paid).toEqual([FAILED]);
    } finally {
      await (await chain.usdc.getFunction("unpause")()).wait();
    }
    expect((await payout([e])).paid).toEqual([1_000_000n]);
  });
});

describe("ChargeFactoryV2: sweeps", () => {
  it("pays another ERC-20 out to the merchant, fee and all", async () => {
    const other = (await new ContractFactory(MockUSDCArtifact.abi, MockUSDCArtifact.bytecode, chain.deployer).deploy()) as Contract;
    await other.waitForDeployment();
    const e = entry();
    await pay(e.address, 1_000n, other);
    expect((await payout([e], await other.getAddress())).paid).toEqual([1_000n]);
    expect(await balance(e.wallet, other)).toBe(990n);
    expect(await balance(chain.feeRecipient, other)).toBe(10n);
  });

  it("pays out the native coin sent before the clone existed, and sent to it after", async () => {
    const e = entry(0n, 250);
    await (await chain.wallet(6).sendTransaction({ to: e.address, value: parseEther("1") })).wait();
    const feeBefore = await chain.provider.getBalance(chain.feeRecipient);
    const words = payoutWords(e);
    expect(await chain.factory.getFunction("payoutNative").staticCall(words)).toEqual([parseEther("1")]);
    await (await chain.factory.getFunction("payoutNative")(words)).wait();
    expect(await chain.provider.getBalance(e.wallet)).toBe(parseEther("0.975"));
    expect((await chain.provider.getBalance(chain.feeRecipient)) - feeBefore).toBe(parseEther("0.025"));
    expect(await chain.provider.getBalance(e.address)).toBe(0n);
    // Deployed now: a plain transfer still lands, and is paid out the same way.
    await (await chain.wallet(6).sendTransaction({ to: e.address, value: parseEther("0.5") })).wait();
    await (await chain.factory.getFunction("payoutNative")(payoutWords({ ...e, deployed: true }))).wait();
    expect(await chain.provider.getBalance(e.wallet)).toBe(parseEther("1.4625"));
  });
});

describe("ChargeFactoryV2: non-custodial, tested adversarially", () => {
  it("lets a stranger call anything, yet money only ever reaches the merchant and the fee recipient", async () => {
    const stranger = chain.wallet(4);
    const strangerAddress = await stranger.getAddress();
    const usdc = await usdcAddress();
    const ours = entry(0n, 100);
    await pay(ours.address, 5_000_000n);
    const asStranger = chain.factory.connect(stranger) as Contract;

    // The same charge with the stranger's wallet, or a fee of 0, is another address: ours is untouched.
    await (await asStranger.getFunction("payout")(usdc, payoutWords({ ...ours, wallet: strangerAddress, feeBps: 0 }))).wait();
    expect(await balance(ours.address)).toBe(5_000_000n);
    expect(await balance(strangerAddress)).toBe(0n);

    await (await asStranger.getFunction("deploy")(chargeKey(ours.chargeId), ours.wallet, ours.feeBps)).wait();
    const theClone = clone(ours.address, stranger);
    // A clone checks what it is told against its own address.
    await expect(theClone.getFunction("flush").staticCall(usdc, chargeKey(ours.chargeId), strangerAddress, 100)).rejects.toThrow();
    await expect(theClone.getFunction("flushAmount").staticCall(usdc, chargeKey(ours.chargeId), ours.wallet, 0, 5_000_000n)).rejects.toThrow();
    await expect(theClone.getFunction("flushNative").staticCall(chargeKey(newChargeId()), ours.wallet, 100)).rejects.toThrow();
    // The factory's own functions refuse to run through a clone, and the clone's on the factory (which holds fees).
    await expect(theClone.getFunction("payout").staticCall(usdc, payoutWords(ours))).rejects.toThrow();
    await expect(theClone.getFunction("withdrawFees").staticCall(usdc)).rejects.toThrow();
    await pay(chain.factory.target as string, 1n);
    await expect(asStranger.getFunction("flush").staticCall(usdc, chargeKey(ours.chargeId), strangerAddress, 0)).rejects.toThrow();
    await expect(asStranger.getFunction("create").staticCall(chargeKey(newChargeId()))).rejects.toThrow();
    // Unknown calls: refused.
    for (const data of ["0xdeadbeef", `0xa9059cbb${strangerAddress.slice(2).padStart(64, "0")}${"ff".repeat(32)}`]) {
      await expect(stranger.call({ to: ours.address, data })).rejects.toThrow();
    }

    // Anyone may pay it out, with the right arguments: to the merchant and the fee recipient, never the caller.
    const feeBefore = await balance(chain.feeRecipient);
    await (await theClone.getFunction("flush")(usdc, chargeKey(ours.chargeId), ours.wallet, ours.feeBps)).wait();
    await (await asStranger.getFunction("payout")(usdc, [...payoutWords({ ...ours, deployed: true }), ...payoutWords({ ...ours, deployed: true })])).wait();
    expect(await balance(ours.wallet)).toBe(4_950_000n);
    expect((await balance(chain.feeRecipient)) - feeBefore).toBe(50_000n);
    expect(await balance(strangerAddress)).toBe(0n);
  });

  it("burns at most CREATE_GAS when someone deployed a clone first and the payout was told it was not there", async () => {
    const e = entry(1_000_000n);
    await pay(e.address, 1_000_000n);
    await (await (chain.factory.connect(chain.wallet(4)) as Contract).getFunction("deploy")(chargeKey(e.chargeId), e.wallet, e.feeBps)).wait();
    const { paid, receipt } = await payout([e]);
    expect(paid).toEqual([1_000_000n]);
    expect(receipt.gasUsed).toBeLessThan(200_000n);
  });
});

describe("ChargeFactoryV1: clones made before version 2 still settle", () => {
  it("predicts, deploys and flushes as before (deployAndFlush for one never deployed), fee to its fee recipient", async () => {
    const v1 = await chain.deployV1();
    const implementation = getCreateAddress({ from: v1.target as string, nonce: 1 });
    const chargeId = newChargeId();
    const wallet = merchant();
    const address = predictCloneV1({ factory: v1.target as string, implementation, chargeId, wallet, feeBps: 100 });
    expect(await v1.getFunction("predict")(chargeKey(chargeId), wallet, 100)).toBe(address);
    await pay(address, 10_000_000n);
    await (await v1.getFunction("deployAndFlush")(chargeKey(chargeId), wallet, 100, await usdcAddress())).wait();
    expect(await balance(wallet)).toBe(9_900_000n);
    await pay(address, 1_000_000n);
    await (await new Contract(address, ChargeCloneV1Artifact.abi, chain.deployer).getFunction("flush")(await usdcAddress())).wait();
    expect(await balance(wallet)).toBe(10_890_000n);
    expect(await new Contract(address, ChargeCloneV1Artifact.abi, chain.provider).getFunction("merchant")()).toBe(wallet);
  });
});

describe("Circle's USDC, as the devnet and these tests run it", () => {
  it("has 6 decimals and USDC's EIP-712 domain, and honours EIP-2612 permits and EIP-3009 authorizations once", async () => {
    const usdc = chain.usdc;
    const address = await usdc.getAddress();
    expect(await usdc.getFunction("decimals")()).toBe(6n);
    const holder = chain.wallet(3);
    const holderAddress = await holder.getAddress();
    const relayer = chain.wallet(4);
    await pay(holderAddress, 100_000_000n);
    const domain = { name: "USD Coin", version: "2", chainId: chain.anvil.chainId, verifyingContract: address };
    expect(await usdc.getFunction("DOMAIN_SEPARATOR")()).toBe((await import("ethers")).TypedDataEncoder.hashDomain(domain));

    // EIP-2612
    const spender = await relayer.getAddress();
    const deadline = BigInt(Math.floor(Date.now() / 1000) + 3600);
    const permit = { owner: holderAddress, spender, value: 5_000_000n, nonce: 0n, deadline };
    const permitTypes = {
      Permit: ["owner", "spender", "value", "nonce", "deadline"].map((name) => ({
        name,
        type: name === "owner" || name === "spender" ? "address" : "uint256",
      })),
    };
    const sig = (await import("ethers")).Signature.from(await holder.signTypedData(domain, permitTypes, permit));
    const asRelayer = usdc.connect(relayer) as Contract;
    await (await asRelayer.getFunction("permit")(holderAddress, spender, 5_000_000n, deadline, sig.v, sig.r, sig.s)).wait();
    expect(await usdc.getFunction("allowance")(holderAddress, spender)).toBe(5_000_000n);
    await expect(asRelayer.getFunction("permit").staticCall(holderAddress, spender, 5_000_000n, deadline, sig.v, sig.r, sig.s)).rejects.toThrow();

    // EIP-3009
    const to = Wallet.createRandom().address;
    const nonce = `0x${"ab".repeat(32)}`;
    const auth = { from: holderAddress, to, value: 7_000_000n, validAfter: 0n, validBefore: deadline, nonce };
    const a = (await import("ethers")).Signature.from(await holder.signTypedData(domain, TRANSFER_WITH_AUTHORIZATION_TYPES, auth));
    const args = [holderAddress, to, 7_000_000n, 0n, deadline, nonce, a.v, a.r, a.s] as const;
    await (await asRelayer.getFunction("transferWithAuthorization")(...args)).wait();
    expect(await balance(to)).toBe(7_000_000n);
    expect(await usdc.getFunction("authorizationState")(holderAddress, nonce)).toBe(true);
    await expect(asRelayer.getFunction("transferWithAuthorization").staticCall(...args)).rejects.toThrow();
    // A tampered amount does not verify.
    await expect(
      asRelayer.getFunction("transferWithAuthorization").staticCall(holderAddress, to, 8_000_000n, 0n, deadline, `0x${"cd".repeat(32)}`, a.v, a.r, a.s),
    ).rejects.toThrow();
  });
});

describe("npm run contracts:deploy", () => {
  it("deploys ChargeFactoryV2 and SubscriptionsV1 through the deterministic deployer at the fee recipient's addresses; again, they are already there", async () => {
    const { execFile } = await import("node:child_process");
    const { promisify } = await import("node:util");
    const run = (env: Record<string, string | undefined>) =>
      promisify(execFile)(process.execPath, ["dist/cli/contracts.js", "deploy", "--chain", "31337"], { env });
    const feeRecipient = Wallet.createRandom().address;
    const env = { ...process.env, CHAIN_31337_RPC_URL: chain.anvil.url, RELAYER_PRIVATE_KEY: ANVIL_KEYS[4], FEE_RECIPIENT: feeRecipient };
    const { stdout } = await run(env);
    expect(stdout).toContain(`Deployed ChargeFactoryV2 at ${factoryV2Address(feeRecipient)} in 0x`);
    expect(stdout).toContain(`Deployed SubscriptionsV1 at ${subscriptionsAddress(feeRecipient)} in 0x`);
    expect(/CHAIN_31337_FACTORY=(0x[0-9a-fA-F]{40})/.exec(stdout)?.[1]).toBe(factoryV2Address(feeRecipient));
    expect(await new Contract(factoryV2Address(feeRecipient), factoryAbi, chain.provider).getFunction("feeRecipient")()).toBe(feeRecipient);
    const subscriptions = new Contract(subscriptionsAddress(feeRecipient), SubscriptionsV1Artifact.abi, chain.provider);
    expect(await subscriptions.getFunction("feeRecipient")()).toBe(feeRecipient);
    const again = (await run(env)).stdout;
    expect(again).toMatch(/ChargeFactoryV2 for fee recipient .* is already on Local devnet/);
    expect(again).toMatch(/SubscriptionsV1 for fee recipient .* is already on Local devnet/);

    const missing = await run({ PATH: process.env.PATH }).catch((e) => e);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/CHAIN_31337_RPC_URL.*\n.*RELAYER_PRIVATE_KEY.*\n.*FEE_RECIPIENT/);
  });
});
