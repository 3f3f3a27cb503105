// The request contract of the email outbox's list: the query of GET /v1/emails (GraphQL's
// connection). The doors parse a request with these (parseInput) and hand the domain the typed
// result. The types and statuses live here, as the list's filters name them; domain/emails.ts hands
// them on.
import { z } from "zod";
import { pageParams } from "./paging.js";

/** Every kind of email the service writes (.docs/email.md). */
export const EMAIL_TYPES = [
  "invoice",
  "receipt",
  "refund_claim",
  "password_reset",
  "invitation",
  "security_notice",
  "alert",
  "subscription_checkout",
  "invoice_upcoming",
  "invoice_payment_failed",
  "subscription_canceled",
] as const;

/** Where an email is, as the API shows it (the stored status in lower case). */
export const EMAIL_STATUSES = ["queued", "sent", "failed", "held"] as const;

/** The query of GET /v1/emails: a keyset page and its filters (GraphQL's connection). */
export const listSchema = z.strictObject({
  ...pageParams,
  to: z.string().trim().min(1).max(320).optional().describe("Only emails to this address (case-insensitive, the whole address)."),
  type: z.enum(EMAIL_TYPES, { error: `must be one of ${EMAIL_TYPES.join(", ")}` }).optional(),
  status: z.enum(EMAIL_STATUSES, { error: `must be one of ${EMAIL_STATUSES.join(", ")}` }).optional(),
});

/** The list's filters alone: GraphQL's count. */
export const filterSchema = listSchema.pick({ to: true, type: true, status: true });

/** The query of GET /v1/emails, parsed (listSchema). */
export type EmailListQuery = z.output<typeof listSchema>;
/** An email list's filters, parsed (filterSchema). */
export type EmailFilters = z.output<typeof filterSchema>;
