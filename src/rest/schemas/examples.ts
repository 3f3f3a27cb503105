// One worked example per resource, shown in /v1/openapi.json as the operations' answers. Each is
// typed by its schema (a field the schema does not declare, or a missing one, does not compile), and
// the OpenAPI test validates every example against the document.
import type { X402Resource } from "../../domain/x402/account.js";
import type { X402PaymentResource } from "../../domain/x402/payments.js";
import type { z } from "zod";
import type { BalanceResource, BalanceTransactionResource } from "../../domain/balance-transactions.js";
import type { ChargeAuthorizationResource } from "../../domain/charge-authorizations.js";
import type { ChargeResource } from "../../domain/charges/resource.js";
import type { CustomerResource, CustomerWithStats } from "../../domain/customers.js";
import type { InvoiceResource } from "../../domain/invoices.js";
import type { PaymentLinkResource } from "../../domain/payment-links.js";
import type { PublicCharge } from "../../domain/payment-session.js";
import type { RefundResource } from "../../domain/refunds.js";
import type { PlanResource, SubscriptionResource } from "../../domain/subscriptions.js";
import type { DeletedCustomer, DeletedInvoice, DeletedWebhookEndpoint, WebhookEndpoint, WebhookEndpointWithSecret } from "./components.js";
import type { ApiError } from "./errors.js";
import type { Event, EventWithDeliveries } from "./events.js";

const PAY = "https://stablegate.shop.example/pay";
const CHARGE_ID = "chrg_7Hd2kQ9xLm4Tz7Wc1Vb6Np3R";
const CUSTOMER_ID = "cus_4qXk9TbN2mVc7Rz1LhW8sPdA";
const PLAN_ID = "plan_2Wd7Kx4Qm9Lt1Vb6Np3Rz8Hc";
const SUB_ID = "sub_6Ty3Hn8Bc1Vx5Zq2Mk9Lw4Pd";
const CLONE = "0x8D3A1F6B2C4e9a7d5B0c3E1f2A4B6C8d0e2F4A6b";
const BUYER = "0x90F79bf6EB2c4f870365E785982E1f101E93b906";
const WALLET = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";
const PAYMENT_TX = "0x5c2f8e1d9a3b7c6e4f0a2b8d1c3e5f7a9b0c2d4e6f8a1b3c5d7e9f0a2b4c6d8e";
const PAYOUT_TX = "0x1e7a3c5b9d2f4e6a8c0b1d3f5a7c9e2b4d6f8a0c1e3b5d7f9a2c4e6b8d0f1a3c";
const CREATED = "2026-11-24T10:00:00.000Z";
const PAID = "2026-11-24T10:04:12.000Z";
const COMPLETED = "2026-11-24T10:04:40.000Z";

const charge = {
  id: CHARGE_ID,
  object: "charge",
  livemode: false,
  orderId: "order-1001",
  amount: "25.00",
  amountReceived: "25.00",
  amountOverpaid: "0.00",
  amountRefunded: "0.00",
  feeAmount: "0.25",
  netAmount: "24.75",
  currency: "USDC",
  status: "COMPLETED",
  cloneAddress: CLONE,
  chainId: 84532,
  paymentUrl: `${PAY}/${CHARGE_ID}`,
  explorerUrl: `https://sepolia.basescan.org/address/${CLONE}`,
  feeBps: 100,
  flushTxHash: PAYOUT_TX,
  expiresAt: "2026-11-24T10:16:30.000Z",
  createdAt: CREATED,
  completedAt: COMPLETED,
  deployedAt: COMPLETED,
  customerId: CUSTOMER_ID,
  description: "Two mugs",
  metadata: { sku: "mug-2" },
  successUrl: "https://shop.example/thanks",
  cancelUrl: null,
  settlements: [{ txHash: PAYOUT_TX, chainId: 84532, blockNumber: 18_204_377, amount: "25.00", netAmount: "24.75", feeAmount: "0.25", confirmedAt: COMPLETED }],
  payoutBlockedReason: null,
  needsReview: false,
  reviewReason: null,
  strayAssets: [],
  invoiceId: null,
  paymentLinkId: null,
  customerEmail: null,
} satisfies ChargeResource;

const customer = {
  id: CUSTOMER_ID,
  object: "customer",
  livemode: false,
  email: "jane@example.com",
  name: "Jane Doe",
  phone: null,
  address: { line1: "1 Main St", line2: "", city: "Berlin", state: "", postalCode: "10115", country: "DE" },
  companyName: null,
  taxId: null,
  description: null,
  metadata: { crmId: "A-17" },
  created: 1795514400,
  updated: 1795514400,
  createdAt: CREATED,
  updatedAt: CREATED,
} satisfies CustomerResource;

const event = {
  id: "evt_2Wm8cR5tYb1Kq7Nx3Jd9Lf4S",
  type: "charge.completed",
  timestamp: COMPLETED,
  livemode: false,
  data: { ...charge, overpaidAmount: "0.00" },
} satisfies z.output<typeof Event>;

