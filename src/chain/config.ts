// Per-chain settings from the environment: CHAIN_<id>_RPC_URL (one or more endpoints, used in
// order) and CHAIN_<id>_FACTORY, plus FEE_RECIPIENT and RELAYER_PRIVATE_KEY; optional per chain:
// CHAIN_<id>_CONFIRMATIONS, _RELAYER_KEY, _RELAYER_MIN_BALANCE, _GASLESS_DAILY_GAS, _MAX_FEE_PER_GAS,
// _RELAYER_STUCK_AFTER, _WATCH_TOKENS, _PAYOUT_MIN_AMOUNT (else PAYOUT_MIN_AMOUNT, else the registry's),
// _FACTORY_V1 (clones made before version 2), and _USDC only for a chain the registry has no USDC for
// (a devnet you run yourself). Pure: config.ts hands it the environment (with *_FILE variables
// already read) and reports its problems with the rest. A problem never quotes an RPC URL: it
// carries the provider's key.
import { getAddress, isHexString, parseEther, parseUnits, Wallet } from "ethers";
import { factoryV2Address } from "./clones.js";
import { knownChain } from "./registry.js";
import { tryParseUnits, USDC_DECIMALS } from "../lib/money.js";

/** A chain the operator configured. */
export interface ChainSettings {
  chainId: number;
  /** JSON-RPC endpoints (http or https), in the order they are used; the next takes over when one fails. */
  rpcUrls: string[];
  /** ChargeFactoryV2: the deterministic address for the fee recipient, the same on every chain. */
  factory: string;
  /** ChargeFactoryV1, where clones made before version 2 were deployed (they still settle). */
  factoryV1?: string;
  /** Receives the protocol fee (fixed in the factory). */
  feeRecipient: string;
  /** The most a fee bump raises maxFeePerGas to (wei). */
  maxFeePerGas: bigint;
  /** A relayer transaction unmined this long is stuck (seconds). */
  stuckAfterSeconds: number;
  /** ERC-20s besides USDC whose balance in a clone is reported. */
  watchTokens: string[];
  confirmations: number;
  /** Private key of the account that pays gas (never holds merchants' money); "" in a process that sends nothing (the API). */
  relayerKey: string;
  /** Below this native balance (wei) the relayer is reported as needing funds. */
  relayerMinBalance: bigint;
  /** The USDC token, where the registry has none (the devnet). */
  usdc?: string;
  /** Gas the relayer may spend per UTC day on buyers' payments without gas (default: domain/charge-authorizations). */
  gaslessDailyGas?: bigint;
  /** USDC base units a clone must hold before money that completes no charge is paid out (default: the registry's). */
  payoutMinAmount?: bigint;
}

/** Settings every chain takes unless it has its own. */
export interface ChainDefaults {
  /** PAYOUT_MIN_AMOUNT: every chain's payout minimum, where CHAIN_<id>_PAYOUT_MIN_AMOUNT does not set one. */
  payoutMinAmount?: bigint | undefined;
}

/** A USDC amount as PAYOUT_MIN_AMOUNT takes it: a positive decimal with at most 6 decimals, in base units; null otherwise. */
function usdcAmount(value: string): bigint | null {
  const units = tryParseUnits(value, USDC_DECIMALS, { negative: false, maxWholeDigits: 30 }) ?? 0n;
  return units > 0n ? units : null;
}

const VAR =
  /^CHAIN_(\d+)_(RPC_URL|FACTORY|FACTORY_V1|CONFIRMATIONS|RELAYER_KEY|RELAYER_MIN_BALANCE|USDC|GASLESS_DAILY_GAS|MAX_FEE_PER_GAS|RELAYER_STUCK_AFTER|WATCH_TOKENS|PAYOUT_MIN_AMOUNT)$/;

