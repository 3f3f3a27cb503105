import { Contract, type ContractRunner, parseUnits, Wallet } from "ethers";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ChargeCloneArtifact } from "../../src/chain/artifacts.js";
import { cloneSalt, predictCloneAddress } from "../../src/chain/clones.js";
import { ANVIL_KEYS, type TestChain, startTestChain } from "../helpers/chain.js";

let chain: TestChain;
beforeAll(async () => {
  chain = await startTestChain();
}, 60_000);
afterAll(() => chain?.stop());

let n = 0;
const merchant = () => Wallet.createRandom().address;
const newChargeId = () => `chrg_test${++n}`;
const balance = async (who: string, token = chain.usdc) => (await token.getFunction("balanceOf")(who)) as bigint;
const clone = (address: string, runner: ContractRunner = chain.deployer) => new Contract(address, ChargeCloneArtifact.abi, runner);

/** Deploys a charge's clone through the factory and returns its address (as predicted). */
async function deployClone(chargeId: string, wallet: string, feeBps: number, runner: ContractRunner = chain.deployer): Promise<string> {
  const factory = chain.factory.connect(runner) as Contract;
  const predicted = await factory.getFunction("predict")(cloneSalt(chargeId), wallet, feeBps);
  await (await factory.getFunction("deploy")(cloneSalt(chargeId), wallet, feeBps)).wait();
  return predicted;
}

async function pay(to: string, amount: bigint, token = chain.usdc) {
  await (await token.getFunction("mint")(to, amount)).wait();
}

