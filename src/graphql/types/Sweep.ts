// `Sweep`: another token, or the native coin, paid out of a charge's address to your wallet
// (`sweepCharge`), like the operator's `stablegate sweep`. Rules live in domain/sweeps.ts.
import { requestSweep, type SweepResource, sweepResource, getSweep } from "../../domain/sweeps.js";
import { builder } from "../builder.js";

const Sweep = builder.objectRef<SweepResource>("Sweep").implement({
  description: "A payout of another token, or the native coin, from a charge's address to your wallet (less the fee), sent by the worker.",
  fields: (t) => ({
    id: t.exposeID("id"),
    chargeId: t.exposeID("chargeId"),
    chainId: t.exposeInt("chainId"),
    token: t.exposeString("token", { description: 'The token\'s address, or "native".' }),
    status: t.exposeString("status", { description: "PENDING (the worker sends it soon), SENT, DONE, or FAILED (see error)." }),
    txHash: t.exposeString("txHash", { nullable: true }),
    error: t.exposeString("error", { nullable: true }),
    createdAt: t.exposeString("createdAt", { description: "ISO 8601." }),
  }),
});

builder.queryFields((t) => ({
  sweep: t.field({
    type: Sweep,
    args: { id: t.arg.id({ required: true }) },
    resolve: async (_root, { id }, ctx) => sweepResource(await getSweep(ctx.prisma, ctx.scope(), id)),
  }),
}));

builder.mutationFields((t) => ({
  sweepCharge: t.field({
    type: Sweep,
    description:
      'Pays another token (its address), or the native coin ("native"), out of a charge\'s address to your wallet. USDC is paid out by the service itself.',
    args: {
      id: t.arg.id({ required: true, description: "The charge." }),
      token: t.arg.string({ required: true }),
      chainId: t.arg.int({ description: "The chain to sweep on; the charge's picked chain by default." }),
    },
    resolve: async (_root, args, ctx) =>
      sweepResource(
        await requestSweep(ctx.prisma, ctx.chains, ctx.scope(), args.id, { token: args.token, ...(args.chainId != null && { chainId: args.chainId }) }),
      ),
  }),
}));
