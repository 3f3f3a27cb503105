// The email outbox, as the rest of the domain writes to it: an email is a row written in the same
// transaction as the change that causes it (a rolled-back change sends nothing), already rendered,
// and sent later by the worker (jobs/email-sender.ts), once. Invariants:
// - nothing reaches the outbox with a recipient that is not one plain address, or a subject or sender
//   name that could break out of its header (CR/LF): refused with an error naming the field;
// - the email is kept as it was sent (HTML, text, attachments), so the dashboard shows what arrived;
// - a merchant reads only its own emails of its mode (GET /v1/emails, GraphQL `emails`), never
//   another merchant's nor the operator's (merchantId null).
import { z } from "zod";
import type { Prisma } from "../db/client.js";
import type { Email, Merchant } from "../generated/prisma/client.js";
import { Prisma as P } from "../generated/prisma/client.js";
import { isEmailAddress, isHeaderSafe } from "../email/address.js";
import type { EmailBrand, RenderedEmail } from "../email/layout.js";
import { EMAIL_STATUSES, EMAIL_TYPES, type EmailFilters, type EmailListQuery } from "./email-requests.js";
import { AppError, notFound } from "./errors.js";
import { newId } from "./ids.js";
import { keysetPage, type Page, type PageEnd } from "./paging.js";
import { inScope, type Scope } from "./scope.js";

export type { Email };

// Defined with the requests that filter by them; the rest of the service finds them here with the outbox.
export { EMAIL_STATUSES, EMAIL_TYPES };

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

export type EmailStatus = (typeof EMAIL_STATUSES)[number];

/** What each status means: the OpenAPI and GraphQL descriptions. */
export const EMAIL_STATUS_DESCRIPTIONS: Record<EmailStatus, string> = {
  queued: "Waiting for the worker to send it (again, after a temporary failure: attempts and lastError say so).",
  sent: "The SMTP server accepted it (sentAt).",
  failed: "The SMTP server refused it for good (5xx), or every retry failed: lastError holds its reply.",
  held: "Kept and not sent: the service has no SMTP_URL (development). It stays readable here and in the dashboard.",
};

/** The public JSON form of an email (GET /v1/emails). */
export const EmailResource = z.object({
  id: z.string().describe("eml_…"),
  object: z.literal("email"),
  livemode: z.boolean().describe("True in live mode, false in test mode."),
  type: z.enum(EMAIL_TYPES).describe("What the email is: an invoice, a receipt, a password reset…"),
  to: z.string().describe("The recipient's address, in lower case."),
  subject: z.string().describe("The subject line."),
  status: z.enum(EMAIL_STATUSES).describe(EMAIL_STATUSES.map((s) => `\`${s}\`: ${EMAIL_STATUS_DESCRIPTIONS[s]}`).join(" ")),
  relatedId: z.string().nullable().describe("The object the email is about (inv_…, chrg_…, ref_…, usr_…), if any."),
  attempts: z.number().int().describe("How many times sending it was tried."),
  lastError: z.string().nullable().describe("The SMTP server's last refusal, or the connection error; null when none."),
  text: z
    .string()
    .describe(
      "The plain-text part, exactly as sent, except that the link of a `password_reset` or `invitation` email shows its token as `[redacted]`: only the recipient's mailbox holds it.",
    ),
  createdAt: z.string().describe("When it was queued."),
  sentAt: z.string().nullable().describe("When the SMTP server accepted it; null until then."),
});
export type EmailResource = z.infer<typeof EmailResource>;

/**
 * The emails whose link is a credential: whoever holds it sets a password (a reset) or joins the team
 * (an invitation). Only the recipient's mailbox may hold it: every read of a stored email (the API,
 * GraphQL, the dashboard's preview) shows the link with its token redacted.
 */
const CREDENTIAL_TYPES: ReadonlySet<string> = new Set<EmailType>(["password_reset", "invitation"]);

/** `body` as a reader other than its recipient may see it: a credential link's token redacted. */
export function withoutCredentials(type: string, body: string): string {
  return CREDENTIAL_TYPES.has(type) ? body.replace(/([?&](?:amp;)?token=)[^\s"'&<>]+/g, "$1[redacted]") : body;
}

/** Shapes a stored email as the API shows it (a credential link's token redacted). */
export function emailResource(e: Email): EmailResource {
  return {
    id: e.id,
    object: "email",
    livemode: e.livemode,
    type: e.type as EmailType,
    to: e.to,
    subject: e.subject,
    status: e.status.toLowerCase() as EmailStatus,
    relatedId: e.relatedId,
    attempts: e.attempts,
    lastError: e.lastError,
    text: withoutCredentials(e.type, e.text),
    createdAt: e.createdAt.toISOString(),
    sentAt: e.sentAt?.toISOString() ?? null,
  };
}

/** The where-clause of an email list: this merchant and mode (so never the operator's), optionally one address, type or status. */
function emailFilter(scope: Scope, f: EmailFilters): P.EmailWhereInput {
  return {
    ...inScope(scope),
    // Stored in lower case (enqueueEmail), so equality is the case-insensitive match.
    ...(f.to && { to: f.to.toLowerCase() }),
    ...(f.type && { type: f.type }),
    ...(f.status && { status: f.status.toUpperCase() as Email["status"] }),
  };
}

/** How many emails match the list's filters (GraphQL's `totalCount`). */
export function countEmails(prisma: Prisma, scope: Scope, filters: EmailFilters): Promise<number> {
  return prisma.email.count({ where: emailFilter(scope, filters) });
}

/** One page of emails, newest first, optionally to one address, of one type or in one status. */
export async function listEmails(prisma: Prisma, scope: Scope, query: EmailListQuery, end: PageEnd = "newest"): Promise<Page<Email>> {
  const { to, type, status, ...page } = query;
  const where = emailFilter(scope, { to, type, status });
  return keysetPage(
    "email",
    page,
    (id) => prisma.email.findFirst({ where: { id, ...inScope(scope) }, select: { id: true, createdAt: true } }),
    (q) => prisma.email.findMany({ where: { AND: [where, q.where] }, orderBy: q.orderBy, take: q.take }),
    end,
  );
}

/** An email of this merchant and mode, or 404; `query` as a GraphQL selection gives it. */
export async function getEmail(prisma: Prisma, scope: Scope, id: string, query: { include?: P.EmailInclude } = {}): Promise<Email> {
  const email = await prisma.email.findFirst({ ...query, where: { id, ...inScope(scope) } });
  if (!email) throw notFound("email", id);
  return email;
}
