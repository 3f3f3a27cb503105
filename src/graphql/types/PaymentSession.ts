// `PaymentSession` (public: the hosted page's view of a charge), `Chain`, and the public
// `paymentSession` query and `selectPaymentChain` mutation; plus the merchant's `chains` query.
import { selectChain } from "../../domain/chain-selection.js";
import { getPublicCharge, type PublicChain, type PublicCharge, type PublicPayment, publicChain } from "../../domain/payment-session.js";
import { builder } from "../builder.js";
import { liveValue } from "../live.js";

export const Chain = builder.objectRef<PublicChain>("Chain").implement({
  description: "A chain a charge can be paid on.",
  fields: (t) => ({
    chainId: t.exposeInt("chainId"),
    name: t.exposeString("name"),
    usdcAddress: t.exposeString("usdcAddress", { description: "The native USDC contract to pay with." }),
    explorerUrl: t.exposeString("explorerUrl", { nullable: true }),
  }),
});

export const SessionPayment = builder.objectRef<PublicPayment>("SessionPayment").implement({
  description: "A USDC transfer to the charge's clone, as the hosted page shows it.",
  fields: (t) => ({
    txHash: t.exposeString("txHash"),
    amount: t.exposeString("amount"),
    status: t.exposeString("status", { description: "pending (waiting for confirmations) or confirmed (counted)." }),
    confirmations: t.exposeInt("confirmations", { description: "Blocks on top of the payment's, counting its own." }),
  }),
});

export const PaymentSession = builder.objectRef<PublicCharge>("PaymentSession").implement({
  description: "What anyone holding a charge id may see: the hosted payment page's view.",
  fields: (t) => ({
    id: t.exposeID("id"),
    orderId: t.exposeString("orderId", { description: "The merchant's order id (handed back to successUrl)." }),
    livemode: t.exposeBoolean("livemode"),
    amount: t.exposeString("amount"),
    currency: t.exposeString("currency"),
    status: t.exposeString("status"),
    statusMessage: t.exposeString("statusMessage", { description: "The status in the buyer's words, as the hosted page shows it." }),
    amountReceived: t.exposeString("amountReceived", { nullable: true }),
    amountRemaining: t.exposeString("amountRemaining"),
    amountPending: t.exposeString("amountPending", { description: "Seen on chain, waiting for confirmations; not in amountReceived yet." }),
    confirmationsRequired: t.exposeInt("confirmationsRequired", { nullable: true }),
    payments: t.field({ type: [SessionPayment], resolve: (s) => s.payments }),
    chainId: t.exposeInt("chainId", { nullable: true }),
    cloneAddress: t.exposeString("cloneAddress", { nullable: true }),
    flushTxHash: t.exposeString("flushTxHash", { nullable: true, description: "The settlement transaction, once paid out." }),
    expiresAt: t.exposeString("expiresAt"),
    description: t.exposeString("description", { nullable: true }),
    merchantName: t.exposeString("merchantName"),
    successUrl: t.exposeString("successUrl", { nullable: true }),
    cancelUrl: t.exposeString("cancelUrl", { nullable: true }),
    chains: t.field({ type: [Chain], description: "Chains offered for this charge's mode.", resolve: (s) => s.chains }),
  }),
});

builder.queryFields((t) => ({
  paymentSession: t.field({
    type: PaymentSession,
    description: "Public: the hosted page's view of a charge (no API key needed).",
    args: { chargeId: t.arg.id({ required: true }) },
    resolve: (_root, { chargeId }, ctx) => getPublicCharge(ctx.prisma, ctx.chains, chargeId),
  }),
  chains: t.field({
    type: [Chain],
    description: "The chains your key's mode can take payments on.",
    resolve: (_root, _args, ctx) => ctx.chains.forMode(ctx.scope().livemode).map(publicChain),
  }),
}));

builder.mutationFields((t) => ({
  selectPaymentChain: t.field({
    type: PaymentSession,
    description: "Public: picks the chain a charge is paid on (once) and returns its payment address.",
    args: { chargeId: t.arg.id({ required: true }), chainId: t.arg.int({ required: true }) },
    resolve: (_root, { chargeId, chainId }, ctx) => selectChain(ctx.prisma, ctx.chains, ctx.charges, chargeId, { chainId }),
  }),
}));

builder.subscriptionFields((t) => ({
  paymentSessionUpdated: t.field({
    type: PaymentSession,
    description: "Public: the hosted page's view of a charge, first as it is, then whenever it or its payments change (each new confirmation too).",
    args: { chargeId: t.arg.id({ required: true }) },
    subscribe: (_root, { chargeId }, ctx) => ctx.live.sessionUpdates(chargeId, () => getPublicCharge(ctx.prisma, ctx.chains, chargeId), ctx.signal),
    resolve: (session) => liveValue(session),
  }),
}));
