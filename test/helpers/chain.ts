// A fresh anvil per test file, with Circle's real USDC (FiatToken v2.2 behind its proxy, deployed by
// anvil account 9, issued by account 8), ChargeFactoryV2 and SubscriptionsV1 deployed through the
// deterministic deployer (so they have the same address on every test chain with the same fee
// recipient: EnabledChain.subscriptions), and Multicall3; the
// first chain of a run deploys them, the others load its saved state.
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Contract, ContractFactory, id, JsonRpcProvider, toQuantity, Wallet, zeroPadValue } from "ethers";
import { type Anvil, startAnvil } from "../../src/chain/anvil.js";
import { ChargeFactoryV1Artifact, ChargeFactoryV2Artifact } from "../../src/chain/artifacts.js";
import { type EnabledChain, enableChain } from "../../src/chain/chains.js";
import { deployFactoryV2, deploySubscriptionsV1, type DevnetInfo, placeMulticall3 } from "../../src/chain/devnet.js";
import { knownChain } from "../../src/chain/registry.js";
import { circleUsdc, deployCircleUsdc } from "../../src/chain/usdc.js";
import type { Prisma } from "../../src/db/client.js";

/** Anvil's well-known development keys (public test mnemonic; worthless anywhere real). */
export const ANVIL_KEYS = [
  "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80",
  "0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d",
  "0x5de4111afa1a4b94908f83103eb1f1706367c2e68ca870fc3fb9a804cdab365a",
  "0x7c852118294e51e653712a81e05800f419141751be58f605c371e15141b007a6",
  "0x47e179ec197488593b187f80a00eb0da91f1b9d0b13f8733639f19c30a34926a",
  "0x8b3a350cf5c34c9194ca85829a2df0ec3153be0318b5e2d3348e872092edffba",
  "0x92db14e403b83dfe3df233f83dfa3a0d7096f21ca9b0d6d6b8d88b2b4ec1564e",
  "0x4bbbf85ce3377467afe5d46f804f221813b2bb87f24d81f60f1fcdbf7cbf4356",
  "0xdbda1821b80551c9d65939329250298aa3472ba22feea921c0cf5d620ea67b97",
  "0x2a871d0798f97d79848a013d4936a73bf4cc922c825d33c1cf7073dff6d409c6",
] as const;

export interface TestChain {
  anvil: Anvil;
  provider: JsonRpcProvider;
  /** Deploys the factory and pays gas (anvil account 0). */
  deployer: Wallet;
  /** Circle's USDC, connected to its issuer (mint, blacklist, pause…). */
  usdc: Contract;
  /** USDC's owner, minter, pauser and blacklister (anvil account 8). */
  issuer: Wallet;
  /** ChargeFactoryV2, connected to the deployer. */
  factory: Contract;
  feeRecipient: string;
  /** Deploys a ChargeFactoryV1 (clones made before version 2) from account 7. */
  deployV1(): Promise<Contract>;
  /** A funded wallet (anvil account `i`). */
  wallet(i: number): Wallet;
  /** The chain as the service enables it, relaying from account 0 (`url`: anvil's by default, or several endpoints; `factoryV1` for version 1 clones). */
  enabled(confirmations: number, url?: string | string[], extra?: { factoryV1?: string }): Promise<EnabledChain>;
  /** Mines `n` blocks (with whatever is in the mempool). */
  mine(n?: number): Promise<void>;
  /** Turns mining on every transaction on or off. */
  automine(on: boolean): Promise<void>;
  /** Has the issuer mint `amount` to `to`; resolves once sent (and mined if automining). */
  mint(to: string, amount: bigint): Promise<void>;
  /** Mints USDC to `from`, which sends `amount` base units to `to`; resolves once sent (and mined if automining). */
  pay(from: Wallet, to: string, amount: bigint): Promise<string>;
  /** USDC balance in base units. */
  balance(address: string): Promise<bigint>;
  /** How many payouts (transactions that moved USDC out of it) `clone` has made. */
  flushCount(clone: string): Promise<number>;
  stop(): Promise<void>;
}

