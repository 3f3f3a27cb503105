// A fresh anvil per test file, with mock USDC and the charge contracts deployed from anvil's first
// funded account.
import { Contract, ContractFactory, id, JsonRpcProvider, toQuantity, Wallet } from "ethers";
import { type Anvil, startAnvil } from "../../src/chain/anvil.js";
import { ChargeFactoryArtifact, MockUSDCArtifact } from "../../src/chain/artifacts.js";
import { type EnabledChain, enableChain } from "../../src/chain/chains.js";
import type { DevnetInfo } from "../../src/chain/devnet.js";

/** Anvil's well-known development keys (public test mnemonic; worthless anywhere real). */
export const ANVIL_KEYS = [
  "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80",
  "0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d",
  "0x5de4111afa1a4b94908f83103eb1f1706367c2e68ca870fc3fb9a804cdab365a",
  "0x7c852118294e51e653712a81e05800f419141751be58f605c371e15141b007a6",
  "0x47e179ec197488593b187f80a00eb0da91f1b9d0b13f8733639f19c30a34926a",
] as const;

export interface TestChain {
  anvil: Anvil;
  provider: JsonRpcProvider;
  /** Deploys and pays gas (anvil account 0). */
  deployer: Wallet;
  usdc: Contract;
  factory: Contract;
  feeRecipient: string;
  /** A funded wallet (anvil account `i`). */
  wallet(i: number): Wallet;
  /** The chain as the service enables it, relaying from account 0 (`url` defaults to anvil's). */
  enabled(confirmations: number, url?: string): Promise<EnabledChain>;
  /** Mines `n` blocks (with whatever is in the mempool). */
  mine(n?: number): Promise<void>;
  /** Turns mining on every transaction on or off. */
  automine(on: boolean): Promise<void>;
  /** Mints mock USDC to `from` and sends `amount` base units to `to`; resolves once sent (and mined if automining). */
  pay(from: Wallet, to: string, amount: bigint): Promise<string>;
  /** USDC balance in base units. */
  balance(address: string): Promise<bigint>;
  /** How many Flushed events `clone` has emitted. */
  flushCount(clone: string): Promise<number>;
  stop(): Promise<void>;
}

/** Starts anvil and deploys MockUSDC and ChargeFactory (fee recipient: anvil account 2). */
export async function startTestChain(): Promise<TestChain> {
  const anvil = await startAnvil();
  const provider = new JsonRpcProvider(anvil.url, anvil.chainId, { staticNetwork: true, cacheTimeout: -1 });
  provider.pollingInterval = 50;
  const wallets = ANVIL_KEYS.map((k) => new Wallet(k, provider));
  const deployer = wallets[0]!;
  const feeRecipient = new Wallet(ANVIL_KEYS[2]).address;
  const usdc = await deploy(new ContractFactory(MockUSDCArtifact.abi, MockUSDCArtifact.bytecode, deployer));
  const factory = await deploy(new ContractFactory(ChargeFactoryArtifact.abi, ChargeFactoryArtifact.bytecode, deployer), feeRecipient);
  return {
    anvil,
    provider,
    deployer,
    usdc,
    factory,
    feeRecipient,
    wallet: (i) => wallets[i]!,
    enabled: async (confirmations, url = anvil.url) =>
      enableChain(
        { chainId: anvil.chainId, rpcUrl: url, factory: await factory.getAddress(), confirmations, relayerKey: ANVIL_KEYS[0] },
        await usdc.getAddress(),
      ),
    async mine(n = 1) {
      await provider.send("anvil_mine", [toQuantity(n)]);
    },
    async automine(on) {
      await provider.send("evm_setAutomine", [on]);
    },
    async pay(from, to, amount) {
      const token = usdc.connect(from) as Contract;
      await (await token.getFunction("mint")(from.address, amount)).wait(0);
      const tx = await token.getFunction("transfer")(to, amount);
      return tx.hash as string;
    },
    balance: async (address) => (await usdc.getFunction("balanceOf")(address)) as bigint,
    async flushCount(clone) {
      const logs = await provider.getLogs({ address: clone, topics: [FLUSHED], fromBlock: 0, toBlock: "latest" });
      return logs.length;
    },
    async stop() {
      provider.destroy();
      await anvil.stop();
    },
  };
}

const FLUSHED = id("Flushed(address,address,uint256,uint256)");

/** Polls `check` every 50 ms until it returns a value other than undefined/false, or fails after `timeoutMs`. */
export async function waitFor<T>(what: string, check: () => Promise<T | undefined | false>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function deploy(factory: ContractFactory, ...args: unknown[]): Promise<Contract> {
  const contract = await factory.deploy(...args);
  await contract.waitForDeployment();
  return contract as Contract;
}

/** The devnet as the service sees it when it runs one, with the test wallet (anvil account 4) funded. */
export async function testWalletDevnet(chain: TestChain): Promise<DevnetInfo> {
  const payerKey = ANVIL_KEYS[4];
  await (await (chain.usdc.connect(chain.wallet(4)) as Contract).getFunction("mint")(new Wallet(payerKey).address, 1_000_000_000n)).wait();
  return { rpcUrl: chain.anvil.url, chainId: 31337, usdc: await chain.usdc.getAddress(), factory: await chain.factory.getAddress(), payerKey };
}
