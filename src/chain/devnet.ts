// The local devnet of `npm start`: anvil (chain 31337) with Circle's real USDC (FiatToken v2.2
// behind its proxy, so blacklists, pauses and EIP-3009 behave as on Base) and our contracts, a
// funded test payer, enabled for test-mode keys. Its chain state lives in DATA_DIR/devnet next to
// the database, so a restart finds the same contracts, clones and balances.
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { Contract, getCreateAddress, JsonRpcProvider, Wallet } from "ethers";
import type { Logger } from "pino";
import { DEVNET_CHAIN_ID, startAnvil } from "./anvil.js";
import { Multicall3Artifact } from "./artifacts.js";
import { type EnabledChain, enableChain } from "./chains.js";
import { factoryV2Address, factoryV2Deployment, MULTICALL3 } from "./clones.js";
import { knownChain } from "./registry.js";
import { subscriptionsAddress, subscriptionsDeployment } from "./subscriptions.js";
import { circleUsdc, circleUsdcAddress, deployCircleUsdc, usdcInterface } from "./usdc.js";

/** Anvil's well-known development keys (public mnemonic "test test … junk"; worthless anywhere real). */
export const DEVNET_KEYS = {
  /** Relays (pays gas for) payouts and payments without gas. */
  relayer: "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80",
  /** Receives the protocol fee unless FEE_RECIPIENT says otherwise. */
  feeRecipient: "0x5de4111afa1a4b94908f83103eb1f1706367c2e68ca870fc3fb9a804cdab365a",
  /** The test buyer: holds USDC for `stablegate devnet pay`. */
  payer: "0x7c852118294e51e653712a81e05800f419141751be58f605c371e15141b007a6",
  /** USDC's issuer: owner, minter, pauser and blacklister, as Circle is on a real chain. */
  usdcIssuer: "0xdbda1821b80551c9d65939329250298aa3472ba22feea921c0cf5d620ea67b97",
  /** Deploys USDC (and administers its proxy) at a fixed address, and the factory through the deterministic deployer. */
  deployer: "0x2a871d0798f97d79848a013d4936a73bf4cc922c825d33c1cf7073dff6d409c6",
} as const;

/** What `stablegate devnet pay` needs to find the running devnet (DATA_DIR/devnet/devnet.json). */
export interface DevnetInfo {
  rpcUrl: string;
  chainId: number;
  usdc: string;
  /** ChargeFactoryV2 (deterministic for the fee recipient). */
  factory: string;
  /** ChargeFactoryV1, on a devnet made by a version before 2 (its clones still settle). */
  factoryV1?: string;
  feeRecipient: string;
  payerKey: string;
  /** USDC's issuer on the devnet: mints, blacklists and pauses (for trying those cases by hand). */
  usdcIssuerKey: string;
}

/** A running devnet. */
export interface Devnet {
  chain: EnabledChain;
  info: DevnetInfo;
  stop(): Promise<void>;
}

const PAYER_FLOAT = 1_000_000n * 10n ** 6n;

/** The devnet's directory under the data directory. */
export function devnetDir(dataDir: string): string {
  return resolve(dataDir, "devnet");
}

/** Reads the running devnet's address book, or explains how to get one. */
export function readDevnetInfo(dataDir: string): DevnetInfo {
  try {
    return JSON.parse(readFileSync(join(devnetDir(dataDir), "devnet.json"), "utf8")) as DevnetInfo;
  } catch {
    throw new Error(`No devnet found in ${devnetDir(dataDir)}: start the service with npm start (it runs the devnet in development).`);
  }
}

/**
 * Starts anvil on DATA_DIR/devnet/state.json, deploys USDC and the factory on first start (the same
 * addresses every time) and funds the payer. Its state is saved at most 1 s apart: a clone a crash
 * lost is deployed again by the payout that needs it (the factory deploys what has no code).
 */
