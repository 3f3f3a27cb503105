// `chargeStats`: the dashboard home's summary of the caller's charges (domain/charge-stats.ts).
import { type ChargeStats as Stats, chargeStats } from "../../domain/charge-stats.js";
import { statsSchema } from "../../domain/charge-stats-requests.js";
import { parseInput } from "../../domain/validation.js";
import { builder } from "../builder.js";
import { ChargeStatus } from "./Charge.js";

const StatusCount = builder.objectRef<Stats["byStatus"][number]>("ChargeStatusCount").implement({
  description: "How many charges of the window have a status.",
  fields: (t) => ({
    status: t.field({ type: ChargeStatus, description: "The status.", resolve: (s) => s.status }),
    count: t.exposeInt("count", { description: "Charges created in the window that have it now." }),
  }),
});

const DayVolume = builder.objectRef<Stats["completedVolume"][number]>("ChargeDayVolume").implement({
  description: "The USDC of the charges completed on one day.",
  fields: (t) => ({
    day: t.exposeString("day", { description: "A UTC day, YYYY-MM-DD." }),
    amount: t.expose("amount", { type: "Amount", description: "USDC of the charges completed that day." }),
  }),
});

const ChargeStats = builder.objectRef<Stats>("ChargeStats").implement({
  description: "Your charges over the last `days` days.",
  fields: (t) => ({
    days: t.exposeInt("days", { description: "The window's length in days, today included." }),
    byStatus: t.field({ type: [StatusCount], description: "Charges created in the window, by status.", resolve: (s) => s.byStatus }),
    completedVolume: t.field({ type: [DayVolume], description: "One entry per day, oldest first.", resolve: (s) => s.completedVolume }),
    feesPaid: t.expose("feesPaid", { type: "Amount", description: "Protocol fees of the charges completed in the window (USDC)." }),
  }),
});

builder.queryFields((t) => ({
  chargeStats: t.field({
    type: ChargeStats,
    description: "A summary of your charges over the last `days` days (the dashboard's home).",
    args: { days: t.arg.int({ description: "1–366, default 30." }) },
    resolve: (_root, { days }, ctx) => chargeStats(ctx.prisma, ctx.scope(), parseInput(statsSchema, days == null ? {} : { days })),
  }),
}));
