// The chains this process can take payments on: the operator's configured chains plus, in local
// development, the devnet. Everything a door needs to know about a chain without an RPC call.
import { getCreateAddress } from "ethers";
import type { ChainSettings } from "./config.js";
import { type ChainInfo, knownChain } from "./registry.js";
import { subscriptionsAddress } from "./subscriptions.js";

/** An enabled chain: registry facts plus where our contracts and the RPC node are. */
export interface EnabledChain extends ChainInfo, Omit<ChainSettings, "usdc" | "factoryV1" | "payoutMinAmount"> {
  /** The USDC contract payments must use on this chain. */
  usdc: string;
  /** ChargeFactoryV1 and its ChargeCloneV1, where clones made before version 2 live. */
  v1?: { factory: string; implementation: string };
  /** The local devnet this process runs: it may start over (a fresh DATA_DIR), which the indexer then follows. */
  local?: boolean;
  /** SubscriptionsV1 for the fee recipient: the same address on every chain (deployed or not: see chain/subscriptions.ts). */
  subscriptions: string;
}

/** Builds an enabled chain from settings; the devnet passes the address of the USDC it deployed. */
export function enableChain(settings: ChainSettings, usdcOverride?: string): EnabledChain {
  const info = knownChain(settings.chainId);
  const usdc = usdcOverride ?? settings.usdc ?? info?.usdc;
  if (!info || !usdc) throw new Error(`chain ${settings.chainId} has no USDC address`);
  const { factoryV1, usdc: _usdc, payoutMinAmount, ...rest } = settings;
  return {
    ...info,
    ...rest,
    usdc,
    subscriptions: subscriptionsAddress(settings.feeRecipient),
    payoutMinAmount: payoutMinAmount ?? info.payoutMinAmount,
    // ChargeFactoryV1 deploys its implementation in its constructor: contract nonces start at 1.
    ...(factoryV1 && { v1: { factory: factoryV1, implementation: getCreateAddress({ from: factoryV1, nonce: 1 }) } }),
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

  /**
   * The ChargeFactoryV2 every enabled chain shares (its address follows from the fee recipient alone),
   * so a charge's address is known at creation; null without chains.
   */
  factory(): string | null {
    const factories = new Set(this.all().map((c) => c.factory));
    if (factories.size > 1)
      throw new Error(`the enabled chains disagree on ChargeFactoryV2 (${[...factories].join(", ")}): one FEE_RECIPIENT makes one factory`);
    return [...factories][0] ?? null;
  }
}
