// `Charge`: the type, its queries (`charge`, `chargeByOrderId`, `charges`) and mutations
// (`createCharge`, `cancelCharge`, `markChargeReviewed`). Rules live in domain/charges/
// (the state machine in lifecycle.ts) and domain/review.
import { describe } from "../../domain/describe.js";
import { CHARGE_STATUSES } from "../../domain/charges/lifecycle.js";
import { amountOverpaid, CHARGE_DISPLAY_STATUSES, type ChargeDisplayStatus as DisplayStatusName, chargeDisplayStatus } from "../../domain/charges/display.js";
import { cancelCharge } from "../../domain/charges/cancel.js";
import { ChargeResource, chargeLinks } from "../../domain/charges/resource.js";
import { countCharges, pageCharges } from "../../domain/charges/list.js";
import { createCharge } from "../../domain/charges/create.js";
import { getCharge, getChargeByOrderId } from "../../domain/charges/read.js";
import { createSchema, filtersOnly, pageSchema, SEARCH_DESCRIPTION } from "../../domain/charges/requests.js";
import { storedMetadata } from "../../domain/metadata.js";
import { amountRefundable } from "../../domain/refunds.js";
import { markChargeReviewed } from "../../domain/review.js";
import { settlementResource, storedSettlements } from "../../domain/settlements.js";
import { storedStrayAssets } from "../../domain/stray-assets.js";
import { parseInput } from "../../domain/validation.js";
import type { Prisma as P } from "../../generated/prisma/client.js";
import { builder } from "../builder.js";
import { connectionOf, countedConnection, nodeInclude, pageEnd, pageRequest } from "../connection.js";
import { liveValue } from "../live.js";
import { Settlement } from "./Settlement.js";

const STATUS_DESCRIPTIONS: Record<(typeof CHARGE_STATUSES)[number], string> = {
  PENDING: "Waiting for the buyer's money (confirmed payments below the amount so far).",
  RECEIVED: "Confirmed payments reach the amount; the payout is on its way.",
  COMPLETED: "Paid out to your wallet: fulfil the order.",
  EXPIRED: "Not paid in time; any partial money is paid out to you.",
  CANCELLED: "You cancelled it.",
};

export const ChargeStatus = builder.enumType("ChargeStatus", {
  values: Object.fromEntries(CHARGE_STATUSES.map((s) => [s, { description: STATUS_DESCRIPTIONS[s] }])),
  description: "PENDING → RECEIVED → COMPLETED; PENDING → EXPIRED; PENDING → CANCELLED.",
});

const DISPLAY_DESCRIPTIONS: Record<DisplayStatusName, string> = {
  PENDING: "Waiting for the buyer's money; nothing confirmed yet.",
  PARTLY_PAID: "PENDING with confirmed money below the amount: waiting for the rest.",
  RECEIVED: "Confirmed payments reach the amount; the payout is on its way.",
  COMPLETED: "Paid out to your wallet: fulfil the order.",
  PARTLY_REFUNDED: "Some of the money received was paid back to the buyer (amountRefunded).",
  REFUNDED: "All the money received was paid back to the buyer.",
  UNDERPAID: "EXPIRED with a partial amount, which is paid out to you.",
  EXPIRED: "Not paid in time; nothing was received.",
  CANCELLED: "You cancelled it.",
};

export const ChargeDisplayStatus = builder.enumType("ChargeDisplayStatus", {
  values: Object.fromEntries(CHARGE_DISPLAY_STATUSES.map((s) => [s, { description: DISPLAY_DESCRIPTIONS[s] }])),
  description: "The status refined by the money a charge holds, as the dashboard shows it: partly paid, underpaid, partly or fully refunded.",
});

const StrayAsset = builder.objectRef<{ chainId: number; token: string; amount: string }>("StrayAsset").implement({
  description: "Another token, or the native coin, found at a charge's address: sweep it to your wallet with sweepCharge.",
  fields: (t) => ({
    chainId: t.exposeInt("chainId", { description: describe(ChargeResource.shape.strayAssets.element, "chainId") }),
    token: t.exposeString("token", { description: describe(ChargeResource.shape.strayAssets.element, "token") }),
    amount: t.exposeString("amount", { description: describe(ChargeResource.shape.strayAssets.element, "amount") }),
  }),
});