const endpoint = {
  id: "whep_9Tb3Nc6Vx1Zq8Lm4Kd7Rw2Hs",
  object: "webhook_endpoint",
  livemode: false,
  url: "https://shop.example/hooks",
  events: ["charge.completed", "charge.underpaid"],
  description: "order fulfilment",
  status: "enabled",
  createdAt: CREATED,
} satisfies z.output<typeof WebhookEndpoint>;

/** The example of each named schema an answer refers to, by its name in components.schemas. */
export const EXAMPLES: Record<string, unknown> = {
  Charge: charge,
  Customer: customer,
  CustomerWithStats: { ...customer, invoiceCount: 1, chargeCount: 3, totalSpent: "75.00" } satisfies z.output<typeof CustomerWithStats>,
  DeletedCustomer: { id: CUSTOMER_ID, object: "customer", deleted: true } satisfies z.output<typeof DeletedCustomer>,
  PublicCharge: {
    id: CHARGE_ID,
    orderId: "order-1001",
    amount: "25.00",
    currency: "USDC",
    status: "COMPLETED",
    amountReceived: "25.00",
    amountRemaining: "0.00",
    amountOverpaid: "0.00",
    amountPending: "0.00",
    confirmationsRequired: 3,
    payments: [{ txHash: PAYMENT_TX, amount: "25.00", status: "confirmed", confirmations: 3 }],
    chainId: 84532,
    cloneAddress: CLONE,
    flushTxHash: PAYOUT_TX,
    expiresAt: "2026-11-24T10:16:30.000Z",
    paymentWindowMinutes: 15,
    description: "Two mugs",
    merchantName: "Mug Shop",
    successUrl: "https://shop.example/thanks",
    cancelUrl: null,
    livemode: false,
    chains: [{ chainId: 84532, name: "Base Sepolia", usdcAddress: "0x036CbD53842c5426634e7929541eC2318f3dCF7e", explorerUrl: "https://sepolia.basescan.org" }],
    statusMessage: "Payment complete. Thank you!",
  } satisfies PublicCharge,
  ChargeAuthorization: {
    id: "cauth_6Pq1Rs8Tu3Vw5Xy7Za2Bc4De",
    object: "charge_authorization",
    chargeId: CHARGE_ID,
    status: "RELAYING",
    txHash: null,
    value: "25.00",
    error: null,
  } satisfies ChargeAuthorizationResource,
  Refund: {
    id: "ref_3Lk7Jh1Gf5Ds9Ap2Qw6Er8Ty",
    object: "refund",
    livemode: false,
    chargeId: CHARGE_ID,
    amount: "5.00",
    reason: "returned item",
    status: "AWAITING_PAYMENT",
    address: BUYER,
    fromAddress: WALLET,
    chainId: 84532,
    txHash: null,
    claimUrl: null,
    authorization: null,
    createdAt: "2026-11-25T09:30:00.000Z",
    completedAt: null,
    cancelledAt: null,
  } satisfies RefundResource,
  Invoice: {
    id: "inv_8Zx2Cv4Bn6Mq1Wp3Er5Ty7Ui",
    object: "invoice",
    livemode: false,
    number: "INV-000001",
    status: "OPEN",
    customerId: CUSTOMER_ID,
    currency: "USDC",
    lineItems: [{ description: "Consulting, November", quantity: 10, unitAmount: "120.00", amount: "1200.00" }],
    subtotal: "1200.00",
    total: "1200.00",
    amountPaid: "0.00",
    amountDue: "1200.00",
    dueDate: "2026-12-31",
    memo: "Thank you for your business.",
    metadata: null,
    hostedInvoiceUrl: `${PAY}/invoices/inv_8Zx2Cv4Bn6Mq1Wp3Er5Ty7Ui`,
    createdAt: CREATED,
    finalizedAt: PAID,
    paidAt: null,
    voidedAt: null,
    markedUncollectibleAt: null,
    subscriptionId: null,
    billingReason: null,
  } satisfies InvoiceResource,
  DeletedInvoice: { id: "inv_8Zx2Cv4Bn6Mq1Wp3Er5Ty7Ui", object: "invoice", deleted: true } satisfies z.output<typeof DeletedInvoice>,
  PaymentLink: {
    id: "plink_5Gh8Jk2Lz4Xc6Vb1Nm3Qw9Er",
    object: "payment_link",
    livemode: false,
    name: "Coffee beans, 1 kg",
    amount: "24.00",
    description: "Roasted this week",
    url: `${PAY}/l/plink_5Gh8Jk2Lz4Xc6Vb1Nm3Qw9Er`,
    active: true,
    successUrl: null,
    cancelUrl: null,
    metadata: null,
    collectEmail: false,
    quantityMax: null,
    createdAt: CREATED,
  } satisfies PaymentLinkResource,
  Plan: {
    id: PLAN_ID,
    object: "plan",
    livemode: false,
    name: "Pro, monthly",
    amount: "25.00",
    currency: "USDC",
    interval: "month",
    intervalCount: 1,
    trialDays: 14,
    active: true,
    metadata: null,
    createdAt: CREATED,
  } satisfies PlanResource,
  Subscription: {
    id: SUB_ID,
    object: "subscription",
    livemode: false,
    customerId: CUSTOMER_ID,
    planId: PLAN_ID,
    status: "ACTIVE",
    amount: "25.00",
    currency: "USDC",
    chainId: 84532,
    payer: BUYER,
    contractAddress: "0x3C5e8b2A9d1F4c7E6a0B2d4F6a8C0e2B4d6F8a1C",
    currentPeriodStart: PAID,
    currentPeriodEnd: "2026-12-24T10:04:12.000Z",
    trialEnd: null,
    cancelAtPeriodEnd: false,
    canceledAt: null,
    cancelReason: null,
    latestInvoiceId: "inv_8Zx2Cv4Bn6Mq1Wp3Er5Ty7Ui",
    checkoutUrl: `${PAY}/subscribe/${SUB_ID}`,
    manageUrl: `${PAY}/subscribe/${SUB_ID}/manage?token=7dQ2mX9kLp4Rt6Wz1Bv3Nc8Hj5Fg0Sa2`,
    metadata: null,
    createdAt: CREATED,
  } satisfies SubscriptionResource,
  X402: {
    object: "x402",
    livemode: false,
    payTo: "0x4B2f7c1E9a3D5e8F0b6A2c4D8e1F3a5B7c9D0e2F",
    facilitatorUrl: "https://pay.example.com/x402",
    accepts: [
      {
        scheme: "exact",
        network: "eip155:84532",
        asset: "0x036CbD53842c5426634e7929541eC2318f3dCF7e",
        extra: { name: "USDC", version: "2" },
        minAmount: "0.01",
      },
    ],
  } satisfies X402Resource,
  X402Payment: {
    id: "x402pay_7Hn2Kq9Lm4Pw6Rt8Vx1Zb3Cd",
    object: "x402_payment",
    livemode: false,
    status: "SETTLED",
    amount: "0.01",
    payer: "0x90F79bf6EB2c4f870365E785982E1f101E93b906",
    payTo: "0x4B2f7c1E9a3D5e8F0b6A2c4D8e1F3a5B7c9D0e2F",
    network: "eip155:84532",
    txHash: PAYMENT_TX,
    resource: "https://api.example.com/weather?city=Lisbon",
    description: "Today's weather",
    error: null,
    createdAt: PAID,
  } satisfies X402PaymentResource,
  BalanceTransaction: {
    id: "btx_1Qa3Ws5Ed7Rf9Tg2Yh4Uj6Ik",
    object: "balance_transaction",
    livemode: false,
    type: "payment",
    amount: "25.00",
    chargeId: CHARGE_ID,
    refundId: null,
    invoiceId: null,
    chainId: 84532,
    txHash: PAYMENT_TX,
    blockNumber: 18_204_361,
    reversesId: null,
    x402: null,
    createdAt: PAID,
  } satisfies BalanceTransactionResource,
  Balance: {
    object: "balance",
    livemode: false,
    held: [{ chainId: 84532, amount: "0.00" }],
    onItsWay: [],
    paidOut: [{ chainId: 84532, amount: "24.75" }],
    fees: [{ chainId: 84532, amount: "0.25" }],
    refunded: [],
  } satisfies BalanceResource,
  WebhookEndpoint: endpoint,
  WebhookEndpointWithSecret: { ...endpoint, secret: "whsec_ppO519yLgAhGOYS6LXoIEeTouVhENa1Aln45u5uicGI=" } satisfies z.output<typeof WebhookEndpointWithSecret>,
  DeletedWebhookEndpoint: { id: endpoint.id, object: "webhook_endpoint", deleted: true } satisfies z.output<typeof DeletedWebhookEndpoint>,
  Event: event,
  EventWithDeliveries: {
    ...event,
    deliveries: [
      {
        endpointId: endpoint.id,
        url: endpoint.url,
        status: "succeeded",
        nextAttemptAt: null,
        attempts: [{ attemptedAt: "2026-11-24T10:04:41.000Z", statusCode: 200, latencyMs: 84, error: null, succeeded: true, responseBody: "ok" }],
      },
    ],
  } satisfies z.output<typeof EventWithDeliveries>,
  Error: {
    statusCode: 404,
    error: "Not Found",
    code: "resource_missing",
    message: `No such charge: '${CHARGE_ID}'`,
    param: "id",
    requestId: "req_0Ab2Cd4Ef6Gh8Ij1Kl3M",
    docUrl: "http://localhost:4000/docs#error-resource_missing",
  } satisfies z.output<typeof ApiError>,
};
