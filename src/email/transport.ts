// The SMTP side of sending an email: one nodemailer pool on SMTP_URL, one outbox row made into a
// message, and the server's answer sorted into what the outbox does next. Invariants:
// - the From address is always EMAIL_FROM; only its display name varies (the merchant's name, made
//   header-safe here again, whatever the row holds);
// - a header that is not one line, or whose name is not a plain token, is never put on the wire: the
//   message is refused before it is sent (permanent), so a bad row cannot add a Bcc;
// - the only inline image is the merchant's logo, under LOGO_CID, as the layout's HTML expects;
// - the Message-ID is derived from the email's id, so a resend after a crash carries the same one and
//   a receiving server that collapses duplicates does.
import nodemailer from "nodemailer";
import { headerText, isHeaderSafe } from "./address.js";
import { LOGO_CID } from "./layout.js";

/** An email as the sender hands it over: an outbox row with the merchant's logo read at send time. */
export interface OutgoingEmail {
  id: string;
  to: string;
  fromName: string | null;
  replyTo: string | null;
  subject: string;
  html: string;
  text: string;
  headers: Record<string, string> | null;
  /** As the outbox keeps them: content in base64. */
  attachments: { filename: string; contentType: string; content: string }[] | null;
  /** The merchant's logo, attached inline as cid:logo; null when the email shows none or the merchant has none. */
  logo: { content: Uint8Array; contentType: string } | null;
}

/**
 * What the server made of one message: accepted; transient (connection errors, timeouts, SMTP 4xx:
 * try again later); permanent (5xx, or a message that can never be sent: `error` is the server's reply).
 */
export type SendOutcome = { result: "accepted"; response: string } | { result: "transient" | "permanent"; error: string };

/** An open SMTP connection pool. */
export interface EmailTransport {
  send(email: OutgoingEmail): Promise<SendOutcome>;
  /** Closes the pool's connections (messages in flight finish first). */
  close(): void;
}

export interface TransportOptions {
  /** SMTP_URL: smtp://user:pass@host:port or smtps://… */
  smtpUrl: string;
  /** EMAIL_FROM. */
  from: string;
  /** Most SMTP connections open at once. */
  maxConnections?: number;
  /** Longest wait for the server at any step (connect, greeting, each reply). */
  timeoutMs?: number;
}

/** A header name as RFC 5322 allows it (printable, no colon), and nothing the composer treats specially. */
const HEADER_NAME = /^[A-Za-z0-9][A-Za-z0-9-]{0,63}$/;

/** Opens a pool of connections to `smtpUrl` sending as `from`. */
export function createEmailTransport(o: TransportOptions): EmailTransport {
  const timeout = o.timeoutMs ?? 30_000;
  const pool = nodemailer.createTransport({
    url: o.smtpUrl,
    pool: true,
    maxConnections: o.maxConnections ?? 5,
    connectionTimeout: timeout,
    greetingTimeout: timeout,
    socketTimeout: timeout,
  });
  const domain = o.from.slice(o.from.lastIndexOf("@") + 1);
  return {
    async send(email) {
      const refused = unsafeHeader(email.headers);
      if (refused) return { result: "permanent", error: `not sent: header ${refused} is not one line of text` };
      const name = email.fromName ? headerText(email.fromName) : "";
      try {
        const info = await pool.sendMail({
          from: name ? { name, address: o.from } : o.from,
          to: email.to,
          replyTo: email.replyTo ?? undefined,
          subject: email.subject,
          html: email.html,
          text: email.text,
          headers: email.headers ?? undefined,
          messageId: `<${email.id}@${domain}>`,
          attachments: [
            ...(email.attachments ?? []).map((a) => ({ filename: a.filename, contentType: a.contentType, content: a.content, encoding: "base64" })),
            ...(email.logo
              ? [
                  {
                    filename: `logo.${email.logo.contentType.split("/")[1] ?? "png"}`,
                    contentType: email.logo.contentType,
                    content: Buffer.from(email.logo.content),
                    cid: LOGO_CID,
                    contentDisposition: "inline" as const,
                  },
                ]
              : []),
          ],
        });
        return { result: "accepted", response: String(info.response ?? "") };
      } catch (e) {
        return classify(e);
      }
    },
    close: () => pool.close(),
  };
}

/** The first header of `headers` that must not go on the wire, or null. */
function unsafeHeader(headers: Record<string, string> | null): string | null {
  for (const [name, value] of Object.entries(headers ?? {})) if (!HEADER_NAME.test(name) || !isHeaderSafe(value)) return JSON.stringify(name);
  return null;
}

/** Sorts a nodemailer failure: 5xx or a message it cannot build is refused for good; anything else may pass later. */
export function classify(e: unknown): SendOutcome {
  const err = e as { responseCode?: number; response?: string; code?: string; message?: string };
  const error = (err.response || err.message || String(e)).slice(0, 1000);
  // A refused login (535) is the server's answer to our settings, not to this message: it is
  // retried, giving the operator the schedule's time to fix SMTP_URL before anything is lost.
  if (typeof err.responseCode === "number" && err.responseCode >= 500 && err.code !== "EAUTH") return { result: "permanent", error };
  // A message nodemailer refuses to build (no valid recipient, a malformed envelope) never passes later.
  if (err.code === "EENVELOPE" && typeof err.responseCode !== "number") return { result: "permanent", error };
  return { result: "transient", error };
}
