// `Sweep`: another token, or the native coin, paid out of a charge's address to your wallet
// (`sweepCharge`), like the operator's `stablegate sweep`, and a charge's `sweeps`, which
// `chargeUpdated` sends again with each change of one. Rules live in domain/sweeps.ts.
import { describe } from "../../domain/describe.js";
import { sweepSchema } from "../../domain/sweep-requests.js";
import { CHARGE_SWEEPS_LISTED, chargeSweeps, getSweep, requestSweep, SweepResource, sweepResource } from "../../domain/sweeps.js";
import { parseInput } from "../../domain/validation.js";
import { builder } from "../builder.js";

const Sweep = builder.objectRef<SweepResource>("Sweep").implement({
  description: "A payout of another token, or the native coin, from a charge's address to your wallet (less the fee), sent by the worker.",
  fields: (t) => ({
    id: t.exposeID("id", { description: describe(SweepResource, "id") }),
    chargeId: t.exposeID("chargeId", { description: describe(SweepResource, "chargeId") }),
    chainId: t.exposeInt("chainId", { description: describe(SweepResource, "chainId") }),
    token: t.exposeString("token", { description: describe(SweepResource, "token") }),
    status: t.exposeString("status", { description: describe(SweepResource, "status") }),
    txHash: t.exposeString("txHash", { nullable: true, description: describe(SweepResource, "txHash") }),
    error: t.exposeString("error", { nullable: true, description: describe(SweepResource, "error") }),
    createdAt: t.expose("createdAt", { type: "DateTime", description: describe(SweepResource, "createdAt") }),
  }),
});

builder.prismaObjectField("Charge", "sweeps", (t) =>
  t.field({
    type: [Sweep],
    description: `The charge's sweeps, newest first (the newest ${CHARGE_SWEEPS_LISTED}); chargeUpdated sends the charge again whenever one is asked for, sent, or ends.`,
    // The charge was read in the caller's scope: its sweeps are the caller's.
    resolve: async (charge, _args, ctx) => (await chargeSweeps(ctx.prisma, charge.id)).map(sweepResource),
  }),
);

builder.queryFields((t) => ({
  sweep: t.field({
    type: Sweep,
    description: "A sweep by id, to follow it to DONE or FAILED.",
    args: { id: t.arg.id({ required: true, description: "The sweep's id (swp_…)." }) },
    resolve: async (_root, { id }, ctx) => sweepResource(await getSweep(ctx.prisma, ctx.scope(), id)),
  }),
}));

builder.mutationFields((t) => ({
  sweepCharge: t.field({
    type: Sweep,
    description:
      'Pays another token (its address), or the native coin ("native"), out of a charge\'s address to your wallet. USDC is paid out by the service itself. ' +
      "Refused with sweep_unchanged while the token's last sweep moved nothing and the address holds the same amount, and with relayer_budget_exhausted once your relayer gas for the day on that chain is spent.",
    args: {
      id: t.arg.id({ required: true, description: "The charge." }),
      token: t.arg.string({ required: true, description: 'The token\'s address, or "native".' }),
      chainId: t.arg.int({ description: "The chain to sweep on; the charge's picked chain by default." }),
    },
    resolve: async (_root, args, ctx) =>
      sweepResource(
        await requestSweep(
          ctx.prisma,
          { chains: ctx.chains, readers: ctx.authorizations, relayerGasBudget: ctx.charges.relayerGasBudget, feed: ctx.charges.feed },
          ctx.scope(),
          args.id,
          parseInput(sweepSchema, { token: args.token, ...(args.chainId != null && { chainId: args.chainId }) }),
        ),
      ),
  }),
}));
