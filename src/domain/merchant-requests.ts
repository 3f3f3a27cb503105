// The request contract of merchants: what the settings command (`stablegate merchant create|update`)
// and the dashboard's updateMerchantSettings send. The doors parse a request with these (parseInput)
// and hand the domain the typed result.
import { z } from "zod";
import { isEmailAddress } from "../email/address.js";
import { evmAddress } from "./validation.js";
import { webhookUrl } from "./webhook-endpoint-requests.js";

const wallet = evmAddress();

const fields = {
  name: z.string().min(1).max(200),
  paymentWindowMinutes: z.number().int("must be a whole number of minutes").min(5, "must be 5-1440").max(1440, "must be 5-1440"),
  /** At most 10%: beyond that a "tolerance" is a discount, which belongs in the amount. */
  underpaymentToleranceBps: z.number().int("must be 0-1000").min(0, "must be 0-1000").max(1000, "must be 0-1000"),
  feeBps: z.number().int().min(0, "must be 0-10000").max(10_000, "must be 0-10000"),
  testWallet: wallet.nullable(),
  liveWallet: wallet.nullable(),
};
/** `merchant create`: a merchant, and the webhook URL of each mode that gets an endpoint at once. */
export const createSchema = z
  .strictObject({ ...fields, feeBps: fields.feeBps.optional(), testWebhookUrl: webhookUrl.nullable(), liveWebhookUrl: webhookUrl.nullable() })
  .partial({ paymentWindowMinutes: true, underpaymentToleranceBps: true, testWallet: true, liveWallet: true, testWebhookUrl: true, liveWebhookUrl: true });
/** `merchant update`: the operator's changes, the protocol fee included. */
export const updateSchema = z.strictObject(fields).partial();
/** What a merchant's own dashboard may change (updateMerchantSettings): not the protocol fee, which is the operator's. */
export const settingsSchema = z
  .strictObject({
    name: fields.name,
    testWallet: fields.testWallet,
    liveWallet: fields.liveWallet,
    paymentWindowMinutes: fields.paymentWindowMinutes,
    underpaymentToleranceBps: fields.underpaymentToleranceBps,
    // Customer-facing emails (domain/buyer-emails.ts), and where buyers' replies go.
    emailInvoices: z.boolean(),
    emailReceipts: z.boolean(),
    emailRefunds: z.boolean(),
    supportEmail: z.string().trim().refine(isEmailAddress, "must be one email address (no name, list or line breaks)").nullable(),
  })
  .partial();

/** A merchant to create, parsed (createSchema). */
export type MerchantRequest = z.output<typeof createSchema>;
/** The operator's changes to a merchant, parsed (updateSchema). */
export type MerchantUpdate = z.output<typeof updateSchema>;
/** A dashboard's changes to its merchant's settings, parsed (settingsSchema). */
export type MerchantSettingsUpdate = z.output<typeof settingsSchema>;
