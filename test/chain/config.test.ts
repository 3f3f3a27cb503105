import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { getCreateAddress, parseEther, parseUnits } from "ethers";
import { afterAll, describe, expect, it } from "vitest";
import { enableChain } from "../../src/chain/chains.js";
import { factoryV2Address } from "../../src/chain/clones.js";
import { knownChain, knownChains } from "../../src/chain/registry.js";
import { ConfigError, loadConfig } from "../../src/config.js";

const KEY = "0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d";
const FEE_RECIPIENT = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";
/** The ChargeFactoryV2 address follows from the fee recipient alone. */
const FACTORY = factoryV2Address(FEE_RECIPIENT);
const usdc = (s: string) => parseUnits(s, 6);
const V1_FACTORY = "0x5FbDB2315678afecb367f032d93F642f64180aa3";

it("reads chains from CHAIN_<id>_* with registry defaults, and derives the version 1 implementation address", () => {
  const config = loadConfig({
    NODE_ENV: "development",
    CHAIN_8453_RPC_URL: "https://base.example",
    CHAIN_8453_FACTORY: FACTORY.toLowerCase(),
    CHAIN_84532_RPC_URL: "https://base-sepolia.example",
    CHAIN_84532_FACTORY: FACTORY,
    CHAIN_84532_CONFIRMATIONS: "7",
    CHAIN_84532_FACTORY_V1: V1_FACTORY,
    RELAYER_PRIVATE_KEY: KEY,
    FEE_RECIPIENT: FEE_RECIPIENT.toLowerCase(),
  });
  expect(config.chains.map((c) => [c.chainId, c.confirmations, c.factory])).toEqual([
    [8453, 20, FACTORY],
    [84532, 7, FACTORY],
  ]);
  expect(config.feeRecipient).toBe("0x70997970C51812dc3A010C7d01b50e0d17dc79C8");
  expect(config.devnet).toBe(false);
  const base = enableChain(config.chains[0]!);
  expect(base).toMatchObject({ name: "Base", testnet: false, usdc: "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913", feeRecipient: FEE_RECIPIENT });
  expect(base.v1).toBeUndefined();
  expect(enableChain(config.chains[1]!).v1).toEqual({ factory: V1_FACTORY, implementation: getCreateAddress({ from: V1_FACTORY, nonce: 1 }) });
});

it("refuses a factory that is not ChargeFactoryV2 for FEE_RECIPIENT, pointing a version 1 factory to CHAIN_<id>_FACTORY_V1", () => {
  const attempt = () => loadConfig({ CHAIN_8453_RPC_URL: "https://base.example", CHAIN_8453_FACTORY: V1_FACTORY, RELAYER_PRIVATE_KEY: KEY, FEE_RECIPIENT });
  expect(attempt).toThrow(`CHAIN_8453_FACTORY: ${V1_FACTORY} is not ChargeFactoryV2 for FEE_RECIPIENT (expected ${FACTORY}`);
  expect(attempt).toThrow(/belongs in CHAIN_8453_FACTORY_V1/);
  expect(() => loadConfig({ CHAIN_8453_RPC_URL: "https://base.example", RELAYER_PRIVATE_KEY: KEY, FEE_RECIPIENT })).toThrow(
    `CHAIN_8453_FACTORY: required, the ChargeFactoryV2 address ${FACTORY}`,
  );
});

it("reads the relayer's fee ceiling, stuck limit and watched tokens per chain, with registry defaults", () => {
  const common = { CHAIN_8453_RPC_URL: "https://base.example", CHAIN_8453_FACTORY: FACTORY, RELAYER_PRIVATE_KEY: KEY, FEE_RECIPIENT };
  const defaults = loadConfig(common).chains[0]!;
  expect(defaults.maxFeePerGas).toBeGreaterThan(0n);
  expect(defaults.stuckAfterSeconds).toBeGreaterThanOrEqual(30);
  const token = "0xfde4C96c8593536E31F229EA8f37b2ADa2699bb2";
  const own = loadConfig({
    ...common,
    CHAIN_8453_MAX_FEE_PER_GAS: "2.5",
    CHAIN_8453_RELAYER_STUCK_AFTER: "120",
    CHAIN_8453_WATCH_TOKENS: token.toLowerCase(),
  }).chains[0]!;
  expect(own).toMatchObject({ maxFeePerGas: parseUnits("2.5", "gwei"), stuckAfterSeconds: 120, watchTokens: [token] });
  const bad = () =>
    loadConfig({
      ...common,
      CHAIN_8453_MAX_FEE_PER_GAS: "-1",
      CHAIN_8453_RELAYER_STUCK_AFTER: "5",
      CHAIN_8453_WATCH_TOKENS: "0x12",
      CHAIN_8453_FACTORY_V1: "nope",
    });
  for (const name of ["CHAIN_8453_MAX_FEE_PER_GAS", "CHAIN_8453_RELAYER_STUCK_AFTER", "CHAIN_8453_WATCH_TOKENS", "CHAIN_8453_FACTORY_V1"]) {
    expect(bad).toThrow(name);
  }
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
  const common = { CHAIN_31337_RPC_URL: "http://127.0.0.1:8545", CHAIN_31337_FACTORY: FACTORY, RELAYER_PRIVATE_KEY: KEY, FEE_RECIPIENT };
  const own = loadConfig({ ...common, CHAIN_31337_USDC: V1_FACTORY.toLowerCase() });
  expect(enableChain(own.chains[0]!).usdc).toBe(V1_FACTORY);
  expect(() => loadConfig(common)).toThrow(/CHAIN_31337_USDC: required for chain 31337/);
  expect(() =>
    loadConfig({
      ...common,
      CHAIN_8453_RPC_URL: "https://base.example",
      CHAIN_8453_FACTORY: FACTORY,
      CHAIN_8453_USDC: V1_FACTORY,
      CHAIN_31337_USDC: V1_FACTORY,
    }),
  ).toThrow(/CHAIN_8453_USDC: chain 8453 always uses native USDC/);
});

