// The email outbox, as the rest of the domain writes to it: an email is a row written in the same
// transaction as the change that causes it (a rolled-back change sends nothing), already rendered,
// and sent later by the worker (jobs/email-sender.ts), once. Invariants:
// - nothing reaches the outbox with a recipient that is not one plain address, or a subject or sender
//   name that could break out of its header (CR/LF): refused with an error naming the field;
// - the email is kept as it was sent (HTML, text, attachments), so the dashboard shows what arrived.
import type { Merchant } from "../generated/prisma/client.js";
import { Prisma as P } from "../generated/prisma/client.js";
import { isEmailAddress, isHeaderSafe } from "../email/address.js";
import type { EmailBrand, RenderedEmail } from "../email/layout.js";
import { AppError } from "./errors.js";
import { newId } from "./ids.js";

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

export type EmailType = (typeof EMAIL_TYPES)[number];

/** A file sent with an email (an invoice's PDF). */
export interface EmailAttachment {
  filename: string;
  contentType: string;
  content: Uint8Array;
}

/** An email to write to the outbox. */
export interface EmailDraft extends RenderedEmail {
  /** Null for the operator's alerts. */
  merchantId: string | null;
  livemode: boolean;
  type: EmailType;
  to: string;
  subject: string;
  /** The sender's display name (the address is always EMAIL_FROM). */
  fromName?: string | null;
  replyTo?: string | null;
  headers?: Record<string, string>;
  attachments?: EmailAttachment[];
  /** Whether the HTML shows the merchant's logo (email/layout.ts LOGO_CID). */
  inlineLogo?: boolean;
  /** The object the email is about. */
  relatedId?: string | null;
}

/** How an email to a merchant's buyers and team is signed: the merchant's name and logo. */
export function merchantBrand(m: Pick<Merchant, "name" | "logo">): EmailBrand {
  return { name: m.name, logo: m.logo !== null && m.logo.length > 0 };
}

/** Writes `draft` to the outbox in transaction `tx`; returns the email's id (eml_…). */
export async function enqueueEmail(tx: P.TransactionClient, draft: EmailDraft): Promise<string> {
  if (!isEmailAddress(draft.to)) throw new AppError("parameter_invalid", "to must be one email address, without a name or line breaks.", "to");
  if (draft.replyTo && !isEmailAddress(draft.replyTo)) throw new AppError("parameter_invalid", "replyTo must be one email address.", "replyTo");
  for (const [field, value] of [["subject", draft.subject], ["fromName", draft.fromName ?? ""], ...Object.entries(draft.headers ?? {})] as const) {
    if (!isHeaderSafe(value)) throw new AppError("parameter_invalid", `${field} must be one line of text.`, field);
  }
  const id = newId("eml");
  await tx.email.create({
    data: {
      id,
      merchantId: draft.merchantId,
      livemode: draft.livemode,
      type: draft.type,
      to: draft.to.toLowerCase(),
      fromName: draft.fromName ?? null,
      replyTo: draft.replyTo ?? null,
      subject: draft.subject,
      html: draft.html,
      text: draft.text,
      headers: draft.headers ?? P.DbNull,
      attachments: draft.attachments
        ? draft.attachments.map((a) => ({ filename: a.filename, contentType: a.contentType, content: Buffer.from(a.content).toString("base64") }))
        : P.DbNull,
      inlineLogo: draft.inlineLogo ?? false,
      relatedId: draft.relatedId ?? null,
    },
  });
  return id;
}
