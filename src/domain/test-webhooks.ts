// Mock webhook events for test mode (spec 6: "the test environment supports mock webhook events").
// A mock event is a real event row with sample data shaped exactly like the real type's, signed and
// delivered like any other, so a merchant can build and check a receiver before taking a payment.
import type { Prisma } from "../db/client.js";
import { type Customer, type Event, type Invoice, Prisma as P, type Refund, type Subscription } from "../generated/prisma/client.js";
import { type ChargeEventExtras, type ChargeResource, chargeResource, type ChargeView } from "./charges/resource.js";
import type { ChargeSettings } from "./charges/settings.js";
import type { Charge } from "./charges/read.js";
import { customerResource } from "./customers.js";
import { AppError } from "./errors.js";
import { type ChargeEventType, type EventType, noEndpoint, recordEvent } from "./events.js";
import { newId } from "./ids.js";
import type { X402PaymentResource } from "./x402/payments.js";
import { invoiceResource } from "./invoices.js";
import { formatAmount } from "./money.js";
import { refundResource } from "./refunds.js";
import type { StoredSettlement } from "./settlements.js";
import type { Scope } from "./scope.js";
import { subscriptionResource } from "./subscriptions.js";
import type { TestWebhookRequest } from "./test-webhook-requests.js";

/** 400 `test_mode_only` in live mode: the doors ask before they parse the body, so that a live key hears this first. */
export function assertTestWebhookMode(scope: Scope): void {
  if (scope.livemode) throw new AppError("test_mode_only", "Mock webhooks are sent in test mode only: use a test key (sk_test_…)");
}

/** Records a mock event of the requested type for test mode and queues its delivery; 400 in live mode. */
export async function sendTestWebhook(
  prisma: Prisma,
  scope: Scope,
  { type }: TestWebhookRequest,
  settings: Pick<ChargeSettings, "paymentBaseUrl">,
  now = new Date(),
): Promise<Event> {
  assertTestWebhookMode(scope);
  return prisma.$transaction(async (tx) => {
    const { id } = await recordEvent(tx, scope, type, sampleData(scope, type, settings, now));
    const queued = await tx.webhookDelivery.count({ where: { eventId: id } });
    // Rolls the event back: a mock nobody receives would only clutter the event list.
    if (queued === 0) throw noEndpoint(scope);
    return tx.event.findUniqueOrThrow({ where: { id } });
  });
}

/** The status a charge has right after each charge event. */
const STATUS_OF: Record<ChargeEventType, Charge["status"]> = {
  "charge.pending": "PENDING",
  "charge.chain_selected": "PENDING",
  "charge.partial": "PENDING",
  "charge.received": "RECEIVED",
  "charge.completed": "COMPLETED",
  "charge.underpaid": "EXPIRED",
  "charge.expired": "EXPIRED",
  "charge.cancelled": "CANCELLED",
  "charge.late_payment": "EXPIRED",
  "charge.payout_confirmed": "EXPIRED",
  "charge.payout_blocked": "RECEIVED",
  "charge.needs_review": "COMPLETED",
  "charge.reviewed": "COMPLETED",
};

const SAMPLE_TX = `0x${"ab".repeat(32)}`;

