// A fresh anvil per test file, with mock USDC and the charge contracts deployed from anvil's first
// funded account.
import { Contract, ContractFactory, JsonRpcProvider, Wallet } from "ethers";
import { type Anvil, startAnvil } from "../../src/chain/anvil.js";
import { ChargeFactoryArtifact, MockUSDCArtifact } from "../../src/chain/artifacts.js";

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
    async stop() {
      provider.destroy();
      await anvil.stop();
    },
  };
}

async function deploy(factory: ContractFactory, ...args: unknown[]): Promise<Contract> {
  const contract = await factory.deploy(...args);
  await contract.waitForDeployment();
  return contract as Contract;
}
