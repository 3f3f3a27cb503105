// Gasless payment (.docs/payments.md "The hosted payment page", Paying without gas): a buyer with USDC but none of the chain's gas token signs
// an EIP-3009 `transferWithAuthorization(from = the buyer, to = the charge's clone, value, …)` in the
// wallet, and the service relays it, paying the gas. The money then arrives like any payment: a
// transfer to the clone that the indexer sees and confirms.
//
// Invariants:
// - the relayer only spends gas on what the token would accept now (checked here, and again by the
//   worker just before it sends) and that pays this charge: `to` is its address, the value at most
//   what is still due (less money already seen on its way) and at least GASLESS_MIN_AMOUNT unless it is
//   exactly what is due, so nobody relays dust on the service's gas;
// - one authorization is money on its way per charge (a partial unique index) from acceptance until
//   the chain spends its nonce or its validBefore passes, whatever became of the relay; a signed nonce
//   is stored once (a unique index): two submissions of the same authorization give one transaction;
// - a chain's gasless gas per UTC day stays within its budget (CHAIN_<id>_GASLESS_DAILY_GAS), and a
//   merchant's (with its sweeps) within RELAYER_GAS_BUDGET_PER_MERCHANT (domain/relayer-budget.ts),
//   counting each authorization's simulated gas until its transaction's real gas is known.
import { z } from "zod";
import type { TokenDomain, TransferAuthorization } from "../chain/authorizations.js";
import type { ChainSet } from "../chain/chains.js";
import type { Prisma } from "../db/client.js";
import { isUniqueViolation } from "../db/errors.js";
import type { Authorization, Prisma as P } from "../generated/prisma/client.js";
import type { ChargeSettings } from "./charges/settings.js";
import {
  type AuthorizationReaders,
  type AuthorizationRequest,
  authorizationRow,
  checkAuthorization,
  invalidAuthorization,
  validUntil,
} from "./authorizations.js";
import { AppError, notFound } from "./errors.js";
import { newId } from "./ids.js";
import { formatAmount, parseAmount, toUnits } from "./money.js";
import { budgetExhausted, checkRelayerBudget, countRelayerRefusal, merchantGasLeft, relayerGasToday, withinRelayerBudget } from "./relayer-budget.js";

/** A chain's gasless gas per UTC day when CHAIN_<id>_GASLESS_DAILY_GAS does not say: about 50 payments. */
export const DEFAULT_GASLESS_DAILY_GAS = 5_000_000n;

const BUDGET_SPENT = "the service's gas for payments without gas is spent for today; send a normal transfer";

/** The least an authorization may carry (unless exactly what is due), unless GASLESS_MIN_AMOUNT says otherwise: 1 USDC. */
const DEFAULT_MIN_AMOUNT = 1_000_000n;

/** What gasless payment is bound by: the charges' settings, whose `gasless` holds GASLESS_MIN_AMOUNT, and the merchant's relayer budget. */
export type GaslessSettings = Pick<ChargeSettings, "gasless" | "relayerGasBudget">;

/** The answer to a submitted authorization. */
export const ChargeAuthorizationResource = z.object({
  id: z.string().describe("The authorization's id (cauth_…)."),
  object: z.literal("charge_authorization"),
  chargeId: z.string().describe("The charge it pays."),
  status: z.enum(["RELAYING", "SENT", "MINED", "FAILED"]).describe("RELAYING: accepted, not sent yet; SENT: in a transaction; MINED: paid; FAILED: see error."),
  txHash: z.string().nullable().describe("The relayer's transaction; the payment then shows on the charge like any transfer."),
  value: z.string().describe('USDC, e.g. "25.00".'),
  error: z.string().nullable().describe("Why it FAILED; null otherwise."),
});
export type ChargeAuthorizationResource = z.infer<typeof ChargeAuthorizationResource>;

/** Shapes an authorization, with its transaction's current hash. */
export function chargeAuthorizationResource(a: Authorization, txHash: string | null): ChargeAuthorizationResource {
  return { id: a.id, object: "charge_authorization", chargeId: a.chargeId, status: a.status, txHash, value: formatAmount(a.value), error: a.error };
}

/** What the charge must be for a gasless payment, and how much it still takes. */
interface Payable {
  merchantId: string;
  chainId: number;
  cloneAddress: string;
  /** What is due less money confirmed or seen on its way. */
  open: bigint;
}

