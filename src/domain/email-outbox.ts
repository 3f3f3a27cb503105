// The email outbox as the sender (jobs/email-sender.ts) works it: claiming due emails under a lease,
// keeping the lease alive, recording each attempt with the email's next state, and holding what is
// due when there is no SMTP server. The sender only loops and sends; every write here.
//
// Invariants:
// - an email is claimed with FOR UPDATE SKIP LOCKED and a lease (a random token and an expiry the
//   claimer renews while the message is in flight), in one statement: no two senders ever send the
//   same email at once. A sender that dies stops renewing, and the email is taken over once its lease
//   has run out: sent at least once, never lost, and never twice while a lease holds (a crash after the
//   server accepted it but before the outcome was written is the one case that sends it again);
// - an outcome is written only while the claimer still holds the lease: a late one changes nothing;
// - QUEUED goes to SENT once, to FAILED on a 5xx or once the webhook retry schedule is used up, or to
//   QUEUED again (due later) on anything else; HELD (no SMTP_URL) is kept and never sent;
// - the merchant's logo is read with the claim, not copied into the outbox.
import { z } from "zod";
import type { Prisma } from "../db/client.js";
import type { OutgoingEmail, SendOutcome } from "../email/transport.js";
import { nextAttemptAt } from "../webhooks/schedule.js";
import { jsonColumn } from "./json-columns.js";

/** A claimed email with what is needed to send it. */
export interface ClaimedEmail extends OutgoingEmail {
  type: string;
  attempts: number;
}

/** What became of one attempt: sent, to be tried again, or given up. */
export type EmailResult = "sent" | "retrying" | "failed";

interface ClaimedRow extends Omit<ClaimedEmail, "logo" | "headers" | "attachments"> {
  headers: unknown;
  attachments: unknown;
  logo: Uint8Array | null;
  logoType: string | null;
}

/** emails.headers: extra header lines, by name. */
const StoredHeaders = z.record(z.string(), z.string()).nullable();
/** emails.attachments: as domain/emails.ts stores them, content in base64. */
const StoredAttachments = z.array(z.object({ filename: z.string(), contentType: z.string(), content: z.string() })).nullable();

/** Claims at most `limit` due emails, oldest due first, under lease `token` until `leaseUntil`. */
export async function claimDueEmails(prisma: Prisma, c: { token: string; now: Date; leaseUntil: Date; limit: number }): Promise<ClaimedEmail[]> {
  const rows = await prisma.$queryRaw<ClaimedRow[]>`
    WITH due AS (
      -- The oldest due rows only (the partial index emails_due_idx), however long the queue is;
      -- rows another sender is locking are skipped, and the lease is checked again under the lock.
      SELECT id FROM emails
      WHERE status = 'QUEUED' AND next_attempt_at <= ${c.now} AND (lease_until IS NULL OR lease_until < ${c.now})
      ORDER BY next_attempt_at LIMIT ${c.limit}
      FOR UPDATE SKIP LOCKED
    )
    UPDATE emails e SET lease = ${c.token}, lease_until = ${c.leaseUntil}
    FROM due WHERE e.id = due.id
    RETURNING e.id, e.type, e."to", e.from_name AS "fromName", e.reply_to AS "replyTo", e.subject, e.html, e.text, e.headers, e.attachments, e.attempts,
      (SELECT m.logo FROM merchants m WHERE m.id = e.merchant_id AND e.inline_logo AND m.logo_type IS NOT NULL) AS logo,
      (SELECT m.logo_type FROM merchants m WHERE m.id = e.merchant_id) AS "logoType"`;
  return rows.map(({ logo, logoType, headers, attachments, ...row }) => ({
    ...row,
    headers: jsonColumn(StoredHeaders, headers, "emails.headers"),
    attachments: jsonColumn(StoredAttachments, attachments, "emails.attachments"),
    logo: logo && logo.length > 0 && logoType ? { content: logo, contentType: logoType } : null,
  }));
}

/** Extends the leases `tokens` of emails still in flight until `until`. */
export async function renewEmailLeases(prisma: Prisma, tokens: string[], until: Date): Promise<void> {
  await prisma.$executeRaw`UPDATE emails SET lease_until = ${until} WHERE lease = ANY(${tokens})`;
}

/**
 * Records attempt `outcome` of email `e` and moves it on (sent, due again by the retry schedule, or
 * failed) if lease `token` still holds it. Returns what became of it, or null when the lease was lost.
 */
export async function recordEmailAttempt(
  prisma: Prisma,
  e: ClaimedEmail,
  token: string,
  outcome: SendOutcome,
  now: Date,
  random: () => number,
): Promise<{ result: EmailResult; retryAt: Date | null } | null> {
  const attempts = e.attempts + 1;
  const retryAt = outcome.result === "transient" ? nextAttemptAt(attempts, now, random) : null;
  const result: EmailResult = outcome.result === "accepted" ? "sent" : retryAt ? "retrying" : "failed";
  const status = result === "sent" ? "SENT" : result === "retrying" ? "QUEUED" : "FAILED";
  const error = outcome.result === "accepted" ? null : outcome.error;
  const changed = await prisma.$executeRaw`
    UPDATE emails SET status = ${status}::"EmailStatus", attempts = ${attempts}, last_error = ${error},
      sent_at = ${result === "sent" ? now : null}, next_attempt_at = ${retryAt ?? now}, lease = NULL, lease_until = NULL, updated_at = now()
    WHERE id = ${e.id} AND lease = ${token}`;
  return changed === 1 ? { result, retryAt } : null;
}

/** Marks up to `limit` due emails HELD (no SMTP server: kept, never sent); returns the type of each. */
export async function holdDueEmails(prisma: Prisma, now: Date, limit = 1000): Promise<string[]> {
  const rows = await prisma.$queryRaw<{ type: string }[]>`
    WITH due AS (
      SELECT id FROM emails
      WHERE status = 'QUEUED' AND next_attempt_at <= ${now} AND (lease_until IS NULL OR lease_until < ${now})
      ORDER BY next_attempt_at LIMIT ${limit}
      FOR UPDATE SKIP LOCKED
    )
    UPDATE emails e SET status = 'HELD', lease = NULL, lease_until = NULL, updated_at = now()
    FROM due WHERE e.id = due.id
    RETURNING e.type`;
  return rows.map((r) => r.type);
}
