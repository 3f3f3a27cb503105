// What the service's settings say about charges: amount bounds, links, the live feed, the dust limit
// and the chains whose clocks expire them. Every charge module takes its settings as these types.
import type { ChargeFeed } from "../live.js";
import type { ChargeTermsCache } from "./terms.js";

/** Service settings that shape charges. */
export interface ChargeSettings {
  /** Bounds of `amount`, in base units. */
  amount: { min: bigint; max: bigint };
  /** Hosted payment pages live at `{paymentBaseUrl}/<chargeId>`. */
  paymentBaseUrl: string;
  /** Announces committed changes to live subscribers; none in code that has no subscribers. */
  feed?: ChargeFeed | undefined;
  /** Payment without gas (GASLESS_MIN_AMOUNT); the default where unset. */
  gasless?: { minAmount: bigint };
  /** The x402 facilitator: X402_MIN_AMOUNT (unset: each chain's payout minimum) and X402_SETTLE_TIMEOUT_MS; the defaults where unset. */
  x402?: { minAmount: bigint | undefined; settleTimeoutMs: number };
  /** RELAYER_GAS_BUDGET_PER_MERCHANT: a merchant's relayer gas per chain and UTC day for sweeps and payments without gas; the default where unset. */
  relayerGasBudget?: bigint;
  /** The ChargeFactoryV2 of the enabled chains: a charge's address is fixed at creation (none: at the pick). */
  factory?: string | null;
  /**
   * Dust (PAYOUT_MIN_AMOUNT, else 0.01 USDC): confirmed money below it does not hold up completion, and a payment seen
   * below it holds nothing up. What a clone must hold before it is paid out is its chain's own minimum (EnabledChain).
   */
  payoutMinAmount?: bigint;
  /**
   * The enabled chains: each one's indexer watches every version-2 charge address of its mode, so
   * each one's clock has a say in when such a charge expires (none: the wall clock decides).
   */
  chains?: readonly ExpiryChain[];
  /** Merchants' terms this process remembers, so a new charge costs one round trip (none: each charge reads them). */
  terms?: ChargeTermsCache;
  /** PUBLIC_URL: alerts emailed to the team link the charge's dashboard page under it (none: no link). */
  publicUrl?: string;
}

/** An enabled chain as expiry needs it: its id and mode. */
export interface ExpiryChain {
  chainId: number;
  /** Testnets and the devnet serve test mode, mainnets live mode. */
  testnet: boolean;
}

/** What a change to a charge needs: links for its event snapshot, the feed that announces it, the dust limit, the chains whose clocks expire it. */
export type ChangeSettings = Pick<ChargeSettings, "paymentBaseUrl" | "feed" | "payoutMinAmount" | "chains" | "publicUrl">;

/** The dust limit's default (PAYOUT_MIN_AMOUNT unset): 0.01 USDC. */
export const DEFAULT_PAYOUT_MIN_AMOUNT = 10_000n;

/** The dust limit: less than this left in a charge's clones neither holds up its completion nor counts as money on its way. */
export function dustLimit(settings: Pick<ChangeSettings, "payoutMinAmount">): bigint {
  return settings.payoutMinAmount ?? DEFAULT_PAYOUT_MIN_AMOUNT;
}