/** Reads the chain settings; returns them with a list of problems (empty when all is well). */
export function parseChainSettings(env: Record<string, string | undefined>, defaults: ChainDefaults = {}): { chains: ChainSettings[]; problems: string[] } {
  const problems: string[] = [];
  const raw = new Map<number, Partial<Record<string, string>>>();
  for (const [name, value] of Object.entries(env)) {
    const m = VAR.exec(name);
    if (!m || !value) continue;
    const chainId = Number(m[1]);
    raw.set(chainId, { ...raw.get(chainId), [m[2]!]: value });
  }
  const chains: ChainSettings[] = [];
  const feeRecipient = addressOrNull(env.FEE_RECIPIENT);
  for (const [chainId, v] of [...raw].sort(([a], [b]) => a - b)) {
    const at = (key: string) => `CHAIN_${chainId}_${key}`;
    const info = knownChain(chainId);
    if (!info) {
      problems.push(`${at("RPC_URL")}: chain ${chainId} is not in the registry (see .docs/payments.md: Chains and the payment contract)`);
      continue;
    }
    const before = problems.length;
    const rpcUrls = splitUrls(v.RPC_URL ?? "");
    const relayerKey = relayerKeyOf(env, chainId);
    // A missing key is the caller's to require (requireRelayerKeys): only a worker holds one.
    problems.push(...[rpcUrlProblem(chainId, rpcUrls), relayerKey === "" ? null : relayerKeyProblem(chainId, relayerKey)].filter((p) => p !== null));
    let relayerMinBalance = info.minRelayerBalance;
    if (v.RELAYER_MIN_BALANCE !== undefined) {
      try {
        relayerMinBalance = parseEther(v.RELAYER_MIN_BALANCE);
        if (relayerMinBalance < 0n) throw new RangeError("negative");
      } catch {
        problems.push(`${at("RELAYER_MIN_BALANCE")}: a decimal amount of ${info.nativeSymbol}, such as 0.01`);
      }
    }
    const deploy = `npm run contracts:deploy -- --chain ${chainId}`;
    const factory = addressOrNull(v.FACTORY);
    const expected = feeRecipient && factoryV2Address(feeRecipient);
    if (!factory) {
      problems.push(`${at("FACTORY")}: required, the ChargeFactoryV2 address${expected ? ` ${expected}` : ""} (deploy it with ${deploy})`);
    } else if (expected && factory !== expected) {
      problems.push(
        `${at("FACTORY")}: ${factory} is not ChargeFactoryV2 for FEE_RECIPIENT (expected ${expected}, the same on every chain: deploy it with ${deploy}); ` +
          `a factory of version 1 belongs in ${at("FACTORY_V1")}, so its clones still settle`,
      );
    }
    const factoryV1 = v.FACTORY_V1 === undefined ? undefined : addressOrNull(v.FACTORY_V1);
    if (factoryV1 === null) problems.push(`${at("FACTORY_V1")}: the address of the ChargeFactory of version 1 used before the upgrade`);
    let maxFeePerGas = info.maxFeePerGas;
    if (v.MAX_FEE_PER_GAS !== undefined) {
      try {
        maxFeePerGas = parseUnits(v.MAX_FEE_PER_GAS, "gwei");
        if (maxFeePerGas <= 0n) throw new RangeError("not positive");
      } catch {
        problems.push(`${at("MAX_FEE_PER_GAS")}: a positive amount in gwei, such as 50 or 0.5`);
      }
    }
    const stuckAfterSeconds = v.RELAYER_STUCK_AFTER === undefined ? info.stuckAfterSeconds : Number(v.RELAYER_STUCK_AFTER);
    if (!Number.isInteger(stuckAfterSeconds) || stuckAfterSeconds < 30 || stuckAfterSeconds > 86_400) {
      problems.push(`${at("RELAYER_STUCK_AFTER")}: seconds from 30 to 86400 a relayer transaction may stay unmined before it counts as stuck`);
    }
    const watchTokens = v.WATCH_TOKENS === undefined ? info.watchTokens : splitUrls(v.WATCH_TOKENS).map(addressOrNull);
    if (watchTokens.some((t) => t === null)) problems.push(`${at("WATCH_TOKENS")}: token addresses separated by commas`);
    const confirmations = v.CONFIRMATIONS === undefined ? info.confirmations : Number(v.CONFIRMATIONS);
    if (!Number.isInteger(confirmations) || confirmations < 1 || confirmations > 1000) problems.push(`${at("CONFIRMATIONS")}: an integer from 1 to 1000`);
    let usdc: string | undefined;
    if (info.usdc && v.USDC) {
      problems.push(`${at("USDC")}: chain ${chainId} always uses native USDC (${info.usdc}); remove this setting`);
    } else if (!info.usdc) {
      try {
        usdc = getAddress(v.USDC ?? "");
      } catch {
        problems.push(`${at("USDC")}: required for chain ${chainId}, the address of its USDC token`);
      }
    }
    let gaslessDailyGas: bigint | undefined;
    if (v.GASLESS_DAILY_GAS !== undefined) {
      if (/^\d{1,15}$/.test(v.GASLESS_DAILY_GAS)) gaslessDailyGas = BigInt(v.GASLESS_DAILY_GAS);
      else problems.push(`${at("GASLESS_DAILY_GAS")}: a whole number of gas units per day, such as 5000000 (0 turns payment without gas off)`);
    }
    const payoutMinAmount = v.PAYOUT_MIN_AMOUNT === undefined ? defaults.payoutMinAmount : usdcAmount(v.PAYOUT_MIN_AMOUNT);
    if (payoutMinAmount === null) problems.push(`${at("PAYOUT_MIN_AMOUNT")}: must be a positive USDC amount such as 0.50`);
    if (problems.length === before && factory && feeRecipient) {
      chains.push({
        chainId,
        rpcUrls,
        factory,
        ...(factoryV1 && { factoryV1 }),
        feeRecipient,
        maxFeePerGas,
        stuckAfterSeconds,
        watchTokens: watchTokens as string[],
        confirmations,
        relayerKey,
        relayerMinBalance,
        ...(usdc && { usdc }),
        ...(gaslessDailyGas !== undefined && { gaslessDailyGas }),
        ...(payoutMinAmount != null && { payoutMinAmount }),
      });
    }
  }
  return { chains, problems };
}