function sampleData(scope: Scope, type: EventType, settings: Pick<ChargeSettings, "paymentBaseUrl">, now: Date): object {
  if (type.startsWith("customer.")) {
    const customer: Customer = {
      id: newId("cus"),
      merchantId: scope.merchantId,
      livemode: false,
      email: "jane.doe@example.com",
      emailLower: "jane.doe@example.com",
      name: "Jane Doe (test webhook)",
      phone: null,
      address: null,
      companyName: null,
      taxId: null,
      description: "Sample customer of a test webhook",
      metadata: { test_webhook: true },
      createdAt: now,
      updatedAt: now,
    };
    return type === "customer.deleted" ? { ...customerResource(customer), deleted: true } : customerResource(customer);
  }
  if (type.startsWith("refund.")) return sampleRefund(scope, type, settings, now);
  if (type.startsWith("subscription.") || type === "invoice.upcoming") return sampleSubscription(scope, type, settings, now);
  if (type.startsWith("invoice.")) return sampleInvoice(scope, type, settings, now);
  if (type === "x402.payment") return sampleX402Payment(now);
  const paid = !["charge.pending", "charge.chain_selected", "charge.expired", "charge.cancelled"].includes(type);
  const amount = 25_000_000n;
  const received = ["charge.partial", "charge.underpaid", "charge.payout_confirmed"].includes(type) ? 10_000_000n : amount;
  const flushed = ["charge.completed", "charge.payout_confirmed"].includes(type);
  const fee = (received * 100n) / 10_000n;
  const status = STATUS_OF[type as ChargeEventType];
  const onChain = type !== "charge.pending";
  const settlements = flushed
    ? [
        {
          txHash: SAMPLE_TX,
          chainId: 31337,
          blockNumber: 3,
          netAmount: String(received - fee),
          feeAmount: String(fee),
          confirmedAt: now.toISOString(),
        } satisfies StoredSettlement,
      ]
    : [];
  const charge: ChargeView = {
    id: newId("chrg"),
    merchantId: scope.merchantId,
    livemode: false,
    kind: "charge",
    customerId: null,
    orderId: "test-webhook-order",
    amount,
    amountReceived: paid ? received : null,
    feeAmount: flushed ? fee : null,
    netAmount: flushed ? received - fee : null,
    currency: "USDC",
    status,
    feeBps: 100,
    underpaymentToleranceBps: 0,
    settlementWallet: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8",
    contractVersion: 2,
    depositAddress: "0x5FbDB2315678afecb367f032d93F642f64180aa3",
    chainId: onChain ? 31337 : null,
    confirmations: onChain ? 1 : null,
    cloneAddress: onChain ? "0x5FbDB2315678afecb367f032d93F642f64180aa3" : null,
    flushTxHash: flushed ? SAMPLE_TX : null,
    description: "Sample charge of a test webhook",
    metadata: { test_webhook: true },
    successUrl: null,
    cancelUrl: null,
    expiresAt: new Date(now.getTime() + 15 * 60_000),
    createdAt: now,
    updatedAt: now,
    completedAt: type === "charge.completed" ? now : null,
    deployedAt: onChain ? now : null,
    settledAmount: flushed ? received : 0n,
    amountRefunded: 0n,
    settlements,
    payoutBlockedReason: type === "charge.payout_blocked" ? "wallet_blacklisted" : null,
    payoutBlockedAt: type === "charge.payout_blocked" ? now : null,
    expiryExtendedMinutes: 0,
    reviewReason:
      type === "charge.needs_review"
        ? "chain 31337: 0x5FbDB2315678afecb367f032d93F642f64180aa3 holds 1.00 USDC, the ledger says 0.00 (money the ledger counts that is not there)"
        : null,
    reviewAt: type === "charge.needs_review" || type === "charge.reviewed" ? now : null,
    reviewedReason: null,
    strayAssets: [],
    invoiceId: null,
    paymentLinkId: null,
    customerEmail: null,
    linkSessionHash: null,
  };
  // Typed as the resource and its events' extras, so a sample cannot carry what the event schemas do not declare.
  const data: ChargeResource & ChargeEventExtras = chargeResource(charge, settings);
  // Only these events list payments (the event schemas in rest/schemas/events.ts say so).
  if (type === "charge.partial" || type === "charge.received" || type === "charge.late_payment")
    data.payments = [
      {
        txHash: SAMPLE_TX,
        logIndex: 0,
        blockNumber: 1,
        chainId: 31337,
        from: "0x90F79bf6EB2c4f870365E785982E1f101E93b906",
        amount: formatAmount(received),
        status: "confirmed",
      },
    ];
  if (type === "charge.completed") data.overpaidAmount = "0.00";
  return data;
}

/** An x402 payment as its event would carry it: a sample, not a stored payment. */
function sampleX402Payment(now: Date): X402PaymentResource {
  return {
    id: newId("x402pay"),
    object: "x402_payment",
    livemode: false,
    status: "CONFIRMED",
    amount: "0.01",
    payer: "0x90F79bf6EB2c4f870365E785982E1f101E93b906",
    payTo: "0x5FbDB2315678afecb367f032d93F642f64180aa3",
    network: "eip155:31337",
    txHash: SAMPLE_TX,
    resource: "https://api.example.com/weather?city=Lisbon",
    description: "Sample x402 payment of a test webhook",
    error: null,
    createdAt: now.toISOString(),
  };
}

