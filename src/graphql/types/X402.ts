// `X402` and `X402Payment`: agent payments, like REST's /v1/x402 and /v1/x402/payments: the merchant's
// x402 address for the mode with what a route may ask for, and the payments the facilitator settled.
// Rules live in domain/x402/.
import { describe } from "../../domain/describe.js";
import { parseInput } from "../../domain/validation.js";
import { x402Account, X402Resource } from "../../domain/x402/account.js";
import { countX402Payments, listX402Payments, X402PaymentResource, x402PaymentResource } from "../../domain/x402/payments.js";
import { paymentListSchema } from "../../domain/x402/requests.js";
import { x402Deps } from "../../domain/x402/settle.js";
import { builder } from "../builder.js";
import { connectionOf, countedConnection, pageEnd, pageRequest } from "../connection.js";

type Accept = X402Resource["accepts"][number];

const X402Accept = builder.objectRef<Accept>("X402Accept").implement({
  description: "What a route may ask for on one chain (an entry of the route's `accepts`).",
  fields: (t) => ({
    scheme: t.exposeString("scheme", { description: 'Always "exact".' }),
    network: t.exposeString("network", { description: 'A CAIP-2 chain id, e.g. "eip155:8453".' }),
    asset: t.exposeString("asset", { description: "The USDC contract on that chain." }),
    extraName: t.string({ description: "USDC's EIP-712 name there (`extra.name`).", resolve: (a) => a.extra.name }),
    extraVersion: t.string({ description: "USDC's EIP-712 version there (`extra.version`).", resolve: (a) => a.extra.version }),
    minAmount: t.expose("minAmount", { type: "Amount", description: "The least a payment settles for there." }),
  }),
});

const X402 = builder.objectRef<X402Resource>("X402").implement({
  description: "Selling an API to software: your x402 address for the mode and the facilitator the x402 middleware calls.",
  fields: (t) => ({
    livemode: t.exposeBoolean("livemode", { description: describe(X402Resource, "livemode") }),
    payTo: t.exposeString("payTo", { description: describe(X402Resource, "payTo") }),
    facilitatorUrl: t.exposeString("facilitatorUrl", { description: describe(X402Resource, "facilitatorUrl") }),
    accepts: t.field({ type: [X402Accept], description: describe(X402Resource, "accepts"), resolve: (x) => x.accepts }),
  }),
});

const X402Payment = builder.objectRef<X402PaymentResource & { id: string }>("X402Payment").implement({
  description: "A payment the x402 facilitator settled (or is settling) for you.",
  fields: (t) => ({
    id: t.exposeID("id", { description: "The settlement's id (x402pay_…)." }),
    livemode: t.exposeBoolean("livemode", { description: describe(X402PaymentResource, "livemode") }),
    status: t.exposeString("status", { description: describe(X402PaymentResource, "status") }),
    amount: t.expose("amount", { type: "Amount", description: describe(X402PaymentResource, "amount") }),
    payer: t.exposeString("payer", { description: describe(X402PaymentResource, "payer") }),
    payTo: t.exposeString("payTo", { description: describe(X402PaymentResource, "payTo") }),
    network: t.exposeString("network", { description: describe(X402PaymentResource, "network") }),
    txHash: t.exposeString("txHash", { nullable: true, description: describe(X402PaymentResource, "txHash") }),
    resource: t.exposeString("resource", { nullable: true, description: describe(X402PaymentResource, "resource") }),
    description: t.exposeString("description", { nullable: true, description: describe(X402PaymentResource, "description") }),
    error: t.exposeString("error", { nullable: true, description: describe(X402PaymentResource, "error") }),
    createdAt: t.expose("createdAt", { type: "DateTime", description: describe(X402PaymentResource, "createdAt") }),
  }),
});

builder.queryFields((t) => ({
  x402: t.field({
    type: X402,
    description: "Your x402 address for the key's mode (made on first use), the facilitator's URL and what a route may ask for on each chain.",
    resolve: (_root, _args, ctx) => x402Account(x402Deps(ctx.prisma, ctx.charges, ctx.chains, ctx.authorizations), ctx.scope(), ctx.charges.publicUrl ?? ""),
  }),
  x402Payments: t.connection(
    {
      type: X402Payment,
      description: "The payments the x402 facilitator settled, newest first.",
      resolve: async (_root, args, ctx) => {
        const scope = ctx.scope();
        const page = await listX402Payments(ctx.prisma, scope, parseInput(paymentListSchema, pageRequest(args)), pageEnd(args));
        const data = page.data.map((p) => ({ ...x402PaymentResource(p), id: p.id }));
        return connectionOf({ ...page, data }, args, () => countX402Payments(ctx.prisma, scope));
      },
    },
    countedConnection("Settlements the facilitator handled."),
  ),
}));