/**
 * Starts anvil and deploys Circle's USDC and ChargeFactoryV2 (fee recipient: anvil account 2); `chainId`
 * makes it stand in for another chain of the registry (a second test-mode chain: 84532).
 */
export async function startTestChain(options: { chainId?: number } = {}): Promise<TestChain> {
  const anvil = await startAnvil(options);
  const provider = new JsonRpcProvider(anvil.url, anvil.chainId, { staticNetwork: true, cacheTimeout: -1 });
  provider.pollingInterval = 50;
  const wallets = ANVIL_KEYS.map((k) => new Wallet(k, provider));
  const deployer = wallets[0]!;
  const issuer = wallets[8]!;
  const feeRecipient = new Wallet(ANVIL_KEYS[2]).address;
  const deployed = await deployOrLoad(anvil.chainId, provider, async () => {
    const usdc = await deployCircleUsdc({ admin: wallets[9]!, issuer });
    const factory = await deployFactoryV2(deployer, feeRecipient);
    await deploySubscriptionsV1(deployer, feeRecipient);
    await placeMulticall3(provider);
    return { usdc, factory };
  });
  const usdc = circleUsdc(deployed.usdc, issuer);
  const factory = new Contract(deployed.factory, ChargeFactoryV2Artifact.abi, deployer);
  const mint = async (to: string, amount: bigint) => {
    await (await usdc.getFunction("mint")(to, amount)).wait(0);
  };
  return {
    anvil,
    provider,
    deployer,
    usdc,
    issuer,
    factory,
    feeRecipient,
    deployV1: () => deploy(new ContractFactory(ChargeFactoryV1Artifact.abi, ChargeFactoryV1Artifact.bytecode, wallets[7]!), feeRecipient),
    wallet: (i) => wallets[i]!,
    enabled: async (confirmations, url = anvil.url, extra = {}) => {
      const registry = knownChain(anvil.chainId)!;
      return enableChain(
        {
          chainId: anvil.chainId,
          rpcUrls: Array.isArray(url) ? url : [url],
          factory: await factory.getAddress(),
          ...extra,
          feeRecipient,
          confirmations,
          relayerKey: ANVIL_KEYS[0],
          relayerMinBalance: registry.minRelayerBalance,
          maxFeePerGas: registry.maxFeePerGas,
          stuckAfterSeconds: registry.stuckAfterSeconds,
          watchTokens: [],
        },
        await usdc.getAddress(),
      );
    },
    async mine(n = 1) {
      await provider.send("anvil_mine", [toQuantity(n)]);
    },
    async automine(on) {
      await provider.send("evm_setAutomine", [on]);
    },
    mint,
    async pay(from, to, amount) {
      await mint(from.address, amount);
      const tx = await (usdc.connect(from) as Contract).getFunction("transfer")(to, amount);
      return tx.hash as string;
    },
    balance: async (address) => (await usdc.getFunction("balanceOf")(address)) as bigint,
    async flushCount(clone) {
      // Each payout of a clone starts with its transfer to the merchant (the fee follows).
      const logs = await provider.getLogs({ address: await usdc.getAddress(), topics: [TRANSFER, zeroPadValue(clone, 32)], fromBlock: 0, toBlock: "latest" });
      return new Set(logs.map((l) => l.transactionHash)).size;
    },
    async stop() {
      provider.destroy();
      await anvil.stop();
    },
  };
}

const TRANSFER = id("Transfer(address,address,uint256)");

const OUTPUT = fileURLToPath(new URL("../.output/", import.meta.url));

/**
 * Runs `deploy` on the first test chain with this chain id, then saves anvil's state: the next ones
 * load it in one call instead of sending every deployment again (a second or so per test file).
 * The file's name carries a hash of src/chain/, this file and the lockfile (the contracts, how they
 * are deployed and anvil's version).
 */