/** A refund as its event of `type` would carry it: a sample, not a stored refund. */
function sampleRefund(scope: Scope, type: EventType, settings: Pick<ChargeSettings, "paymentBaseUrl">, now: Date): object {
  const statuses: Record<string, Refund["status"]> = {
    "refund.created": "AWAITING_ADDRESS",
    "refund.updated": "AWAITING_PAYMENT",
    "refund.completed": "COMPLETED",
    "refund.cancelled": "CANCELLED",
  };
  const status = statuses[type]!;
  const refund: Refund = {
    id: newId("ref"),
    merchantId: scope.merchantId,
    livemode: false,
    chargeId: newId("chrg"),
    amount: new P.Decimal(5_000_000),
    reason: "Sample refund of a test webhook",
    status,
    chainId: 84532,
    fromAddress: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8",
    address: status === "AWAITING_ADDRESS" ? null : "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC",
    claimToken: status === "AWAITING_ADDRESS" ? "sample00000000000000000000000000" : null,
    afterBlock: 1n,
    txHash: status === "COMPLETED" ? SAMPLE_TX : null,
    createdAt: now,
    updatedAt: now,
    completedAt: status === "COMPLETED" ? now : null,
    cancelledAt: status === "CANCELLED" ? now : null,
  };
  return refundResource(refund, settings);
}

/** An invoice as its event of `type` would carry it: a sample, not a stored invoice. */
function sampleInvoice(scope: Scope, type: EventType, settings: Pick<ChargeSettings, "paymentBaseUrl">, now: Date): object {
  const statuses: Record<string, Invoice["status"]> = {
    "invoice.created": "DRAFT",
    "invoice.updated": "DRAFT",
    "invoice.deleted": "DRAFT",
    "invoice.finalized": "OPEN",
    "invoice.paid": "PAID",
    "invoice.voided": "VOID",
    "invoice.marked_uncollectible": "UNCOLLECTIBLE",
    "invoice.payment_failed": "OPEN",
  };
  const status = statuses[type]!;
  const issued = status !== "DRAFT";
  const invoice: Invoice = {
    id: newId("inv"),
    merchantId: scope.merchantId,
    livemode: false,
    customerId: newId("cus"),
    number: issued ? "INV-000001" : null,
    status,
    currency: "USDC",
    lineItems: [{ description: "Sample line of a test webhook", quantity: 2, unitAmount: "12500000", amount: "25000000" }],
    total: 25_000_000n,
    amountPaid: new P.Decimal(status === "PAID" ? 25_000_000 : 0),
    customerDetails: null,
    sellerDetails: null,
    dueDate: null,
    memo: "Sample invoice of a test webhook",
    metadata: { test_webhook: true },
    createdAt: now,
    updatedAt: now,
    finalizedAt: issued ? now : null,
    paidAt: status === "PAID" ? now : null,
    voidedAt: status === "VOID" ? now : null,
    markedUncollectibleAt: status === "UNCOLLECTIBLE" ? now : null,
    subscriptionId: null,
    billingReason: null,
    periodIndex: null,
    periodStart: null,
    periodEnd: null,
  };
  const data = invoiceResource(invoice, settings);
  return type === "invoice.deleted" ? { ...data, deleted: true } : data;
}

/** A subscription as its event of `type` would carry it (invoice.upcoming too): a sample, not a stored one. */
function sampleSubscription(scope: Scope, type: EventType, settings: Pick<ChargeSettings, "paymentBaseUrl">, now: Date): object {
  const status = type === "subscription.created" ? "INCOMPLETE" : type === "subscription.canceled" ? "CANCELED" : "ACTIVE";
  const authorized = status !== "INCOMPLETE";
  const periodEnd = new Date(now.getTime() + 30 * 86_400_000);
  const subscription: Subscription = {
    id: newId("sub"),
    merchantId: scope.merchantId,
    livemode: false,
    customerId: newId("cus"),
    planId: newId("plan"),
    status,
    amount: 25_000_000n,
    periodSeconds: 30 * 86_400,
    feeBps: 100,
    trialDays: 0,
    chainId: authorized ? 31337 : null,
    payer: authorized ? `0x${"12".repeat(20)}` : null,
    settlementWallet: null,
    spender: null,
    contractAddress: null,
    permission: null,
    permissionHash: null,
    permissionSignature: null,
    permit: null,
    currentPeriodStart: authorized ? now : null,
    currentPeriodEnd: authorized ? periodEnd : null,
    periodIndex: authorized ? 0 : null,
    trialEnd: null,
    cancelAtPeriodEnd: false,
    canceledAt: status === "CANCELED" ? now : null,
    cancelReason: status === "CANCELED" ? "requested" : null,
    latestInvoiceId: authorized ? newId("inv") : null,
    nextPullAt: null,
    failedPulls: 0,
    upcomingNotifiedFor: null,
    manageToken: "sample",
    expiresAt: now,
    metadata: { test_webhook: true },
    createdAt: now,
    updatedAt: now,
  };
  return subscriptionResource(subscription, settings);
}
