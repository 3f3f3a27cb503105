// The public description of a charge: the API resource (REST's answers, the OpenAPI `Charge` schema)
// and what charge events add to it. Events snapshot it inside the domain's transactions, which is
// why it lives here and not in a door.
import { z } from "zod";
import { explorerAddressUrl } from "../../chain/registry.js";
import type { Charge } from "./read.js";
import { MetadataShape, storedMetadata } from "../metadata.js";
import { formatAmount, formatAmountOrNull, type Units } from "../money.js";
import { PaymentResource } from "../payment-schema.js";
import { storedStrayAssets } from "../stray-assets.js";
import { SettlementResource, settlementResource, storedSettlements } from "../settlements.js";
import { amountOverpaid } from "./display.js";
import { CHARGE_STATUSES } from "./lifecycle.js";
import type { ChargeSettings } from "./settings.js";

/**
 * A charge whose money fields may be bigints as well as stored numerics: what the API shapes, so a
 * change can show the charge as it is after each of its steps before the row is written.
 */
export type ChargeView = Omit<Charge, "amountReceived" | "feeAmount" | "netAmount" | "settledAmount" | "amountRefunded"> & {
  amountReceived: Units | null;
  feeAmount: Units | null;
  netAmount: Units | null;
  settledAmount: Units;
  amountRefunded: Units;
};

/** The public JSON form of a charge (spec 2.2 plus the fields the OpenAPI `Charge` schema adds); also the event snapshot. */
export const ChargeResource = z.object({
  id: z.string().describe("The charge's id (chrg_…)."),
  object: z.literal("charge"),
  livemode: z.boolean().describe("True in live mode, false in test mode."),
  orderId: z.string().describe("The merchant's order identifier."),
  amount: z.string().describe('Requested amount, USDC, e.g. "25.00".'),
  amountReceived: z.string().nullable().describe("Confirmed money received; null until a payment is confirmed."),
  amountOverpaid: z
    .string()
    .describe('Confirmed money received beyond amount ("0.00" when none): what the buyer paid too much, yours to refund. Refunds do not lower it.'),
  amountRefunded: z.string().describe("Paid back to the buyer by your wallet: the completed refunds."),
  feeAmount: z.string().nullable().describe("Protocol fee taken at settlement; null until then."),
  netAmount: z.string().nullable().describe("Amount sent to the merchant's wallet; null until settlement."),
  currency: z.string().describe('Always "USDC".'),
  status: z.enum(CHARGE_STATUSES).describe("Where the charge is in its lifecycle."),
  cloneAddress: z.string().nullable().describe("The charge's payment contract, where the buyer pays; null until a chain is picked."),
  chainId: z.number().int().nullable().describe("The chain the buyer picked; null until then."),
  paymentUrl: z.string().describe("The hosted payment page to send the buyer to."),
  explorerUrl: z.string().nullable().describe("The payment contract on the chain's block explorer; null until a chain is picked, or on a chain without one."),
  feeBps: z.number().int().describe("Protocol fee in basis points (100 = 1%)."),
  flushTxHash: z.string().nullable().describe("The settlement transaction; null until paid out."),
  expiresAt: z.string().describe("When the charge expires unless paid."),
  createdAt: z.string().describe("When it was created."),
  completedAt: z.string().nullable().describe("When it completed (paid out to your wallet); null until then."),
  deployedAt: z.string().nullable().describe("When its payment contract was deployed; null until then."),
  customerId: z.string().nullable().describe("The customer the charge is for (cus_…), if any."),
  description: z.string().nullable().describe("Shown to the buyer on the hosted page."),
  metadata: MetadataShape.nullable().describe("Your key-value pairs."),
  successUrl: z.string().nullable().describe("Where the hosted page sends the buyer once paid."),
  cancelUrl: z.string().nullable().describe("Where the hosted page sends a buyer who gives up."),
  settlements: z.array(SettlementResource).describe("Every confirmed payout from the payment contract, oldest first, whoever sent it."),
  payoutBlockedReason: z
    .string()
    .nullable()
    .describe(
      "Why money in the payment contract cannot be paid out right now (it stays safe there), e.g. wallet_blacklisted or flush_failing; null when nothing blocks it.",
    ),
  needsReview: z
    .boolean()
    .describe(
      "True when the ledger and the chain disagree about this charge (reviewReason says how; the money fields may not be final); mark it reviewed once you have looked.",
    ),
  reviewReason: z
    .string()
    .nullable()
    .describe("What the reconciliation or a deep reorg found; null when nothing needs review, and again once the charge is marked reviewed."),
  strayAssets: z
    .array(
      z.object({
        chainId: z.number().int().describe("The chain it is on."),
        token: z.string().describe('The token\'s address, or "native".'),
        amount: z.string().describe("Base units of that token."),
      }),
    )
    .describe("Other tokens and the native coin found at the charge's address by the last reconciliation: they can be swept to your wallet."),
  invoiceId: z.string().nullable().describe("The invoice this charge pays (made from its hosted page), or null."),
  paymentLinkId: z.string().nullable().describe("The payment link a buyer made this charge from, or null."),
  customerEmail: z
    .string()
    .nullable()
    .describe("The email the buyer gave on a payment link that asks for it (collectEmail): where the receipt goes without a customer; null otherwise."),
});
export type ChargeResource = z.infer<typeof ChargeResource>;