describe("ChargeClone and ChargeFactory", () => {
  it("predicts the deployed address, locally and on chain, before anything is deployed", async () => {
    const chargeId = newChargeId();
    const wallet = merchant();
    const implementation = await chain.factory.getFunction("implementation")();
    const local = predictCloneAddress({ factory: await chain.factory.getAddress(), implementation, chargeId, wallet, feeBps: 100 });
    expect(await chain.provider.getCode(local)).toBe("0x");
    expect(await deployClone(chargeId, wallet, 100)).toBe(local);
    expect(await chain.provider.getCode(local)).not.toBe("0x");
    expect(await clone(local).getFunction("merchant")()).toBe(wallet);
    expect(await clone(local).getFunction("feeBps")()).toBe(100n);
    expect(await clone(local).getFunction("feeRecipient")()).toBe(chain.feeRecipient);
  });

  it("splits exactly: fee = floor(amount * bps / 10000) to the fee recipient, the rest to the merchant", async () => {
    const cases: [bigint, number][] = [
      [1n, 100],
      [99n, 100],
      [100n, 100],
      [1n, 10_000],
      [parseUnits("25", 6), 100],
      [parseUnits("25", 6), 0],
      [parseUnits("25", 6), 10_000],
      [parseUnits("0.999999", 6), 250],
      [parseUnits("1000000", 6), 1],
      [123_456_789n, 9_999],
      [2n ** 128n, 333],
    ];
    for (const [amount, bps] of cases) {
      const wallet = merchant();
      const address = await deployClone(newChargeId(), wallet, bps);
      await pay(address, amount);
      const feeBefore = await balance(chain.feeRecipient);
      const receipt = await (await clone(address, chain.wallet(4)).getFunction("flush")(await chain.usdc.getAddress())).wait();
      const fee = (amount * BigInt(bps)) / 10_000n;
      expect(await balance(wallet), `${amount} @ ${bps}`).toBe(amount - fee);
      expect((await balance(chain.feeRecipient)) - feeBefore).toBe(fee);
      expect(await balance(address)).toBe(0n);
      const event = receipt.logs.map((l: any) => clone(address).interface.parseLog(l)).find((e: any) => e?.name === "Flushed");
      expect([event.args.net, event.args.fee, event.args.merchant]).toEqual([amount - fee, fee, wallet]);
    }
  });

  it("treats a zero balance as a no-op", async () => {
    const address = await deployClone(newChargeId(), merchant(), 100);
    const receipt = await (await clone(address).getFunction("flush")(await chain.usdc.getAddress())).wait();
    expect(receipt.status).toBe(1);
    expect(receipt.logs).toHaveLength(0);
  });

  it("flushes funds that arrived before deployment, once deployed (deployAndFlush)", async () => {
    const chargeId = newChargeId();
    const wallet = merchant();
    const address = await chain.factory.getFunction("predict")(cloneSalt(chargeId), wallet, 100);
    await pay(address, 10_000_000n);
    await (await chain.factory.getFunction("deployAndFlush")(cloneSalt(chargeId), wallet, 100, await chain.usdc.getAddress())).wait();
    expect(await balance(wallet)).toBe(9_900_000n);
    // Already deployed: deployAndFlush only flushes.
    await pay(address, 1_000_000n);
    await (await chain.factory.getFunction("deployAndFlush")(cloneSalt(chargeId), wallet, 100, await chain.usdc.getAddress())).wait();
    expect(await balance(wallet)).toBe(10_890_000n);
  });

  it("refuses a second deploy of the same charge", async () => {
    const chargeId = newChargeId();
    const wallet = merchant();
    await deployClone(chargeId, wallet, 100);
    await expect(chain.factory.getFunction("deploy").staticCall(cloneSalt(chargeId), wallet, 100)).rejects.toThrow();
  });

  it("deploys many clones in one deployMany, skipping any that exist already, at the predicted addresses", async () => {
    const factory = chain.factory;
    const entries = Array.from({ length: 20 }, (_, i) => ({ chargeId: newChargeId(), wallet: merchant(), feeBps: i * 10 }));
    const predicted = await Promise.all(entries.map((e) => factory.getFunction("predict")(cloneSalt(e.chargeId), e.wallet, e.feeBps)));
    // Someone deployed two of them first (anyone may).
    await deployClone(entries[3]!.chargeId, entries[3]!.wallet, entries[3]!.feeBps, chain.wallet(4));
    await deployClone(entries[17]!.chargeId, entries[17]!.wallet, entries[17]!.feeBps, chain.wallet(4));
    const args = [entries.map((e) => cloneSalt(e.chargeId)), entries.map((e) => e.wallet), entries.map((e) => e.feeBps)];
    const receipt = await (await factory.getFunction("deployMany")(...args)).wait();
    expect(receipt.status).toBe(1);
    for (const [i, address] of predicted.entries()) {
      expect(await chain.provider.getCode(address)).not.toBe("0x");
      expect(await clone(address).getFunction("merchant")()).toBe(entries[i]!.wallet);
      expect(await clone(address).getFunction("feeBps")()).toBe(BigInt(entries[i]!.feeBps));
    }
    // Sent again (a crash, a race): nothing to do, and it still succeeds.
    expect((await (await factory.getFunction("deployMany")(...args)).wait()).status).toBe(1);
    // Malformed batches are refused whole.
    await expect(factory.getFunction("deployMany").staticCall(args[0], args[1]!.slice(1), args[2])).rejects.toThrow();
    await expect(factory.getFunction("deployMany").staticCall([cloneSalt(newChargeId())], [merchant()], [10_001])).rejects.toThrow();
  });

  it("flushes 50 clones in one flushMany, skipping addresses that cannot pay", async () => {
    const wallet = merchant();
    const clones: string[] = [];
    for (let i = 0; i < 50; i++) {
      const address = await deployClone(newChargeId(), wallet, 100);
      await pay(address, 1_000_000n + BigInt(i));
      clones.push(address);
    }
    const feeBefore = await balance(chain.feeRecipient);
    const withJunk = [...clones.slice(0, 25), Wallet.createRandom().address, await chain.usdc.getAddress(), ...clones.slice(25)];
    await (await chain.factory.getFunction("flushMany")(await chain.usdc.getAddress(), withJunk)).wait();
    const total = clones.reduce((sum, _, i) => sum + 1_000_000n + BigInt(i), 0n);
    const fees = clones.reduce((sum, _, i) => sum + ((1_000_000n + BigInt(i)) * 100n) / 10_000n, 0n);
    expect(await balance(wallet)).toBe(total - fees);
    expect((await balance(chain.feeRecipient)) - feeBefore).toBe(fees);
    for (const c of clones) expect(await balance(c)).toBe(0n);
  });

  it("flushes any ERC-20, not only USDC", async () => {
    const { ContractFactory } = await import("ethers");
    const { MockUSDCArtifact } = await import("../../src/chain/artifacts.js");
    const other = (await new ContractFactory(MockUSDCArtifact.abi, MockUSDCArtifact.bytecode, chain.deployer).deploy()) as Contract;
    await other.waitForDeployment();
    const wallet = merchant();
    const address = await deployClone(newChargeId(), wallet, 500);
    await pay(address, 1_000n, other);
    await (await clone(address).getFunction("flush")(await other.getAddress())).wait();
    expect(await balance(wallet, other)).toBe(950n);
    expect(await balance(chain.feeRecipient, other)).toBe(50n);
  });
});