export const Charge = builder.prismaNode("Charge", {
  description: "A request for a USDC payment: the buyer pays into the charge's own payment contract, which pays out to your wallet.",
  id: { field: "id" },
  findUnique: (id, ctx) => ({ id, ...ctx.scope(), kind: "charge" }),
  fields: (t) => ({
    livemode: t.exposeBoolean("livemode", { description: describe(ChargeResource, "livemode") }),
    orderId: t.exposeString("orderId", { description: describe(ChargeResource, "orderId") }),
    amount: t.field({ type: "Amount", description: describe(ChargeResource, "amount"), resolve: (c) => c.amount }),
    amountReceived: t.field({
      type: "Amount",
      description: describe(ChargeResource, "amountReceived"),
      nullable: true,
      resolve: (c) => c.amountReceived,
    }),
    amountOverpaid: t.field({
      type: "Amount",
      description: describe(ChargeResource, "amountOverpaid"),
      resolve: (c) => amountOverpaid(c),
    }),
    amountRefunded: t.field({ type: "Amount", description: describe(ChargeResource, "amountRefunded"), resolve: (c) => c.amountRefunded }),
    amountRefundable: t.field({
      type: "Amount",
      description:
        'What refunds may still take back ("0.00" when nothing): confirmed money received less the refunds that are not cancelled (createRefund\'s limit).',
      resolve: (c, _args, ctx) => amountRefundable(ctx.prisma, c.id),
    }),
    feeAmount: t.field({ type: "Amount", description: describe(ChargeResource, "feeAmount"), nullable: true, resolve: (c) => c.feeAmount }),
    netAmount: t.field({ type: "Amount", description: describe(ChargeResource, "netAmount"), nullable: true, resolve: (c) => c.netAmount }),
    currency: t.exposeString("currency", { description: describe(ChargeResource, "currency") }),
    status: t.field({ type: ChargeStatus, description: describe(ChargeResource, "status"), resolve: (c) => c.status }),
    displayStatus: t.field({
      type: ChargeDisplayStatus,
      description: "The status to show: status refined by the money received and refunded (needsReview is shown beside it).",
      resolve: (c) => chargeDisplayStatus(c),
    }),
    cloneAddress: t.exposeString("cloneAddress", { nullable: true, description: describe(ChargeResource, "cloneAddress") }),
    chainId: t.exposeInt("chainId", { nullable: true, description: describe(ChargeResource, "chainId") }),
    paymentUrl: t.string({ description: describe(ChargeResource, "paymentUrl"), resolve: (c, _args, ctx) => chargeLinks(c, ctx.charges).paymentUrl }),
    explorerUrl: t.string({
      nullable: true,
      description: describe(ChargeResource, "explorerUrl"),
      resolve: (c, _args, ctx) => chargeLinks(c, ctx.charges).explorerUrl,
    }),
    feeBps: t.exposeInt("feeBps", { description: describe(ChargeResource, "feeBps") }),
    flushTxHash: t.exposeString("flushTxHash", { nullable: true, description: describe(ChargeResource, "flushTxHash") }),
    expiresAt: t.field({ type: "DateTime", description: describe(ChargeResource, "expiresAt"), resolve: (c) => c.expiresAt }),
    createdAt: t.field({ type: "DateTime", description: describe(ChargeResource, "createdAt"), resolve: (c) => c.createdAt }),
    completedAt: t.field({ type: "DateTime", nullable: true, description: describe(ChargeResource, "completedAt"), resolve: (c) => c.completedAt }),
    deployedAt: t.field({ type: "DateTime", nullable: true, description: describe(ChargeResource, "deployedAt"), resolve: (c) => c.deployedAt }),
    description: t.exposeString("description", { nullable: true, description: describe(ChargeResource, "description") }),
    customerEmail: t.exposeString("customerEmail", {
      nullable: true,
      description: describe(ChargeResource, "customerEmail"),
    }),
    metadata: t.field({
      type: "Metadata",
      nullable: true,
      description: describe(ChargeResource, "metadata"),
      resolve: (c) => storedMetadata(c.metadata, "charges.metadata"),
    }),
    successUrl: t.exposeString("successUrl", { nullable: true, description: describe(ChargeResource, "successUrl") }),
    cancelUrl: t.exposeString("cancelUrl", { nullable: true, description: describe(ChargeResource, "cancelUrl") }),
    settlements: t.field({
      type: [Settlement],
      description: describe(ChargeResource, "settlements"),
      resolve: (c) => storedSettlements(c).map(settlementResource),
    }),
    payoutBlockedReason: t.exposeString("payoutBlockedReason", {
      nullable: true,
      description: describe(ChargeResource, "payoutBlockedReason"),
    }),
    needsReview: t.boolean({
      description: describe(ChargeResource, "needsReview"),
      resolve: (c) => c.reviewReason !== null,
    }),
    reviewReason: t.exposeString("reviewReason", { nullable: true, description: describe(ChargeResource, "reviewReason") }),
    strayAssets: t.field({
      type: [StrayAsset],
      description: describe(ChargeResource, "strayAssets"),
      resolve: (c) => storedStrayAssets(c.strayAssets),
    }),
    customer: t.relation("customer", { nullable: true, description: "The customer the charge is for, if any." }),
  }),
});