async function payableCharge(prisma: Prisma, chargeId: string, now: Date): Promise<Payable> {
  const [row] = await prisma.$queryRaw<
    { merchantId: string; status: string; chainId: number | null; cloneAddress: string | null; expiresAt: Date; open: string }[]
  >`
    SELECT merchant_id AS "merchantId", status::text AS status, chain_id AS "chainId", clone_address AS "cloneAddress", expires_at AS "expiresAt",
      (amount - coalesce(amount_received, 0)
        - coalesce((SELECT sum(amount) FROM chain_transfers t WHERE t.charge_id = c.id AND t.kind = 'PAYMENT' AND t.status = 'SEEN'), 0)
        -- Accepted and not spent on chain yet (or spent, and its payment not read from the chain yet): on its way too.
        - coalesce((SELECT sum(a.value) FROM authorizations a
            WHERE a.charge_id = c.id AND a.purpose = 'PAYMENT' AND (a.ended_at IS NULL OR a.end_reason = 'used')
              AND NOT EXISTS (SELECT 1 FROM chain_transfers t WHERE t.charge_id = c.id AND t.kind = 'PAYMENT' AND t.tx_hash = a.used_tx_hash)), 0))::text AS open
    FROM charges c WHERE id = ${chargeId}`;
  if (!row) throw notFound("charge", chargeId);
  if (row.status !== "PENDING" || row.expiresAt <= now)
    throw new AppError("charge_not_payable", `Charge ${chargeId} is ${row.status} and takes no payment.`, "id");
  if (row.chainId === null || row.cloneAddress === null) throw new AppError("charge_not_payable", `Charge ${chargeId} has no chain yet: pick one first.`, "id");
  return { merchantId: row.merchantId, chainId: row.chainId, cloneAddress: row.cloneAddress, open: BigInt(row.open) };
}

/** Gas spent on gasless payments on `chainId` since the start of the UTC day: real where known, simulated until then. */
export function gaslessGasToday(prisma: Prisma | P.TransactionClient, chainId: number, now = new Date()): Promise<bigint> {
  return relayerGasToday(prisma, chainId, { kinds: ["gasless_payment"] }, now);
}

/**
 * Why this charge cannot be paid without gas right now (too little due, the day's budget spent, the
 * chain not ours), or null when it can: what the page asks before it offers the gasless button.
 */
export async function gaslessRefusal(
  prisma: Prisma,
  chains: ChainSet,
  settings: GaslessSettings,
  c: { chainId: number; open: bigint; merchantId?: string },
  now = new Date(),
) {
  const chain = chains.get(c.chainId);
  if (!chain) return `chain ${c.chainId} is not enabled on this service`;
  const budget = chain.gaslessDailyGas ?? DEFAULT_GASLESS_DAILY_GAS;
  if ((await gaslessGasToday(prisma, c.chainId, now)) >= budget) return BUDGET_SPENT;
  const merchant = c.merchantId && { merchantId: c.merchantId, chainId: c.chainId, kind: "gasless_payment" as const, budget: settings.relayerGasBudget };
  if (merchant && (await merchantGasLeft(prisma, merchant, now)) <= 0n) return "the merchant's relayer gas for today is spent; send a normal transfer";
  return null;
}

/** GASLESS_MIN_AMOUNT: the least a gasless authorization carries, unless it is exactly what is due. */
function gaslessMinimum(settings: GaslessSettings): bigint {
  return settings.gasless?.minAmount ?? DEFAULT_MIN_AMOUNT;
}

/** What the hosted page needs to offer payment without gas: the token's EIP-712 domain and the most it may authorize. */
export interface GaslessOffer {
  domain: TokenDomain;
  /** Base units: what is still due less money on its way. */
  maxValue: string;
}

/**
 * The offer for a charge the page shows, or null where payment without gas is not available now
 * (no chain yet, too little due, the day's budget spent, the token unreachable).
 */
export async function gaslessOffer(
  prisma: Prisma,
  chains: ChainSet,
  readers: AuthorizationReaders,
  settings: GaslessSettings,
  s: { id: string; status: string; chainId: number | null; cloneAddress: string | null; amountRemaining: string; amountPending: string },
  now = new Date(),
): Promise<GaslessOffer | null> {
  if (s.status !== "PENDING" || s.chainId === null || s.cloneAddress === null) return null;
  const open = (parseAmount(s.amountRemaining) ?? 0n) - (parseAmount(s.amountPending) ?? 0n);
  const reader = readers(s.chainId);
  if (!reader || open <= 0n) return null;
  const owner = await prisma.charge.findUnique({ where: { id: s.id }, select: { merchantId: true } });
  if (!owner || (await gaslessRefusal(prisma, chains, settings, { chainId: s.chainId, open, merchantId: owner.merchantId }, now))) return null;
  const domain = await reader.domain().catch(() => null);
  return domain && { domain, maxValue: open.toString() };
}

/**
 * Checks a buyer's signed authorization for charge `chargeId` and stores it for the worker to relay.
 * 400 `authorization_invalid` with the reason for anything the token would refuse or that would not
 * pay this charge (or exceed the gasless limits); 409 `charge_not_payable` for a charge that takes no
 * payment now or has an authorization on its way. The same authorization handed in again while on its
 * way is answered with the one stored.
 */
