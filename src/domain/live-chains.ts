// A live offer needs a network to be paid on: a live charge, invoice or payment link is refused while
// this service runs no mainnet, so that no buyer meets a payment page that says no network is available
// (.docs/going-live.md). Test mode passes: test charges are made before any chain is configured (the
// devnet or a testnet comes later). This is the one place that rule is written; the domain functions
// that make or open such offers call it with the live settlement wallet's check (assertLiveReady).
import type { Prisma } from "../db/client.js";
import type { Prisma as P } from "../generated/prisma/client.js";
import { AppError } from "./errors.js";
import type { Scope } from "./scope.js";
import { assertLiveWallet } from "./settlement-wallets.js";

/** What the check needs of each enabled chain: whether it serves test mode (testnets, the devnet) or live mode. */
export interface ModeChain {
  testnet: boolean;
}

/** The operator's setting that enables a mainnet, as the refusal names it. */
export const LIVE_CHAIN_SETTING = "CHAIN_<id>_RPC_URL and CHAIN_<id>_FACTORY";

/** 400 `chain_unsupported` naming the setting, unless live mode has an enabled chain; test mode always passes. */
export function assertLiveChain(livemode: boolean, chains: readonly ModeChain[] | undefined): void {
  if (!livemode || chains?.some((c) => !c.testnet)) return;
  throw new AppError(
    "chain_unsupported",
    `No live chain is enabled on this service, so a buyer could not pay this anywhere. The operator enables a mainnet with ${LIVE_CHAIN_SETTING} (with FEE_RECIPIENT and a funded relayer key; see .docs/going-live.md).`,
    null,
  );
}

/** What a live offer needs, checked in this order: the merchant's live settlement wallet, then an enabled live chain. */
export async function assertLiveReady(db: Prisma | P.TransactionClient, scope: Scope, chains: readonly ModeChain[] | undefined): Promise<void> {
  await assertLiveWallet(db, scope);
  assertLiveChain(scope.livemode, chains);
}