const CreateChargeInput = builder.inputType("CreateChargeInput", {
  description: "A new charge.",
  fields: (t) => ({
    orderId: t.string({ required: true, description: "Unique among this merchant's open charges." }),
    amount: t.string({ required: true, description: 'USDC decimal string, e.g. "25.00".' }),
    description: t.string({ description: "Shown to the buyer on the hosted page." }),
    customerId: t.id({ description: "The customer it is for (cus_…)." }),
    metadata: t.field({ type: "Metadata", description: "Your key-value pairs." }),
    successUrl: t.string({ description: "Where the hosted page sends the buyer once paid (absolute https; http too in test mode)." }),
    cancelUrl: t.string({ description: "Where the hosted page sends a buyer who gives up." }),
    expiresInMinutes: t.int({ description: "Time to pick a chain, 5–10080 minutes (default 30)." }),
  }),
});

builder.queryFields((t) => ({
  charge: t.prismaField({
    type: "Charge",
    description: "A charge by id; resource_missing when the key's merchant and mode have none.",
    args: { id: t.arg.id({ required: true, description: "The charge's id (chrg_…)." }) },
    resolve: (_query, _root, args, ctx) => getCharge(ctx.prisma, ctx.scope(), args.id),
  }),
  chargeByOrderId: t.prismaField({
    type: "Charge",
    description: "The newest charge for an order, whatever its status.",
    args: { orderId: t.arg.string({ required: true, description: "The merchant's order identifier." }) },
    resolve: (_query, _root, args, ctx) => getChargeByOrderId(ctx.prisma, ctx.scope(), args.orderId),
  }),
  charges: t.connection(
    {
      type: Charge,
      description: "Charges, newest first.",
      args: {
        status: t.arg({ type: ChargeStatus, description: "Only charges with this status." }),
        customerId: t.arg.id({ description: "Only this customer's charges." }),
        search: t.arg.string({ description: SEARCH_DESCRIPTION }),
        needsReview: t.arg.boolean({ description: "Only charges that need review (true) or that do not (false)." }),
      },
      resolve: async (_root, args, ctx, info) => {
        const scope = ctx.scope();
        // Relations the selection asks for (a charge's customer) come in the same read.
        const include = nodeInclude<P.ChargeInclude>(ctx, info, "Charge");
        const page = await pageCharges(ctx.prisma, scope, parseInput(pageSchema, { ...filters(args), ...pageRequest(args) }), include, pageEnd(args));
        return connectionOf(page, args, () => countCharges(ctx.prisma, scope, parseInput(filtersOnly, filters(args))));
      },
    },
    countedConnection("Charges matching the filters."),
  ),
}));

function filters(args: { status?: string | null; customerId?: string | null; search?: string | null; needsReview?: boolean | null }) {
  return {
    status: args.status ?? undefined,
    customerId: args.customerId ?? undefined,
    search: args.search ?? undefined,
    needsReview: args.needsReview == null ? undefined : String(args.needsReview),
  };
}

builder.mutationFields((t) => ({
  createCharge: t.prismaField({
    type: "Charge",
    description:
      "Creates a PENDING charge: send the buyer to its paymentUrl. Needs a settlement wallet for the mode (settlement_wallet_missing); a live charge needs an enabled live chain (chain_unsupported, naming the operator's setting).",
    args: { input: t.arg({ type: CreateChargeInput, required: true, description: "The charge." }) },
    resolve: (_query, _root, { input }, ctx) => createCharge(ctx.prisma, ctx.scope(), parseInput(createSchema, { ...input }), ctx.charges),
  }),
  cancelCharge: t.prismaField({
    type: "Charge",
    description:
      "Cancels a PENDING charge (confirmed partial money is paid out to you); a cancelled one is returned unchanged. A payment still waiting for confirmations: charge_payment_confirming.",
    args: { id: t.arg.id({ required: true, description: "The charge's id (chrg_…)." }) },
    resolve: (_query, _root, { id }, ctx) => cancelCharge(ctx.prisma, ctx.scope(), id, ctx.charges),
  }),
  markChargeReviewed: t.prismaField({
    type: "Charge",
    description: "Marks a charge that needs review as reviewed, once you have looked at what the reconciliation found (charge.reviewed).",
    args: { id: t.arg.id({ required: true, description: "The charge's id (chrg_…)." }) },
    resolve: (_query, _root, { id }, ctx) => markChargeReviewed(ctx.prisma, ctx.scope(), id, ctx.charges),
  }),
}));

builder.subscriptionFields((t) => ({
  chargeUpdated: t.field({
    type: Charge,
    description: "One of your charges: its current state first, then every committed change (status, amounts, chain).",
    args: { id: t.arg.id({ required: true, description: "The charge's id (chrg_…)." }) },
    subscribe: (_root, { id }, ctx) => {
      const scope = ctx.scope();
      return ctx.live.chargeUpdates(scope, id, () => getCharge(ctx.prisma, scope, id), ctx.signal);
    },
    resolve: (charge) => liveValue(charge),
  }),
}));
