// The test helper that pays a charge (POST /v1/test_helpers/charges/:id/pay, .docs/payments.md "Test
// helpers"): a real USDC transfer from the devnet's funded test wallet, as `stablegate devnet pay` and a
// buyer send it. Nothing about the charge is written here besides what a buyer could do (pick the
// devnet) or the expiry helper does (`late`): the worker's indexer counts the transfer like any other,
// so a late payment takes exactly the path real late money takes.
//
// Invariants:
// - test mode and the devnet this process runs only: no other chain's money is ever sent;
// - an ended charge whose chain was never picked is paid at its deposit address (the same on every
//   chain of its mode, watched whether picked or not): the domain allows no pick once it has ended.
import type { ChainSet } from "../chain/chains.js";
import { payFromTestWallet, type DevnetInfo } from "../chain/devnet.js";
import type { Prisma } from "../db/client.js";
import { selectChain } from "./chain-selection.js";
import type { ChangeSettings, ChargeSettings } from "./charges/settings.js";
import { type Charge, getCharge } from "./charges/read.js";
import { expireChargeNow } from "./charges/expire.js";
import { amountRemaining } from "./charges/lifecycle.js";
import { AppError, invalidParam } from "./errors.js";
import { formatAmount, parseAmount } from "./money.js";
import type { Scope } from "./scope.js";
import type { TestPayRequest } from "./test-payment-requests.js";

/** What paying needs of the service settings: the amount bounds and what a change to a charge needs. */
export type TestPaySettings = ChangeSettings & Pick<ChargeSettings, "amount">;

/** 400 `test_mode_only` for a live key: the door asks before it parses the body, so that a live key hears this first. */
export function assertTestPayMode(scope: Scope): void {
  if (scope.livemode)
    throw new AppError("test_mode_only", "Test helpers work in test mode only: use a test key (sk_test_…). A live charge is paid by its buyer.");
}

/**
 * Pays test-mode charge `id` from the devnet's test wallet and answers it once the transfer is mined:
 * `amount` (default: what is still due), after expiring it first when `late` and it is PENDING. A
 * PENDING charge with no chain gets the devnet picked, as the hosted page would. 400 `test_mode_only`
 * for a live key, 400 `chain_unsupported` without a devnet in this process or for a charge picked on
 * another chain, 400 `parameter_invalid` naming amount, 409 `charge_not_payable` when nothing is due.
 */
export async function payChargeFromTestWallet(
  prisma: Prisma,
  chains: ChainSet,
  devnet: DevnetInfo | null,
  scope: Scope,
  id: string,
  data: TestPayRequest,
  settings: TestPaySettings,
): Promise<Charge> {
  assertTestPayMode(scope);
  const asked = data.amount === undefined ? null : parseAmount(data.amount);
  if (asked === 0n || (data.amount !== undefined && asked === null) || (asked !== null && asked > settings.amount.max)) {
    throw invalidParam(
      "amount",
      `Invalid amount: must be a decimal string with at most 6 decimals, more than 0 and at most ${formatAmount(settings.amount.max)} USDC`,
    );
  }
  const local = devnet && chains.get(devnet.chainId)?.local ? devnet : null;
  if (!local) {
    throw new AppError(
      "chain_unsupported",
      "The test wallet pays on the local devnet, which this process does not run: use the service `npm start` runs in development (DEVNET=auto), or DEVNET=true.",
    );
  }
  // Everything that can refuse is checked on the charge as read, before `late` expires it: a refused
  // request changes nothing.
  let charge = await getCharge(prisma, scope, id);
  if (charge.chainId !== null && charge.chainId !== local.chainId) {
    throw new AppError("chain_unsupported", `Charge ${id} is to be paid on chain ${charge.chainId}, not the devnet (${local.chainId}).`, "id");
  }
  const ends = charge.status !== "PENDING" || data.late === true;
  if (ends && charge.cloneAddress === null && charge.depositAddress === null) {
    throw new AppError(
      "charge_not_payable",
      `Charge ${id} has no payment address: it ended before any chain was picked and was made before the devnet ran.`,
      "id",
    );
  }
  const units = asked ?? amountRemaining(charge);
  if (units === 0n) {
    throw new AppError("charge_not_payable", `Nothing is due on charge ${id} (${charge.status}): give an amount to send more than it asks.`, "amount");
  }
  if (data.late && charge.status === "PENDING") charge = await expireChargeNow(prisma, scope, id, settings);
  if (charge.chainId === null && charge.status === "PENDING") {
    // The expiry sweep may end it meanwhile: then it is paid late, at its deposit address.
    await selectChain(prisma, chains, settings, id, { chainId: local.chainId }).catch((e: unknown) => {
      if (!(e instanceof AppError && e.code === "charge_not_payable")) throw e;
    });
    charge = await getCharge(prisma, scope, id);
  }
  const address = charge.cloneAddress ?? charge.depositAddress;
  if (address === null) throw new AppError("charge_not_payable", `Charge ${id} has no payment address.`, "id");
  await payFromTestWallet(local, address, units).catch((e: unknown) => {
    // ethers' short message ("timeout", "execution reverted") says which, without its request dump.
    const reason = (e as { shortMessage?: string }).shortMessage ?? "no answer";
    throw new AppError(
      "internal_error",
      `The devnet did not mine the test payment of charge ${id} (${reason}): check that the devnet runs (npm start), then retry.`,
    );
  });
  return getCharge(prisma, scope, id);
}
