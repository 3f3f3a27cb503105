import { getCreateAddress } from "ethers";
import { expect, it } from "vitest";
import { enableChain } from "../../src/chain/chains.js";
import { ConfigError, loadConfig } from "../../src/config.js";

const KEY = "0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d";
const FACTORY = "0x5FbDB2315678afecb367f032d93F642f64180aa3";

it("reads chains from CHAIN_<id>_* with registry defaults, and derives the implementation address", () => {
  const config = loadConfig({
    NODE_ENV: "development",
    CHAIN_8453_RPC_URL: "https://base.example",
    CHAIN_8453_FACTORY: FACTORY.toLowerCase(),
    CHAIN_84532_RPC_URL: "https://base-sepolia.example",
    CHAIN_84532_FACTORY: FACTORY,
    CHAIN_84532_CONFIRMATIONS: "7",
    RELAYER_PRIVATE_KEY: KEY,
    FEE_RECIPIENT: "0x70997970c51812dc3a010c7d01b50e0d17dc79c8",
  });
  expect(config.chains.map((c) => [c.chainId, c.confirmations, c.factory])).toEqual([
    [8453, 20, FACTORY],
    [84532, 7, FACTORY],
  ]);
  expect(config.feeRecipient).toBe("0x70997970C51812dc3A010C7d01b50e0d17dc79C8");
  expect(config.devnet).toBe(false);
  const base = enableChain(config.chains[0]!);
  expect(base).toMatchObject({
    name: "Base",
    testnet: false,
    usdc: "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913",
    implementation: getCreateAddress({ from: FACTORY, nonce: 1 }),
  });
});

it("names every bad chain setting at once", () => {
  const attempt = () =>
    loadConfig({
      CHAIN_8453_RPC_URL: "ftp://nope",
      CHAIN_8453_FACTORY: "0x123",
      CHAIN_8453_CONFIRMATIONS: "0",
      CHAIN_999_RPC_URL: "https://unknown.example",
      RELAYER_PRIVATE_KEY: "0xabc",
    });
  expect(attempt).toThrow(ConfigError);
  const message = (() => {
    try {
      attempt();
    } catch (e) {
      return (e as Error).message;
    }
  })();
  for (const v of ["CHAIN_8453_RPC_URL", "CHAIN_8453_FACTORY", "CHAIN_8453_CONFIRMATIONS", "RELAYER_PRIVATE_KEY", "CHAIN_999_RPC_URL", "FEE_RECIPIENT"]) {
    expect(message).toContain(v);
  }
});

it("runs the devnet only in development with no chains configured, unless told", () => {
  expect(loadConfig({ NODE_ENV: "development" }).devnet).toBe(true);
  expect(loadConfig({ NODE_ENV: "production" }).devnet).toBe(false);
  expect(loadConfig({ NODE_ENV: "test" }).devnet).toBe(false);
  expect(loadConfig({ NODE_ENV: "test", DEVNET: "true" }).devnet).toBe(true);
  expect(loadConfig({ NODE_ENV: "development", DEVNET: "false" }).devnet).toBe(false);
});

it("takes CHAIN_<id>_USDC only for a chain the registry has no USDC for", () => {
  const common = { CHAIN_31337_RPC_URL: "http://127.0.0.1:8545", CHAIN_31337_FACTORY: FACTORY, RELAYER_PRIVATE_KEY: KEY, FEE_RECIPIENT: FACTORY };
  const own = loadConfig({ ...common, CHAIN_31337_USDC: FACTORY.toLowerCase() });
  expect(enableChain(own.chains[0]!).usdc).toBe(FACTORY);
  expect(() => loadConfig(common)).toThrow(/CHAIN_31337_USDC: required for chain 31337/);
  expect(() =>
    loadConfig({ ...common, CHAIN_8453_RPC_URL: "https://base.example", CHAIN_8453_FACTORY: FACTORY, CHAIN_8453_USDC: FACTORY, CHAIN_31337_USDC: FACTORY }),
  ).toThrow(/CHAIN_8453_USDC: chain 8453 always uses native USDC/);
});

it("reads the worker's settings", () => {
  const config = loadConfig({ CHAIN_POLL_INTERVAL_MS: "250", RELAYER_BUMP_AFTER_MS: "5000", PARTIAL_PAYMENT_EXTENSION_MINUTES: "30" });
  expect(config).toMatchObject({ chainPollIntervalMs: 250, relayerBumpAfterMs: 5000, partialExtensionMinutes: 30 });
  expect(() => loadConfig({ CHAIN_POLL_INTERVAL_MS: "0" })).toThrow(/CHAIN_POLL_INTERVAL_MS/);
});
