// Outbox rows for tests of the emails' reads (REST, GraphQL, the dashboard): written as the domain
// writes them (enqueueEmail inside a transaction, rendered by the shared layout), then moved to the
// status a test needs as the sender would leave it.
import type { Prisma } from "../../src/db/client.js";
import { type EmailDraft, enqueueEmail } from "../../src/domain/emails.js";
import { renderEmail } from "../../src/email/layout.js";

/** How a test email differs from the default one: its draft's fields, and where the sender left it. */
export type TestEmail = Partial<Omit<EmailDraft, "html" | "text">> & {
  heading?: string;
  paragraphs?: string[];
  status?: "QUEUED" | "SENT" | "FAILED" | "HELD";
  attempts?: number;
  lastError?: string | null;
};

/** Writes one email for `merchantId` (test mode unless `livemode`); returns its id. */
export async function writeEmail(prisma: Prisma, merchantId: string | null, e: TestEmail = {}): Promise<string> {
  const { heading = "Your receipt", paragraphs = ["Thank you for your payment."], status, attempts, lastError, ...draft } = e;
  const rendered = renderEmail({ name: "Test Shop", logo: draft.inlineLogo ?? false }, { heading, paragraphs });
  const id = await prisma.$transaction((tx) =>
    enqueueEmail(tx, { merchantId, livemode: false, type: "receipt", to: "buyer@example.com", subject: heading, ...rendered, ...draft }),
  );
  if (status || attempts !== undefined || lastError !== undefined) {
    await prisma.email.update({
      where: { id },
      data: { ...(status && { status }), ...(status === "SENT" && { sentAt: new Date() }), attempts, lastError },
    });
  }
  return id;
}