export async function submitChargeAuthorization(
  prisma: Prisma,
  chains: ChainSet,
  readers: AuthorizationReaders,
  settings: GaslessSettings,
  chargeId: string,
  data: AuthorizationRequest,
  now = new Date(),
): Promise<Authorization> {
  const charge = await payableCharge(prisma, chargeId, now);
  const reader = readers(charge.chainId);
  const a: TransferAuthorization = { ...data, to: charge.cloneAddress };
  const repeat = await prisma.authorization.findUnique({
    where: { chainId_fromAddress_nonce: { chainId: charge.chainId, fromAddress: a.from, nonce: a.nonce } },
  });
  if (repeat) return sameOrRefused(repeat, chargeId, a);
  if (!reader) throw new AppError("charge_not_payable", `Chain ${charge.chainId} is not enabled on this service.`, "id");
  if (a.value <= 0n) throw invalidAuthorization("value must be more than 0", "value");
  if (a.value > charge.open)
    throw invalidAuthorization(`value must be at most what is still due, ${charge.open} base units (${formatAmount(charge.open)} USDC)`, "value");
  const minimum = gaslessMinimum(settings);
  if (a.value < minimum && a.value !== charge.open) {
    throw invalidAuthorization(`value must be at least ${formatAmount(minimum)} USDC, or exactly what is due (${formatAmount(charge.open)} USDC)`, "value");
  }
  const refusal = await gaslessRefusal(prisma, chains, settings, charge, now);
  if (refusal) throw invalidAuthorization(refusal);
  await checkAuthorization(reader, a, "the payer", now);
  const gasEstimate = await reader.gas(a);
  const budget = chains.get(charge.chainId)?.gaslessDailyGas ?? DEFAULT_GASLESS_DAILY_GAS;
  const merchant = { merchantId: charge.merchantId, chainId: charge.chainId, kind: "gasless_payment" as const, budget: settings.relayerGasBudget };
  await checkRelayerBudget(prisma, merchant, gasEstimate, null, now);
  try {
    return await prisma.$transaction(async (tx) => {
      // One claim of the chain's relayer gas at a time (a sweep's too): withinRelayerBudget takes its lock.
      if (!(await withinRelayerBudget(tx, merchant, gasEstimate, now))) throw budgetExhausted(merchant, gasEstimate, now);
      if ((await gaslessGasToday(tx, charge.chainId, now)) + gasEstimate > budget) throw invalidAuthorization(BUDGET_SPENT);
      return tx.authorization.create({
        data: { id: newId("cauth"), purpose: "PAYMENT", chargeId, chainId: charge.chainId, gasEstimate, ...authorizationRow(a, now) },
      });
    });
  } catch (e) {
    // Refused under the lock: counted now that the transaction has rolled back.
    if (e instanceof AppError && e.code === "relayer_budget_exhausted") await countRelayerRefusal(prisma, merchant, now);
    if (!isUniqueViolation(e)) throw e;
    // A racing twin stored first, or another authorization for this charge or from this payer is on its way.
    const twin = await prisma.authorization.findUnique({
      where: { chainId_fromAddress_nonce: { chainId: charge.chainId, fromAddress: a.from, nonce: a.nonce } },
    });
    if (twin) return sameOrRefused(twin, chargeId, a);
    const forCharge = await prisma.authorization.findFirst({ where: { chargeId, purpose: "PAYMENT", endedAt: null } });
    if (forCharge) {
      throw new AppError(
        "charge_not_payable",
        `Charge ${chargeId} already has a payment without gas on its way (until the chain spends it, or ${validUntil(forCharge)}); wait for it.`,
        "id",
      );
    }
    throw invalidAuthorization("another payment without gas from this wallet is on its way; wait for it to be sent", "from");
  }
}

/**
 * A nonce already handed in: the same authorization again while it is on its way (a double click, a
 * retry) is answered with it; anything else, or once its transaction ended, is a replay.
 */
function sameOrRefused(stored: Authorization, chargeId: string, a: TransferAuthorization): Authorization {
  const same = stored.chargeId === chargeId && stored.signature.toLowerCase() === a.signature.toLowerCase() && toUnits(stored.value) === a.value;
  if (same && (stored.status === "RELAYING" || stored.status === "SENT")) return stored;
  throw invalidAuthorization("this nonce has already been used or cancelled", "nonce");
}

/** How long an answer waits for the worker to send an accepted authorization (without it, txHash is null: follow the charge). */
const RELAY_WAIT_MS = 10_000;

/**
 * The answer to an accepted authorization: as it is once the worker has sent it (its transaction's
 * current hash), or after `waitMs` still RELAYING.
 */
export async function relayedAnswer(prisma: Prisma, accepted: Authorization, waitMs = RELAY_WAIT_MS, pollMs = 100): Promise<ChargeAuthorizationResource> {
  const until = Date.now() + waitMs;
  let current = accepted;
  while (current.status === "RELAYING" && Date.now() < until) {
    await new Promise((r) => setTimeout(r, pollMs));
    current = (await prisma.authorization.findUnique({ where: { id: accepted.id } })) ?? current;
  }
  // Mined: its hash; still on its way: the latest it was sent as (a fee bump replaces it).
  const tx =
    current.txId === null ? null : await prisma.relayerTransaction.findUnique({ where: { id: current.txId }, select: { txHash: true, txHashes: true } });
  return chargeAuthorizationResource(current, tx ? (tx.txHash ?? tx.txHashes.at(-1) ?? null) : null);
}