async function deployOrLoad(
  chainId: number,
  provider: JsonRpcProvider,
  deploy: () => Promise<{ usdc: string; factory: string }>,
): Promise<{ usdc: string; factory: string }> {
  const file = join(OUTPUT, `anvil-${chainId}-${chainSourcesKey()}.json`);
  if (existsSync(file)) {
    const saved = JSON.parse(readFileSync(file, "utf8")) as { usdc: string; factory: string; state: string };
    await provider.send("anvil_loadState", [saved.state]);
    // The loaded blocks carry the time of the dump, and anvil would go on from it (an evm_revert
    // returns to its latest block's time): back to real time, with a block of now on top.
    await provider.send("evm_setTime", [Math.floor(Date.now() / 1000)]);
    await provider.send("anvil_mine", ["0x1"]);
    return { usdc: saved.usdc, factory: saved.factory };
  }
  const deployed = await deploy();
  const state = (await provider.send("anvil_dumpState", [])) as string;
  // The same block on top as a loaded chain has, so both start at the same height.
  await provider.send("anvil_mine", ["0x1"]);
  mkdirSync(OUTPUT, { recursive: true });
  // Written aside and renamed: another worker starting a chain meanwhile reads a whole file or none.
  const partial = `${file}.${process.pid}`;
  writeFileSync(partial, JSON.stringify({ ...deployed, state }));
  renameSync(partial, file);
  return deployed;
}

function chainSourcesKey(): string {
  const dir = fileURLToPath(new URL("../../src/chain/", import.meta.url));
  const hash = createHash("sha256");
  for (const file of [import.meta.url, new URL("../../package-lock.json", import.meta.url)]) hash.update(readFileSync(new URL(file)));
  for (const name of readdirSync(dir, { recursive: true, encoding: "utf8" }).sort()) {
    const path = join(dir, name);
    if (statSync(path).isFile()) hash.update(`${name}\0`).update(readFileSync(path));
  }
  return hash.digest("hex").slice(0, 16);
}

/** Mines a block every `everyMs` while started, so confirmations come; `start()` twice runs one timer. */
export function blockProducer(mine: () => Promise<void>, everyMs = 100): { start(): void; stop(): void } {
  let timer: NodeJS.Timeout | null = null;
  return {
    start: () => void (timer ??= setInterval(() => void mine().catch(() => {}), everyMs)),
    stop: () => {
      if (timer) clearInterval(timer);
      timer = null;
    },
  };
}

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

/**
 * Waits until `runner` has completed two whole ticks begun after this call, the last one indexed past
 * `block` (default: the chain's head now): whatever those blocks call for has been done, so "nothing
 * more happened" can be asserted after it. Two, because the tick in flight when called may have read
 * the chain before the change being looked at.
 */
export async function runnerPassed(
  runner: { progress: { passes: number; tip: bigint | null } },
  provider: JsonRpcProvider,
  block?: bigint | number,
  timeoutMs = 30_000,
): Promise<void> {
  const target = BigInt(block ?? (await provider.getBlockNumber()));
  const from = runner.progress.passes;
  await waitFor(
    `the chain runner's two ticks past block ${target} (it completed ${runner.progress.passes - from}, indexed to ${runner.progress.tip})`,
    async () => runner.progress.passes >= from + 2 && (runner.progress.tip ?? -1n) >= target,
    timeoutMs,
  );
}

/**
 * Waits until the worker has looked at the blocked payout of charge `chargeId` `times` more times: each
 * look puts the next one off (the clone's flushRetryAt moves on by blockedRecheckMs).
 */
export async function payoutLookedAgain(prisma: Prisma, chargeId: string, times = 1): Promise<void> {
  const retryAt = async () => (await prisma.clone.findFirst({ where: { chargeId } }))?.flushRetryAt?.getTime() ?? 0;
  let last = await retryAt();
  for (let i = 0; i < times; i++) {
    const seen = last;
    last = await waitFor(`look ${i + 1} of ${times} at the blocked payout of ${chargeId}`, async () => {
      const at = await retryAt();
      return at > seen ? at : undefined;
    });
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
  await chain.mint(new Wallet(payerKey).address, 1_000_000_000n);
  return {
    rpcUrl: chain.anvil.url,
    chainId: 31337,
    usdc: await chain.usdc.getAddress(),
    factory: await chain.factory.getAddress(),
    feeRecipient: chain.feeRecipient,
    payerKey,
    usdcIssuerKey: ANVIL_KEYS[8],
  };
}