export async function startDevnet(dataDir: string, logger: Logger, feeRecipient?: string): Promise<Devnet> {
  const dir = devnetDir(dataDir);
  mkdirSync(dir, { recursive: true });
  const anvil = await startAnvil({ statePath: join(dir, "state.json") });
  try {
    const info = await setUpDevnet(anvil.url, feeRecipient);
    writeDevnetInfo(dataDir, info);
    const chain = devnetChain(info);
    logger.info({ usdc: info.usdc, factory: info.factory }, "devnet running (chain 31337, test mode, Circle's USDC)");
    return { chain, info, stop: () => anvil.stop() };
  } catch (e) {
    await anvil.stop();
    throw e;
  }
}

/** The devnet as an enabled chain, relaying from anvil's first development key. */
export function devnetChain(info: DevnetInfo): EnabledChain {
  const registry = knownChain(DEVNET_CHAIN_ID)!;
  const chain = enableChain(
    {
      chainId: DEVNET_CHAIN_ID,
      rpcUrls: [info.rpcUrl],
      factory: info.factory,
      ...(info.factoryV1 && { factoryV1: info.factoryV1 }),
      feeRecipient: info.feeRecipient,
      confirmations: 1,
      relayerKey: DEVNET_KEYS.relayer,
      relayerMinBalance: registry.minRelayerBalance,
      maxFeePerGas: registry.maxFeePerGas,
      stuckAfterSeconds: registry.stuckAfterSeconds,
      watchTokens: registry.watchTokens,
    },
    info.usdc,
  );
  return { ...chain, local: true };
}

/**
 * Makes the anvil at `rpcUrl` a devnet: deploys USDC and the factory if they are not there yet (the
 * same addresses every time), puts Multicall3 at its address, and tops up the test payer. Returns its
 * address book.
 */
export async function setUpDevnet(rpcUrl: string, feeRecipient?: string): Promise<DevnetInfo> {
  const provider = new JsonRpcProvider(rpcUrl, DEVNET_CHAIN_ID, { staticNetwork: true, cacheTimeout: -1 });
  provider.pollingInterval = 100;
  try {
    const fees = feeRecipient ?? new Wallet(DEVNET_KEYS.feeRecipient).address;
    const { usdc, factory, factoryV1 } = await deployContracts(provider, fees);
    const payer = new Wallet(DEVNET_KEYS.payer).address;
    const token = circleUsdc(usdc, new Wallet(DEVNET_KEYS.usdcIssuer, provider));
    if ((await token.getFunction("balanceOf")(payer)) < PAYER_FLOAT / 2n) await (await token.getFunction("mint")(payer, PAYER_FLOAT)).wait();
    return {
      rpcUrl,
      chainId: DEVNET_CHAIN_ID,
      usdc,
      factory,
      ...(factoryV1 && { factoryV1 }),
      feeRecipient: fees,
      payerKey: DEVNET_KEYS.payer,
      usdcIssuerKey: DEVNET_KEYS.usdcIssuer,
    };
  } finally {
    provider.destroy();
  }
}

/** Writes the devnet's address book where `stablegate devnet pay` looks for it (DATA_DIR/devnet). */
export function writeDevnetInfo(dataDir: string, info: DevnetInfo): void {
  mkdirSync(devnetDir(dataDir), { recursive: true });
  writeFileSync(join(devnetDir(dataDir), "devnet.json"), `${JSON.stringify(info, null, 2)}\n`);
}

/** Sends `units` of devnet USDC from the funded test payer to `to`, like a buyer would; returns the mined transaction's hash. */
export function payFromTestWallet(info: DevnetInfo, to: string, units: bigint): Promise<string> {
  // One transfer at a time in this process: two wallets on one key would pick the same nonce.
  const paid = payerQueue.then(() => transfer(info, to, units));
  payerQueue = paid.then(
    () => undefined,
    () => undefined,
  );
  return paid;
}

let payerQueue: Promise<void> = Promise.resolve();

/** How long a test transfer (or the top-up before it) may take to be mined before the caller is told. */
const TRANSFER_TIMEOUT_MS = 30_000;

