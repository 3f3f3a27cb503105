// `liveReadiness`: whether the caller's merchant can take real money, as a checklist
// (domain/live-readiness.ts). Any key or session of the merchant may read it, in either mode.
import { type LiveReadiness as Readiness, type LiveReadinessItem, liveReadiness } from "../../domain/live-readiness.js";
import { builder } from "../builder.js";

const LiveReadinessKey = builder.enumType("LiveReadinessKey", {
  description: "One item of the live-mode checklist.",
  values: {
    LIVE_WALLET: { value: "live_wallet", description: "A live settlement wallet is set (Settings): live charges, invoices and payment links need it." },
    LIVE_CHAIN: { value: "live_chain", description: "This service runs at least one mainnet with its payment factory and a relayer funded for gas." },
    LIVE_WEBHOOK_ENDPOINT: {
      value: "live_webhook_endpoint",
      description: "At least one enabled live webhook endpoint (Developers) hears about live payments.",
    },
  } as const satisfies Record<string, { value: LiveReadinessItem["key"]; description: string }>,
});

const LiveReadinessItemRef = builder.objectRef<LiveReadinessItem>("LiveReadinessItem").implement({
  description: "One check of the live-mode checklist.",
  fields: (t) => ({
    key: t.field({ type: LiveReadinessKey, description: "Which check.", resolve: (i) => i.key }),
    done: t.exposeBoolean("done", { description: "Whether it is done." }),
    detail: t.exposeString("detail", { description: "What is there, or what to do and where (in words to show the merchant)." }),
  }),
});

const LiveReadinessRef = builder.objectRef<Readiness>("LiveReadiness").implement({
  description: "Whether live mode can take real money: every item of the checklist done.",
  fields: (t) => ({
    ready: t.exposeBoolean("ready", { description: "True when every item is done." }),
    items: t.field({ type: [LiveReadinessItemRef], description: "The checks, in the order to work through them.", resolve: (r) => r.items }),
  }),
});

builder.queryFields((t) => ({
  liveReadiness: t.field({
    type: LiveReadinessRef,
    description: "The live-mode checklist of your merchant: live settlement wallet, a mainnet with a funded relayer, a live webhook endpoint.",
    resolve: (_root, _args, ctx) => liveReadiness(ctx.prisma, ctx.chains.forMode(true), ctx.scope().merchantId),
  }),
}));
