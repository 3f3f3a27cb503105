// Where a mode's money goes: nothing a buyer can pay is made without a settlement wallet for its mode
// (.docs/dashboard.md "Safety rails"). A charge checks it as it copies the wallet onto itself; a live invoice or
// payment link checks it when it is made or opened for payment, so that a buyer never meets an offer
// that cannot take the money. Test-mode invoices and links keep being made without one: their Pay is
// refused at the charge, as before.
import type { Prisma } from "../db/client.js";
import type { Prisma as P } from "../generated/prisma/client.js";
import { AppError } from "./errors.js";
import { modeName, type Scope } from "./scope.js";

/** 400 `settlement_wallet_missing` for a mode, naming the setting and where the merchant sets it. */
export function settlementWalletMissing(livemode: boolean): AppError {
  const mode = modeName(livemode);
  return new AppError(
    "settlement_wallet_missing",
    `No ${mode}-mode settlement wallet is set, so a buyer's payment would have nowhere to go. Set a ${mode} settlement wallet in the dashboard's Settings first.`,
    `${mode}Wallet`,
  );
}

/** In live mode, 400 `settlement_wallet_missing` unless the merchant has a live settlement wallet; test mode passes. */
export async function assertLiveWallet(db: Prisma | P.TransactionClient, scope: Scope): Promise<void> {
  if (!scope.livemode) return;
  const merchant = await db.merchant.findUnique({ where: { id: scope.merchantId }, select: { liveWallet: true } });
  if (!merchant?.liveWallet) throw settlementWalletMissing(true);
}
