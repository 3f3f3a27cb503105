// `ChargeAuthorization`: a buyer's payment without gas, for the hosted page, like REST's
// POST /v1/public/charges/:id/authorizations. Rules live in domain/charge-authorizations.ts.
import { describe } from "../../domain/describe.js";
import { authorizationSchema } from "../../domain/authorizations.js";
import { relayedAnswer, submitChargeAuthorization, ChargeAuthorizationResource } from "../../domain/charge-authorizations.js";
import { parseInput } from "../../domain/validation.js";
import { builder } from "../builder.js";

const ChargeAuthorization = builder.objectRef<ChargeAuthorizationResource>("ChargeAuthorization").implement({
  description: "A payment without gas the service relays: the buyer's signed EIP-3009 transferWithAuthorization.",
  fields: (t) => ({
    id: t.exposeID("id", { description: describe(ChargeAuthorizationResource, "id") }),
    chargeId: t.exposeID("chargeId", { description: describe(ChargeAuthorizationResource, "chargeId") }),
    status: t.exposeString("status", { description: describe(ChargeAuthorizationResource, "status") }),
    txHash: t.exposeString("txHash", { nullable: true, description: describe(ChargeAuthorizationResource, "txHash") }),
    value: t.expose("value", { type: "Amount", description: describe(ChargeAuthorizationResource, "value") }),
    error: t.exposeString("error", { nullable: true, description: describe(ChargeAuthorizationResource, "error") }),
  }),
});

const AuthorizationInput = builder.inputType("TransferAuthorizationInput", {
  description: "The signed fields of a transferWithAuthorization to the charge's clone; integers as decimal strings.",
  fields: (t) => ({
    from: t.string({ required: true, description: "The buyer's address, which signed it." }),
    value: t.string({ required: true, description: "USDC base units (6 decimals)." }),
    validAfter: t.string({ required: true, description: "Unix seconds." }),
    validBefore: t.string({ required: true, description: "Unix seconds; at least 60 s from now." }),
    nonce: t.string({ required: true, description: "32 bytes, hex." }),
    signature: t.string({ required: true, description: "65 bytes, hex." }),
  }),
});

builder.mutationFields((t) => ({
  payChargeWithAuthorization: t.field({
    type: ChargeAuthorization,
    description: "Public: pays a charge without gas; the service checks the authorization, relays it and pays the gas.",
    args: {
      chargeId: t.arg.id({ required: true, description: "The charge to pay (chrg_…)." }),
      input: t.arg({ type: AuthorizationInput, required: true, description: "The signed authorization." }),
    },
    resolve: async (_root, { chargeId, input }, ctx) => {
      await ctx.rateLimiter.consume(ctx.address, "gasless");
      const accepted = await submitChargeAuthorization(
        ctx.prisma,
        ctx.chains,
        ctx.authorizations,
        ctx.charges,
        chargeId,
        parseInput(authorizationSchema, { ...input }),
      );
      return relayedAnswer(ctx.prisma, accepted);
    },
  }),
}));
