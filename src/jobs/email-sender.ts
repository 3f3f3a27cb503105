// The email sender: takes due emails from the outbox, sends them through SMTP_URL, and has every
// attempt recorded and the next scheduled (domain/email-outbox.ts keeps the outbox's invariants:
// claims under a lease, outcomes only while the lease holds). Any number of senders (worker
// processes, or the all-in-one server) can run on one database. Without SMTP_URL it sends nothing
// and marks due emails held: kept, readable in the dashboard and the API, never sent.
import type { Logger } from "pino";
import type { Prisma } from "../db/client.js";
import { type ClaimedEmail, claimDueEmails, type EmailResult, holdDueEmails, recordEmailAttempt, renewEmailLeases } from "../domain/email-outbox.js";
import { createEmailTransport, type EmailTransport } from "../email/transport.js";
import { every } from "../lib/periodic.js";
import { startLeasedLoop } from "./leased-loop.js";

export interface EmailSenderOptions {
  /** SMTP_URL; none: due emails are held, nothing is sent. */
  smtpUrl: string | undefined;
  /** EMAIL_FROM. */
  from: string;
  /** The scheduling clock (injectable to test the retry schedule and leases). */
  now?: () => Date;
  /** How often an idle sender looks for due emails. */
  intervalMs?: number;
  /** Most messages in flight at once (over at most 5 SMTP connections). */
  concurrency?: number;
  /** Longest wait for the SMTP server at any step. */
  timeoutMs?: number;
  /** How long a claim holds without renewal; a dead sender's emails wait this long. */
  leaseMs?: number;
  random?: () => number;
  /** Told each email's result, by type, once it is recorded (/metrics counts them). */
  onResult?: (type: string, result: EmailResult | "held") => void;
}

/** A running sender. */
export interface EmailSender {
  /** Stops claiming and resolves once the messages in flight are sent and recorded. */
  stop(): Promise<void>;
}

type Settings = Required<Omit<EmailSenderOptions, "onResult" | "smtpUrl">> & Pick<EmailSenderOptions, "onResult"> & { log: Logger };

function settingsOf(logger: Logger, o: EmailSenderOptions): Settings {
  return {
    from: o.from,
    now: o.now ?? (() => new Date()),
    intervalMs: o.intervalMs ?? 200,
    concurrency: o.concurrency ?? 20,
    timeoutMs: o.timeoutMs ?? 30_000,
    leaseMs: o.leaseMs ?? 60_000,
    random: o.random ?? Math.random,
    onResult: o.onResult,
    log: logger.child({ job: "email" }),
  };
}

/** Starts sending due emails (or holding them, without SMTP) until stopped. */
export function startEmailSender(prisma: Prisma, logger: Logger, options: EmailSenderOptions): EmailSender {
  const s = settingsOf(logger, options);
  return options.smtpUrl ? startSending(prisma, s, options.smtpUrl) : startHolding(prisma, s);
}

/** Without SMTP: every due email becomes HELD, each tick. */
function startHolding(prisma: Prisma, s: Settings): EmailSender {
  s.log.info("SMTP_URL is not set: emails are kept (status held) and not sent");
  return every(
    s.intervalMs,
    async () => {
      for (const type of await holdDueEmails(prisma, s.now())) s.onResult?.(type, "held");
    },
    (err) => s.log.error({ err }, "could not hold due emails"),
  );
}

/** One attempt of a claimed email, recorded under its lease `token`. */
async function sendOne(prisma: Prisma, s: Settings, transport: EmailTransport, e: ClaimedEmail, token: string): Promise<void> {
  const outcome = await transport.send(e);
  const recorded = await recordEmailAttempt(prisma, e, token, outcome, s.now(), s.random);
  if (!recorded) {
    s.log.warn({ email: e.id }, "email lease ran out before its outcome was recorded; another sender has it");
    return;
  }
  s.onResult?.(e.type, recorded.result);
  // The email's id, never its address or content: logs are not the place for customers' details.
  if (outcome.result !== "accepted") {
    s.log.warn(
      { email: e.id, type: e.type, error: outcome.error, retryAt: recorded.retryAt },
      recorded.result === "retrying" ? "email not sent; it will be tried again" : "email not sent, for good",
    );
  }
}

function startSending(prisma: Prisma, s: Settings, smtpUrl: string): EmailSender {
  const transport = createEmailTransport({ smtpUrl, from: s.from, maxConnections: Math.min(5, s.concurrency), timeoutMs: s.timeoutMs });
  const loop = startLeasedLoop<ClaimedEmail>({
    log: s.log,
    what: "due emails",
    now: s.now,
    concurrency: s.concurrency,
    intervalMs: s.intervalMs,
    workMs: s.timeoutMs,
    leaseMs: s.leaseMs,
    claim: (c) => claimDueEmails(prisma, c),
    renew: (tokens, until) => renewEmailLeases(prisma, tokens, until),
    work: (e, token) => sendOne(prisma, s, transport, e, token),
    context: (e) => ({ email: e.id }),
  });
  return {
    async stop() {
      await loop.stop();
      transport.close();
    },
  };
}