it("reads the worker's settings", () => {
  const config = loadConfig({ CHAIN_POLL_INTERVAL_MS: "250", RELAYER_BUMP_AFTER_MS: "5000", PARTIAL_PAYMENT_EXTENSION_MINUTES: "30" });
  expect(config).toMatchObject({ chainPollIntervalMs: 250, relayerBumpAfterMs: 5000, partialExtensionMinutes: 30 });
  expect(() => loadConfig({ CHAIN_POLL_INTERVAL_MS: "0" })).toThrow(/CHAIN_POLL_INTERVAL_MS/);
});

it("takes several RPC URLs per chain, in order, and never repeats one in an error (they carry provider keys)", () => {
  const common = { CHAIN_8453_FACTORY: FACTORY, RELAYER_PRIVATE_KEY: KEY, FEE_RECIPIENT };
  const config = loadConfig({ ...common, CHAIN_8453_RPC_URL: "https://a.example/v2/key-a, https://b.example/key-b\nhttps://c.example" });
  expect(config.chains[0]!.rpcUrls).toEqual(["https://a.example/v2/key-a", "https://b.example/key-b", "https://c.example"]);
  const bad = () => loadConfig({ ...common, CHAIN_8453_RPC_URL: "https://a.example/v2/key-a wss://b.example/ws/sekret" });
  expect(bad).toThrow("CHAIN_8453_RPC_URL: endpoint 2 of 2 is not an http(s) URL");
  expect(bad).not.toThrow(/sekret|key-a/);
});

it("reads CHAIN_<id>_RELAYER_MIN_BALANCE in the chain's native unit, with a registry default", () => {
  const common = { CHAIN_8453_RPC_URL: "https://base.example", CHAIN_8453_FACTORY: FACTORY, RELAYER_PRIVATE_KEY: KEY, FEE_RECIPIENT };
  expect(loadConfig(common).chains[0]!.relayerMinBalance).toBe(parseEther("0.005"));
  expect(loadConfig({ ...common, CHAIN_8453_RELAYER_MIN_BALANCE: "0.25" }).chains[0]!.relayerMinBalance).toBe(parseEther("0.25"));
  expect(() => loadConfig({ ...common, CHAIN_8453_RELAYER_MIN_BALANCE: "-1" })).toThrow(/CHAIN_8453_RELAYER_MIN_BALANCE: a decimal amount of ETH/);
  expect(() => loadConfig({ ...common, CHAIN_8453_RELAYER_MIN_BALANCE: "lots" })).toThrow(/CHAIN_8453_RELAYER_MIN_BALANCE/);
});

