// `viewer`: who is signed in to the dashboard, in which mode, and the merchant's settings, which
// only a session may change (updateMerchantSettings). Rules live in domain/merchants.ts.
import { settingsSchema } from "../../domain/merchant-requests.js";
import { getMerchant, type Merchant, updateMerchantSettings } from "../../domain/merchants.js";
import { confirmedBySession } from "../../domain/reauthentication.js";
import { findUser, userView } from "../../domain/users.js";
import { parseInput } from "../../domain/validation.js";
import { builder } from "../builder.js";
import { User } from "./User.js";
import { Mode } from "./Mode.js";

export const MerchantSettings = builder.objectRef<Merchant>("MerchantSettings").implement({
  description: "The merchant's settings. Changing a wallet applies to new charges: open ones keep the wallet they were created with.",
  fields: (t) => ({
    id: t.exposeID("id", { description: "The merchant's id (mer_…)." }),
    name: t.exposeString("name", { description: "Shown to buyers on the hosted pages." }),
    feeBps: t.exposeInt("feeBps", { description: "The protocol fee in basis points, set by the operator." }),
    testWallet: t.exposeString("testWallet", { nullable: true, description: "Where test-mode charges pay out; null when not set." }),
    liveWallet: t.exposeString("liveWallet", { nullable: true, description: "Where live-mode charges pay out; null when not set." }),
    paymentWindowMinutes: t.exposeInt("paymentWindowMinutes", { description: "Minutes a buyer has to pay once a chain is picked." }),
    underpaymentToleranceBps: t.exposeInt("underpaymentToleranceBps", {
      description: "Confirmed money at most this many basis points short of the amount completes a charge (new charges).",
    }),
    emailInvoices: t.exposeBoolean("emailInvoices", { description: "Email an invoice to its customer when it is finalized." }),
    emailReceipts: t.exposeBoolean("emailReceipts", { description: "Email a receipt to the buyer when a charge completes." }),
    emailRefunds: t.exposeBoolean("emailRefunds", { description: "Email the claim link to the buyer when a refund waits for an address." }),
    supportEmail: t.exposeString("supportEmail", { nullable: true, description: "The Reply-To of emails to buyers; null: none." }),
  }),
});

const Viewer = builder.objectRef<{ userId: string; merchantId: string; livemode: boolean }>("Viewer").implement({
  description: "The signed-in dashboard user and its session.",
  fields: (t) => ({
    mode: t.field({ type: Mode, description: "The mode the session works in.", resolve: (v) => (v.livemode ? "live" : "test") }),
    user: t.field({ type: User, description: "Who is signed in.", resolve: async (v, _args, ctx) => userView(await findUser(ctx.prisma, v.userId)) }),
    merchant: t.field({ type: MerchantSettings, description: "The merchant's settings.", resolve: (v, _args, ctx) => getMerchant(ctx.prisma, v.merchantId) }),
  }),
});

const MerchantSettingsInput = builder.inputType("MerchantSettingsInput", {
  description: "The settings to change; an absent one stays as it is.",
  fields: (t) => ({
    name: t.string({ description: "Shown to buyers on the hosted pages." }),
    testWallet: t.string({
      description:
        "A checksummed EVM address you can spend from; null clears it. A charge's deposit address, a factory or token contract and the zero address are refused (parameter_invalid).",
    }),
    liveWallet: t.string({
      description:
        "A checksummed EVM address you can spend from; null clears it. A charge's deposit address, a factory or token contract and the zero address are refused (parameter_invalid).",
    }),
    paymentWindowMinutes: t.int({ description: "5–1440." }),
    underpaymentToleranceBps: t.int({ description: "0–1000 (10%); applies to charges created from now on." }),
    emailInvoices: t.boolean({ description: "Email an invoice to its customer when it is finalized." }),
    emailReceipts: t.boolean({ description: "Email a receipt to the buyer when a charge completes (not to addresses that unsubscribed)." }),
    emailRefunds: t.boolean({ description: "Email the claim link to the buyer when a refund is made without an address." }),
    supportEmail: t.string({ description: "One email address, the Reply-To of emails to buyers; null clears it." }),
    password: t.string({ description: "Your password, to change a wallet (unless you re-authenticated in the last 5 minutes)." }),
    totpCode: t.string({ description: "With `password`, when two-factor sign-in is on: a current code or a recovery code." }),
  }),
});

builder.queryFields((t) => ({
  viewer: t.field({
    type: Viewer,
    description: "The signed-in dashboard user (dashboard sessions only).",
    resolve: (_root, _args, ctx) => ctx.session(),
  }),
}));

builder.mutationFields((t) => ({
  updateMerchantSettings: t.field({
    type: MerchantSettings,
    description:
      "Changes the merchant's name, settlement wallets, payment window, underpayment tolerance or emails to buyers (dashboard sessions only). Changing a wallet needs your password: as `input.password`, or a re-authentication in the last 5 minutes.",
    args: { input: t.arg({ type: MerchantSettingsInput, required: true, description: "The changes." }) },
    resolve: (_root, { input }, ctx) => {
      const session = ctx.session();
      const { password, totpCode, ...changes } = input;
      return updateMerchantSettings(
        ctx.prisma,
        session.merchantId,
        parseInput(settingsSchema, changes),
        confirmedBySession(ctx.prisma, ctx.rateLimiter, session, { password, totpCode }),
        ctx.chains,
        ctx.actor(),
      );
    },
  }),
}));
