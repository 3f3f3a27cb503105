// The chains this process can take payments on: the operator's configured chains plus, in local
// development, the devnet. Everything a door needs to know about a chain without an RPC call.
import { getCreateAddress } from "ethers";
import type { ChainSettings } from "./config.js";
import { type ChainInfo, knownChain } from "./registry.js";

/** An enabled chain: registry facts plus where our contracts and the RPC node are. */
export interface EnabledChain extends ChainInfo {
  /** JSON-RPC endpoints, in the order they are used (they may carry provider keys: never log them). */
  rpcUrls: string[];
  factory: string;
  /** The ChargeClone every clone delegates to (the factory's first creation). */
  implementation: string;
  /** The USDC contract payments must use on this chain. */
  usdc: string;
  confirmations: number;
  relayerKey: string;
  /** Below this native balance (wei) the relayer needs funds. */
  relayerMinBalance: bigint;
  /** Gas the relayer may spend per UTC day on payments without gas (CHAIN_<id>_GASLESS_DAILY_GAS). */
  gaslessDailyGas?: bigint;
}

/** Builds an enabled chain from settings; the devnet passes the address of the USDC it deployed. */
export function enableChain(settings: ChainSettings, usdcOverride?: string): EnabledChain {
  const info = knownChain(settings.chainId);
  const usdc = usdcOverride ?? settings.usdc ?? info?.usdc;
  if (!info || !usdc) throw new Error(`chain ${settings.chainId} has no USDC address`);
  return {
    ...info,
    ...settings,
    usdc,
    // The factory deploys the implementation in its constructor: contract nonces start at 1.
    implementation: getCreateAddress({ from: settings.factory, nonce: 1 }),
  };
}

/** The set of enabled chains, looked up by id and by mode. */
export class ChainSet {
  private readonly byId: Map<number, EnabledChain>;

  constructor(chains: EnabledChain[] = []) {
    this.byId = new Map(chains.map((c) => [c.chainId, c]));
  }

  /** The operator's configured chains, plus any this process runs itself (the devnet). */
  static configured(settings: ChainSettings[], extra: EnabledChain[] = []): ChainSet {
    return new ChainSet([...settings.map((c) => enableChain(c)), ...extra]);
  }

  /** The enabled chain `chainId`, or undefined. */
  get(chainId: number): EnabledChain | undefined {
    return this.byId.get(chainId);
  }

  /** Chains a charge of this mode may be paid on: testnets and the devnet for test, mainnets for live. */
  forMode(livemode: boolean): EnabledChain[] {
    return [...this.byId.values()].filter((c) => c.testnet !== livemode);
  }

  /** Every enabled chain. */
  all(): EnabledChain[] {
    return [...this.byId.values()];
  }
}
