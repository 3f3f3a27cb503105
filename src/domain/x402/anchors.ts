// A merchant's x402 address (.docs/x402.md): where software pays it, one per mode, the same on every
// chain. It is a counterfactual ChargeFactoryV2 clone like a charge's deposit address, so the money
// sent there goes the way a charge's does: the indexer reads it, the ledger records it, the batched
// payouts pay it to the merchant's wallet less the fee, reconciliation compares it with the chain
// and a reorg reverses it. What carries it is a row of `charges` of kind `x402` (its "anchor"),
// which no charge list, count, page or action ever shows.
//
// Invariants:
// - an anchor's address is fixed by its id, wallet and fee (the clone's CREATE2 salt): a wallet or
//   fee change makes a new anchor with a new address, and the old one keeps paying the old wallet
//   only (anyone may still send to it);
// - its id follows from the merchant, mode, wallet and fee, so two processes asking at once make one;
// - it is RECEIVED from the start and never changes status: it is never due, never expires, never
//   completes, and every payment to it is money to pay out.
import { derivedId } from "../ids.js";
import type { Prisma } from "../../db/client.js";
import { predictCloneV2 } from "../../chain/clones.js";
import { AppError } from "../errors.js";
import { type Scope } from "../scope.js";
import { readChargeTerms } from "../charges/terms.js";

/** The `kind` of an anchor's charges row. */
export const X402_KIND = "x402";

/** A merchant's x402 address for one mode, and what it pays. */
export interface X402Anchor {
  /** Its charges row. */
  id: string;
  /** The address x402 requirements name as `payTo`. */
  address: string;
  wallet: string;
  feeBps: number;
}

/**
 * The merchant's x402 address for the scope's mode under its current wallet and fee, made on first
 * use. 400 `settlement_wallet_missing` without a wallet for the mode; 400 `chain_unsupported` when no
 * chain is enabled (there is no factory to predict the address from).
 */
export async function x402Anchor(prisma: Prisma, scope: Scope, factory: string | null | undefined, now = new Date()): Promise<X402Anchor> {
  if (!factory) throw new AppError("chain_unsupported", "No chain is enabled on this service, so there is no x402 address to pay.", null);
  const { wallet, feeBps } = await readChargeTerms(prisma, scope, null);
  const id = derivedId("x402", `${scope.merchantId}:${scope.livemode}:${wallet.toLowerCase()}:${feeBps}`);
  const address = predictCloneV2({ factory, chargeId: id, wallet, feeBps });
  // Read first: every verify and settle asks, and a read costs the database less than a write that does nothing.
  if ((await prisma.$queryRaw<unknown[]>`SELECT 1 FROM charges WHERE id = ${id}`).length === 1) return { id, address, wallet, feeBps };
  // Status RECEIVED, amount 0: no lifecycle step applies to it, and each payment is money to pay out.
  await prisma.$executeRaw`
    INSERT INTO charges (id, merchant_id, livemode, kind, order_id, amount, status, fee_bps, settlement_wallet, contract_version,
                         deposit_address, description, expires_at, created_at, updated_at)
    VALUES (${id}, ${scope.merchantId}, ${scope.livemode}, ${X402_KIND}, ${id}, 0, 'RECEIVED', ${feeBps}, ${wallet}, 2,
            ${address}, 'x402 payments', ${now}, ${now}, ${now})
    ON CONFLICT (id) DO NOTHING`;
  return { id, address, wallet, feeBps };
}