/**
 * What some charge events add to the charge they carry (.docs/webhooks.md); never in an API answer.
 * The OpenAPI document gives each event type the fields it may carry (rest/schemas/events.ts).
 */
export const ChargeEventExtras = z.object({
  payments: z.array(PaymentResource).optional().describe("The confirmed payments the event reports, in chain order."),
  underpaidAmount: z.string().optional().describe("What is missing when money within the underpayment tolerance was accepted."),
  overpaidAmount: z.string().optional().describe('What was paid beyond amount ("0.00" when nothing): the charge\'s amountOverpaid when it completed.'),
});
export type ChargeEventExtras = z.infer<typeof ChargeEventExtras>;

/** Shapes a stored charge as the API shows it. */
export function chargeResource(c: ChargeView, settings: Pick<ChargeSettings, "paymentBaseUrl">): ChargeResource {
  return {
    id: c.id,
    object: "charge",
    livemode: c.livemode,
    orderId: c.orderId,
    amount: formatAmount(c.amount),
    amountReceived: formatAmountOrNull(c.amountReceived),
    amountOverpaid: formatAmount(amountOverpaid(c)),
    amountRefunded: formatAmount(c.amountRefunded),
    feeAmount: formatAmountOrNull(c.feeAmount),
    netAmount: formatAmountOrNull(c.netAmount),
    currency: c.currency,
    status: c.status,
    cloneAddress: c.cloneAddress,
    chainId: c.chainId,
    ...chargeLinks(c, settings),
    feeBps: c.feeBps,
    flushTxHash: c.flushTxHash,
    expiresAt: c.expiresAt.toISOString(),
    createdAt: c.createdAt.toISOString(),
    completedAt: c.completedAt?.toISOString() ?? null,
    deployedAt: c.deployedAt?.toISOString() ?? null,
    customerId: c.customerId,
    description: c.description,
    metadata: storedMetadata(c.metadata, "charges.metadata"),
    successUrl: c.successUrl,
    cancelUrl: c.cancelUrl,
    settlements: storedSettlements(c).map(settlementResource),
    payoutBlockedReason: c.payoutBlockedReason,
    needsReview: c.reviewReason !== null,
    reviewReason: c.reviewReason,
    strayAssets: storedStrayAssets(c.strayAssets),
    invoiceId: c.invoiceId,
    paymentLinkId: c.paymentLinkId,
    customerEmail: c.customerEmail ?? null,
  };
}

/** Where the buyer pays (the hosted page) and where anyone can watch the clone (the explorer). */
export function chargeLinks(
  c: Pick<Charge, "id" | "chainId" | "cloneAddress">,
  settings: Pick<ChargeSettings, "paymentBaseUrl">,
): { paymentUrl: string; explorerUrl: string | null } {
  const explorerUrl = c.chainId !== null && c.cloneAddress !== null ? explorerAddressUrl(c.chainId, c.cloneAddress) : null;
  return { paymentUrl: `${settings.paymentBaseUrl}/${c.id}`, explorerUrl };
}
