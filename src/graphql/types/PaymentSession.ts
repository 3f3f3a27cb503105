// `PaymentSession` (public: the hosted page's view of a charge), `Chain`, and the public
// `paymentSession` query and `selectPaymentChain` mutation; plus the merchant's `chains` query.
import { selectChain } from "../../domain/chain-selection.js";
import { selectSchema } from "../../domain/chain-selection-requests.js";
import { parseInput } from "../../domain/validation.js";
import { getPublicCharge, type PublicChain, type PublicCharge, type PublicPayment, publicChain } from "../../domain/payment-session.js";
import { builder } from "../builder.js";
import { liveValue } from "../live.js";

export const Chain = builder.objectRef<PublicChain>("Chain").implement({
  description: "A chain a charge can be paid on.",
  fields: (t) => ({
    chainId: t.exposeInt("chainId", { description: "The EVM chain id." }),
    name: t.exposeString("name", { description: "The chain's name, e.g. Base." }),
    usdcAddress: t.exposeString("usdcAddress", { description: "The native USDC contract to pay with." }),
    explorerUrl: t.exposeString("explorerUrl", { nullable: true, description: "The chain's block explorer; null when it has none." }),
  }),
});

export const SessionPayment = builder.objectRef<PublicPayment>("SessionPayment").implement({
  description: "A USDC transfer to the charge's clone, as the hosted page shows it.",
  fields: (t) => ({
    txHash: t.exposeString("txHash", { description: "The transaction of the transfer." }),
    amount: t.expose("amount", { type: "Amount", description: "USDC." }),
    status: t.exposeString("status", { description: "Either pending (waiting for confirmations) or confirmed (counted)." }),
    confirmations: t.exposeInt("confirmations", { description: "Blocks on top of the payment's, counting its own." }),
  }),
});

export const PaymentSession = builder.objectRef<PublicCharge>("PaymentSession").implement({
  description: "What anyone holding a charge id may see: the hosted payment page's view.",
  fields: (t) => ({
    id: t.exposeID("id", { description: "The charge's id (chrg_…)." }),
    orderId: t.exposeString("orderId", { description: "The merchant's order id (handed back to successUrl)." }),
    livemode: t.exposeBoolean("livemode", { description: "True for real money, false for test chains." }),
    amount: t.expose("amount", { type: "Amount", description: "What the buyer is asked to pay, USDC." }),
    currency: t.exposeString("currency", { description: 'Always "USDC".' }),
    status: t.exposeString("status", { description: "The charge's status: PENDING, RECEIVED, COMPLETED, EXPIRED or CANCELLED." }),
    statusMessage: t.exposeString("statusMessage", { description: "The status in the buyer's words, as the hosted page shows it." }),
    amountReceived: t.expose("amountReceived", { type: "Amount", nullable: true, description: "Confirmed money so far, USDC; null before any." }),
    amountRemaining: t.expose("amountRemaining", { type: "Amount", description: "What is left to pay, USDC." }),
    amountOverpaid: t.expose("amountOverpaid", {
      type: "Amount",
      description: 'Confirmed money beyond amount, USDC ("0.00" when none): the merchant sees it and can refund it.',
    }),
    amountPending: t.expose("amountPending", { type: "Amount", description: "Seen on chain, waiting for confirmations; not in amountReceived yet." }),
    confirmationsRequired: t.exposeInt("confirmationsRequired", {
      nullable: true,
      description: "Blocks a payment needs on the picked chain before it counts; null until a chain is picked.",
    }),
    payments: t.field({ type: [SessionPayment], description: "The transfers seen so far, in chain order.", resolve: (s) => s.payments }),
    chainId: t.exposeInt("chainId", { nullable: true, description: "The chain picked; null until then." }),
    cloneAddress: t.exposeString("cloneAddress", { nullable: true, description: "The address to pay to; null until a chain is picked." }),
    flushTxHash: t.exposeString("flushTxHash", { nullable: true, description: "The settlement transaction, once paid out." }),
    expiresAt: t.expose("expiresAt", { type: "DateTime", description: "ISO 8601: when the charge expires unless paid." }),
    paymentWindowMinutes: t.exposeInt("paymentWindowMinutes", {
      description: "Minutes the buyer has to pay once a chain is picked: picking one sets expiresAt to that moment plus these.",
    }),
    description: t.exposeString("description", { nullable: true, description: "The merchant's description of the purchase." }),
    merchantName: t.exposeString("merchantName", { description: "Who the buyer pays." }),
    successUrl: t.exposeString("successUrl", { nullable: true, description: "Where the buyer goes once paid." }),
    cancelUrl: t.exposeString("cancelUrl", { nullable: true, description: "Where a buyer who gives up goes." }),
    chains: t.field({ type: [Chain], description: "Chains offered for this charge's mode.", resolve: (s) => s.chains }),
  }),
});

builder.queryFields((t) => ({
  paymentSession: t.field({
    type: PaymentSession,
    description: "Public: the hosted page's view of a charge (no API key needed).",
    args: { chargeId: t.arg.id({ required: true, description: "The charge's id (chrg_…)." }) },
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
    args: {
      chargeId: t.arg.id({ required: true, description: "The charge's id (chrg_…)." }),
      chainId: t.arg.int({ required: true, description: "One of the session's chains." }),
    },
    resolve: (_root, { chargeId, chainId }, ctx) => selectChain(ctx.prisma, ctx.chains, ctx.charges, chargeId, parseInput(selectSchema, { chainId })),
  }),
}));

builder.subscriptionFields((t) => ({
  paymentSessionUpdated: t.field({
    type: PaymentSession,
    description: "Public: the hosted page's view of a charge, first as it is, then whenever it or its payments change (each new confirmation too).",
    args: { chargeId: t.arg.id({ required: true, description: "The charge's id (chrg_…)." }) },
    subscribe: (_root, { chargeId }, ctx) => ctx.live.sessionUpdates(chargeId, () => getPublicCharge(ctx.prisma, ctx.chains, chargeId), ctx.signal),
    resolve: (session) => liveValue(session),
  }),
}));