describe("non-custodial, tested adversarially", () => {
  it("lets a stranger call anything, yet money only ever reaches the merchant and the fee recipient", async () => {
    const stranger = chain.wallet(4);
    const strangerAddress = await stranger.getAddress();
    const usdc = await chain.usdc.getAddress();
    const chargeId = newChargeId();
    const wallet = merchant();
    const ours = await deployClone(chargeId, wallet, 100);
    await pay(ours, 5_000_000n);
    const asStranger = chain.factory.connect(stranger) as Contract;

    // The same salt with the stranger's wallet is a different clone: ours is untouched.
    const theirs = await asStranger.getFunction("predict")(cloneSalt(chargeId), strangerAddress, 0);
    expect(theirs).not.toBe(ours);
    await (await asStranger.getFunction("deployAndFlush")(cloneSalt(chargeId), strangerAddress, 0, usdc)).wait();
    expect(await balance(ours)).toBe(5_000_000n);
    expect(await balance(strangerAddress)).toBe(0n);

    // The implementation itself refuses to flush (its "arguments" would be its own code).
    const implementation = await chain.factory.getFunction("implementation")();
    await pay(implementation, 1n);
    await expect(clone(implementation, stranger).getFunction("flush").staticCall(usdc)).rejects.toThrow(/NotAClone|revert/);

    // Random calldata, ETH, unknown selectors: all refused.
    for (const data of ["0x", "0xdeadbeef", `0xa9059cbb${strangerAddress.slice(2).padStart(64, "0")}${"ff".repeat(32)}`]) {
      await expect(stranger.call({ to: ours, data })).rejects.toThrow();
    }
    await expect(stranger.sendTransaction({ to: ours, value: 1n })).rejects.toThrow();
    expect(await chain.provider.getBalance(ours)).toBe(0n);

    // A fee over 100% cannot be deployed.
    await expect(asStranger.getFunction("deploy").staticCall(cloneSalt(newChargeId()), strangerAddress, 10_001)).rejects.toThrow();

    // Anyone may flush our clone: it pays the merchant and the fee recipient, never the caller.
    const feeBefore = await balance(chain.feeRecipient);
    await (await clone(ours, stranger).getFunction("flush")(usdc)).wait();
    await (await asStranger.getFunction("flushMany")(usdc, [ours, ours])).wait();
    expect(await balance(wallet)).toBe(4_950_000n);
    expect((await balance(chain.feeRecipient)) - feeBefore).toBe(50_000n);
    expect(await balance(strangerAddress)).toBe(0n);
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
    const authTypes = {
      TransferWithAuthorization: [
        { name: "from", type: "address" },
        { name: "to", type: "address" },
        { name: "value", type: "uint256" },
        { name: "validAfter", type: "uint256" },
        { name: "validBefore", type: "uint256" },
        { name: "nonce", type: "bytes32" },
      ],
    };
    const a = (await import("ethers")).Signature.from(await holder.signTypedData(domain, authTypes, auth));
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
  it("deploys a working factory to a chain given its RPC URL, a funded key and the fee recipient", async () => {
    const { execFile } = await import("node:child_process");
    const { promisify } = await import("node:util");
    const env = { ...process.env, CHAIN_31337_RPC_URL: chain.anvil.url, RELAYER_PRIVATE_KEY: ANVIL_KEYS[4], FEE_RECIPIENT: chain.feeRecipient };
    const { stdout } = await promisify(execFile)(process.execPath, ["dist/cli/contracts.js", "deploy", "--chain", "31337"], { env });
    const factory = /CHAIN_31337_FACTORY=(0x[0-9a-fA-F]{40})/.exec(stdout)?.[1];
    expect(factory).toBeDefined();
    const deployed = new Contract(factory!, chain.factory.interface, chain.provider);
    expect(await clone(await deployed.getFunction("implementation")()).getFunction("feeRecipient")()).toBe(chain.feeRecipient);

    const missing = await promisify(execFile)(process.execPath, ["dist/cli/contracts.js", "deploy", "--chain", "31337"], {
      env: { PATH: process.env.PATH },
    }).catch((e) => e);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/CHAIN_31337_RPC_URL.*\n.*RELAYER_PRIVATE_KEY.*\n.*FEE_RECIPIENT/);
  });
});