it("takes each chain's payout minimum from the registry (Ethereum's above the rollups'), PAYOUT_MIN_AMOUNT over it, and CHAIN_<id>_PAYOUT_MIN_AMOUNT over both", () => {
  const common = {
    CHAIN_1_RPC_URL: "https://eth.example",
    CHAIN_1_FACTORY: FACTORY,
    CHAIN_8453_RPC_URL: "https://base.example",
    CHAIN_8453_FACTORY: FACTORY,
    RELAYER_PRIVATE_KEY: KEY,
    FEE_RECIPIENT,
  };
  const minimums = (env: Record<string, string>) => {
    const config = loadConfig({ ...common, ...env });
    return { dust: config.payoutMinAmount, chains: config.chains.map((c) => [c.chainId, enableChain(c).payoutMinAmount]) };
  };
  expect(minimums({})).toEqual({
    dust: undefined,
    chains: [
      [1, usdc("5")],
      [8453, usdc("0.10")],
    ],
  });
  expect(minimums({ PAYOUT_MIN_AMOUNT: "0.02" })).toEqual({
    dust: usdc("0.02"),
    chains: [
      [1, usdc("0.02")],
      [8453, usdc("0.02")],
    ],
  });
  expect(minimums({ PAYOUT_MIN_AMOUNT: "0.02", CHAIN_1_PAYOUT_MIN_AMOUNT: "12.5" })).toEqual({
    dust: usdc("0.02"),
    chains: [
      [1, usdc("12.5")],
      [8453, usdc("0.02")],
    ],
  });
  expect(minimums({ CHAIN_8453_PAYOUT_MIN_AMOUNT: "0.000001" }).chains[1]).toEqual([8453, 1n]);
  for (const bad of ["0", "-1", "1.0000001", "0.5 USDC", "1e3"]) {
    expect(() => loadConfig({ ...common, CHAIN_8453_PAYOUT_MIN_AMOUNT: bad }), bad).toThrow(/CHAIN_8453_PAYOUT_MIN_AMOUNT: must be a positive USDC amount/);
  }
  expect(() => loadConfig({ ...common, PAYOUT_MIN_AMOUNT: "0" })).toThrow(/PAYOUT_MIN_AMOUNT: must be a positive USDC amount/);
  // Every chain of the registry has one; a payout on Ethereum costs far more gas money than on a rollup.
  for (const chain of knownChains()) expect(chain.payoutMinAmount, chain.name).toBeGreaterThan(0n);
  const mainnets = knownChains().filter((c) => !c.testnet && c.chainId !== 1);
  for (const chain of mainnets) expect(chain.payoutMinAmount, chain.name).toBeLessThan(knownChain(1)!.payoutMinAmount);
});

describe("relayer keys from files (RELAYER_PRIVATE_KEY_FILE, CHAIN_<id>_RELAYER_KEY_FILE)", () => {
  const dir = mkdtempSync(join(tmpdir(), "sg-keys-"));
  const keyFile = join(dir, "relayer.key");
  writeFileSync(keyFile, `${KEY}\n`, { mode: 0o600 });
  const other = "0x5de4111afa1a4b94908f83103eb1f1706367c2e68ca870fc3fb9a804cdab365a";
  const otherFile = join(dir, "base.key");
  writeFileSync(otherFile, other, { mode: 0o600 });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const chainEnv = {
    CHAIN_8453_RPC_URL: "https://base.example",
    CHAIN_8453_FACTORY: FACTORY,
    CHAIN_10_RPC_URL: "https://op.example",
    CHAIN_10_FACTORY: FACTORY,
    FEE_RECIPIENT,
  };

  it("reads the key from the file (trimmed); a chain's own file wins for that chain", () => {
    const config = loadConfig({ ...chainEnv, RELAYER_PRIVATE_KEY_FILE: keyFile, CHAIN_8453_RELAYER_KEY_FILE: otherFile });
    expect(Object.fromEntries(config.chains.map((c) => [c.chainId, c.relayerKey]))).toEqual({ 10: KEY, 8453: other });
  });

  it("refuses a missing file or a key given twice, naming the variable and never the key", () => {
    const missing = () => loadConfig({ ...chainEnv, RELAYER_PRIVATE_KEY_FILE: join(dir, "nope.key") });
    expect(missing).toThrow(/RELAYER_PRIVATE_KEY_FILE: cannot read .*nope\.key \(ENOENT\)/);
    const twice = () => loadConfig({ ...chainEnv, RELAYER_PRIVATE_KEY: KEY, RELAYER_PRIVATE_KEY_FILE: keyFile });
    expect(twice).toThrow("RELAYER_PRIVATE_KEY_FILE: set either RELAYER_PRIVATE_KEY or RELAYER_PRIVATE_KEY_FILE, not both");
    writeFileSync(join(dir, "bad.key"), "0xnot-a-key-but-secret");
    const bad = () => loadConfig({ ...chainEnv, RELAYER_PRIVATE_KEY_FILE: join(dir, "bad.key") });
    expect(bad).toThrow(/RELAYER_PRIVATE_KEY: required, a 0x-prefixed 32-byte private key/);
    expect(bad).not.toThrow(/not-a-key-but-secret/);
  });
});

it("fills what the environment leaves unset from the working directory's .env, and the environment wins", () => {
  const dir = mkdtempSync(join(tmpdir(), "sg-dotenv-"));
  try {
    writeFileSync(join(dir, ".env"), "# a comment\nPORT=5555\nLOG_LEVEL=debug\nDATA_DIR='./from file'\n");
    const config = pathToFileURL(resolve("dist/config.js")).href;
    const script = `const { loadConfig } = await import(${JSON.stringify(config)}); const c = loadConfig(); console.log(JSON.stringify([c.port, c.logLevel, c.dataDir]));`;
    const env = { PATH: process.env.PATH, NODE_ENV: "development", PORT: "4321" };
    const read = (cwd: string) => JSON.parse(execFileSync(process.execPath, ["--input-type=module", "-e", script], { cwd, env, encoding: "utf8" }));
    expect(read(dir)).toEqual([4321, "debug", "./from file"]);
    // No .env there: the defaults.
    rmSync(join(dir, ".env"));
    expect(read(dir)).toEqual([4321, "info", "./.data"]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
