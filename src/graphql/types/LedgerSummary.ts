// `ledgerSummary`: the ledger summed over a period, with the money received per day (the dashboard's
// Home). Rules live in domain/ledger-summary.ts.
import { type LedgerSummary as Summary, ledgerSummary } from "../../domain/ledger-summary.js";
import { summarySchema } from "../../domain/ledger-summary-requests.js";
import { parseInput } from "../../domain/validation.js";
import { builder } from "../builder.js";

const LedgerDay = builder.objectRef<Summary["daily"][number]>("LedgerDay").implement({
  description: "The money received on one UTC day.",
  fields: (t) => ({
    day: t.exposeString("day", { description: "A UTC day, YYYY-MM-DD." }),
    grossReceived: t.expose("grossReceived", { type: "Amount", description: "USDC of the payments recorded that day (less reversals)." }),
  }),
});

const LedgerSummary = builder.objectRef<Summary>("LedgerSummary").implement({
  description: "The ledger summed over a period.",
  fields: (t) => ({
    createdGte: t.field({ type: "DateTime", description: "ISO 8601: the period's start (included).", resolve: (s) => s.createdGte }),
    createdLt: t.field({ type: "DateTime", description: "ISO 8601: the period's end (excluded).", resolve: (s) => s.createdLt }),
    grossReceived: t.expose("grossReceived", { type: "Amount", description: "USDC paid into your charges' addresses." }),
    fees: t.expose("fees", { type: "Amount", description: "USDC of protocol fees taken by payouts." }),
    refunded: t.expose("refunded", { type: "Amount", description: "USDC of refunds your wallet paid." }),
    net: t.expose("net", { type: "Amount", description: "USDC received less fees and refunds: grossReceived - fees - refunded." }),
    paidOut: t.expose("paidOut", { type: "Amount", description: "USDC paid out to your wallet (net of fees)." }),
    daily: t.field({ type: [LedgerDay], description: "One entry per UTC day of the period, oldest first.", resolve: (s) => s.daily }),
  }),
});

builder.queryFields((t) => ({
  ledgerSummary: t.field({
    type: LedgerSummary,
    description: "The ledger of your mode summed over [createdGte, createdLt): by default the last 30 UTC days; at most 366 days.",
    args: {
      createdGte: t.arg.string({ description: "ISO 8601: the period's start (included)." }),
      createdLt: t.arg.string({ description: "ISO 8601: the period's end (excluded)." }),
    },
    resolve: (_root, args, ctx) =>
      ledgerSummary(ctx.prisma, ctx.scope(), parseInput(summarySchema, { createdGte: args.createdGte ?? undefined, createdLt: args.createdLt ?? undefined })),
  }),
}));