async function transfer(info: DevnetInfo, to: string, units: bigint): Promise<string> {
  const provider = new JsonRpcProvider(info.rpcUrl, info.chainId, { staticNetwork: true });
  try {
    const payer = new Wallet(info.payerKey, provider);
    const usdc = new Contract(info.usdc, usdcInterface, payer);
    // Devnet USDC is test money: a payment larger than what the wallet holds is minted first rather
    // than failing, so no caller (a test key on a shared devnet) can empty it for the others.
    const balance: bigint = await usdc.getFunction("balanceOf")(payer.address);
    if (balance < units) {
      const issuer = circleUsdc(info.usdc, new Wallet(info.usdcIssuerKey, provider));
      await (await issuer.getFunction("mint")(payer.address, units - balance + PAYER_FLOAT)).wait(1, TRANSFER_TIMEOUT_MS);
    }
    const tx = await usdc.getFunction("transfer")(to, units);
    await tx.wait(1, TRANSFER_TIMEOUT_MS);
    return tx.hash as string;
  } finally {
    provider.destroy();
  }
}

/**
 * Deploys Circle's USDC once (nonces 0–2 of the deployer, then its initialisation by the issuer),
 * ChargeFactoryV2 and SubscriptionsV1 for `feeRecipient` through the deterministic deployer (each
 * only where it has no code yet, so a devnet saved before subscriptions gains the contract on its
 * next start), and puts Multicall3 at its address. A devnet made by a version before 2 keeps its
 * ChargeFactoryV1 (the deployer's nonce 3).
 */
async function deployContracts(provider: JsonRpcProvider, feeRecipient: string): Promise<{ usdc: string; factory: string; factoryV1?: string }> {
  const deployer = new Wallet(DEVNET_KEYS.deployer, provider);
  const usdc = circleUsdcAddress(deployer.address);
  if ((await provider.getCode(usdc)) === "0x") {
    if ((await provider.getTransactionCount(deployer.address)) !== 0) {
      throw new Error(`The devnet state in DATA_DIR/devnet is inconsistent (contracts missing); stop the service and delete that directory.`);
    }
    await deployCircleUsdc({ admin: deployer, issuer: new Wallet(DEVNET_KEYS.usdcIssuer, provider) });
  }
  const factory = await deployFactoryV2(deployer, feeRecipient);
  await deploySubscriptionsV1(deployer, feeRecipient);
  await placeMulticall3(provider);
  const v1 = getCreateAddress({ from: deployer.address, nonce: 3 });
  return (await provider.getCode(v1)) === "0x" ? { usdc, factory } : { usdc, factory, factoryV1: v1 };
}

/** Deploys ChargeFactoryV2 for `feeRecipient` through the deterministic deployer unless it is there; returns its address. */
export async function deployFactoryV2(from: Wallet, feeRecipient: string): Promise<string> {
  const factory = factoryV2Address(feeRecipient);
  if ((await from.provider!.getCode(factory)) === "0x") await (await from.sendTransaction(factoryV2Deployment(feeRecipient))).wait();
  return factory;
}

/** Deploys SubscriptionsV1 for `feeRecipient` through the deterministic deployer unless it is there; returns its address. */
export async function deploySubscriptionsV1(from: Wallet, feeRecipient: string): Promise<string> {
  const address = subscriptionsAddress(feeRecipient);
  if ((await from.provider!.getCode(address)) === "0x") await (await from.sendTransaction(subscriptionsDeployment(feeRecipient))).wait();
  return address;
}

/** Puts the Multicall3 stand-in at Multicall3's address (anvil only), unless something is there. */
export async function placeMulticall3(provider: JsonRpcProvider): Promise<void> {
  if ((await provider.getCode(MULTICALL3)) !== "0x") return;
  // A creation call returns the code it would deploy.
  const code = await provider.call({ data: Multicall3Artifact.bytecode });
  await provider.send("anvil_setCode", [MULTICALL3, code]);
}