/** The key that pays gas on `chainId`: its own CHAIN_<id>_RELAYER_KEY, else RELAYER_PRIVATE_KEY. */
export function relayerKeyOf(env: Record<string, string | undefined>, chainId: number): string {
  return env[`CHAIN_${chainId}_RELAYER_KEY`] || env.RELAYER_PRIVATE_KEY || "";
}

/** The endpoints of a CHAIN_<id>_RPC_URL value: URLs separated by commas or spaces. */
export function splitUrls(value: string): string[] {
  return value.split(/[\s,]+/).filter((u) => u !== "");
}

/** What is wrong with a chain's RPC URLs, or null; it names the endpoint by position, never by its URL. */
export function rpcUrlProblem(chainId: number, urls: readonly string[]): string | null {
  const name = `CHAIN_${chainId}_RPC_URL`;
  if (urls.length === 0) return `${name}: required, one or more http(s) URLs separated by commas`;
  const bad = urls.findIndex((u) => !URL.canParse(u) || !/^https?:$/.test(new URL(u).protocol));
  if (bad === -1) return null;
  return `${name}: endpoint ${bad + 1} of ${urls.length} is not an http(s) URL (its value is not shown: it may hold a provider key)`;
}

/** A problem for each chain without a relayer key. */
export function missingRelayerKeys(chains: readonly Pick<ChainSettings, "chainId" | "relayerKey">[]): string[] {
  return chains.filter((c) => c.relayerKey === "").map((c) => relayerKeyProblem(c.chainId, "")!);
}

/** What is wrong with a chain's relayer key, or null. */
export function relayerKeyProblem(chainId: number, key: string): string | null {
  return isPrivateKey(key) ? null : `CHAIN_${chainId}_RELAYER_KEY or RELAYER_PRIVATE_KEY: required, a 0x-prefixed 32-byte private key (pays the gas)`;
}

function addressOrNull(value: string | undefined): string | null {
  try {
    return value ? getAddress(value) : null;
  } catch {
    return null;
  }
}

function isPrivateKey(key: string): boolean {
  if (!isHexString(key, 32)) return false;
  try {
    return new Wallet(key).address !== "";
  } catch {
    return false;
  }
}
