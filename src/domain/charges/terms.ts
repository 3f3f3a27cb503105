// What a charge copies from its merchant when it is made: the fee, the underpayment tolerance and the
// mode's settlement wallet (later settings changes never redirect its funds).
//
// Creating charges is the hot path, so a process remembers each merchant's terms and writes the charge
// in one statement guarded by `termsHold`: the row goes in only while the merchant's row still says
// what was remembered. A settings change therefore applies to the very next charge, whatever any
// process remembers; a stale entry costs one more round trip (read afresh, write again), never a
// charge with yesterday's wallet.
import { Prisma as P } from "../../generated/prisma/client.js";
import type { Prisma } from "../../db/client.js";
import { type AppError, unknownReference } from "../errors.js";
import { inScope, type Scope } from "../scope.js";
import { settlementWalletMissing } from "../settlement-wallets.js";

/** A merchant's terms for one mode, as a new charge copies them. */
export interface ChargeTerms {
  feeBps: number;
  underpaymentToleranceBps: number;
  wallet: string;
}

/** Remembers merchants' terms per mode, at most `max` (the oldest makes room). */
export class ChargeTermsCache {
  private readonly entries = new Map<string, ChargeTerms>();

  constructor(private readonly max = 10_000) {}

  /** The terms last seen for `scope`, if any. */
  get(scope: Scope): ChargeTerms | undefined {
    return this.entries.get(key(scope));
  }

  /** Remembers `terms` for `scope`. */
  set(scope: Scope, terms: ChargeTerms): void {
    const k = key(scope);
    this.entries.delete(k);
    if (this.entries.size >= this.max) this.entries.delete(this.entries.keys().next().value as string);
    this.entries.set(k, terms);
  }

  /** Forgets `scope`'s terms (they no longer hold). */
  forget(scope: Scope): void {
    this.entries.delete(key(scope));
  }
}

function key(scope: Scope): string {
  return `${scope.merchantId}:${scope.livemode ? "live" : "test"}`;
}

/**
 * Reads the merchant's terms for the scope's mode, and checks the customer a charge names is the
 * scope's: 400 `resource_missing` naming `customerId`, or 400 `settlement_wallet_missing`.
 */
export async function readChargeTerms(db: Prisma | P.TransactionClient, scope: Scope, customerId: string | null | undefined): Promise<ChargeTerms> {
  const [merchant, customer] = await Promise.all([
    db.merchant.findUniqueOrThrow({
      where: { id: scope.merchantId },
      select: { feeBps: true, underpaymentToleranceBps: true, testWallet: true, liveWallet: true },
    }),
    customerId ? db.customer.findFirst({ where: { id: customerId, ...inScope(scope) }, select: { id: true } }) : null,
  ]);
  if (customerId && !customer) throw missingCustomer(customerId);
  const wallet = scope.livemode ? merchant.liveWallet : merchant.testWallet;
  if (!wallet) throw settlementWalletMissing(scope.livemode);
  return { feeBps: merchant.feeBps, underpaymentToleranceBps: merchant.underpaymentToleranceBps, wallet };
}

/** 400 for a customer that is not the caller's (or no longer exists). */
export function missingCustomer(id: string): AppError {
  return unknownReference("customer", id, "customerId");
}

/** A SQL condition: the merchant still has `terms` for the scope's mode, and the customer named (if any) is the scope's. */
export function termsHold(scope: Scope, terms: ChargeTerms, customerId: string | null): P.Sql {
  const wallet = scope.livemode ? P.sql`m.live_wallet` : P.sql`m.test_wallet`;
  const merchant = P.sql`EXISTS (SELECT 1 FROM merchants m WHERE m.id = ${scope.merchantId} AND m.fee_bps = ${terms.feeBps}::int
    AND m.underpayment_tolerance_bps = ${terms.underpaymentToleranceBps}::int AND ${wallet} = ${terms.wallet}::text)`;
  if (customerId === null) return merchant;
  return P.sql`${merchant} AND EXISTS (SELECT 1 FROM customers c WHERE c.id = ${customerId} AND c.merchant_id = ${scope.merchantId} AND c.livemode = ${scope.livemode}::boolean)`;
}
