// Emails end to end through a real SMTP server (issue 43 "How it is shown"): the changes made through
// the public API and the dashboard, the worker's sender, an smtp-server that parses what arrived. Each
// email's recipient, subject, parts and links are read from the message as a mail client gets it.
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { OPERATOR } from "../../src/domain/confirmation.js";
import { createUser } from "../../src/domain/users.js";
import { type EmailSender, startEmailSender } from "../../src/jobs/email-sender.js";
import { startApp, type TestApp } from "../helpers/harness.js";
import { type SmtpMessage, startSmtp, type TestSmtp } from "../helpers/smtp.js";

const FROM = "billing@stablegate.example";
let app: TestApp;
let smtp: TestSmtp;
let sender: EmailSender;

beforeAll(async () => {
  smtp = await startSmtp();
  app = await startApp({ SMTP_URL: smtp.url, EMAIL_FROM: FROM });
  sender = startEmailSender(app.db.prisma, pino({ level: "silent" }), { smtpUrl: smtp.url, from: FROM, intervalMs: 20 });
}, 60_000);
afterAll(async () => {
  await sender?.stop();
  await app?.stop();
  await smtp?.stop();
});

/** The one message that arrived for `to` (with `about` in its text, when given), once it has. */
async function arrivedFor(to: string, about?: string): Promise<SmtpMessage> {
  const mine = () => smtp.messages.filter((m) => m.to.includes(to) && (about === undefined || m.parsed.text?.includes(about)));
  await expect.poll(() => mine().length, { timeout: 10_000 }).toBe(1);
  return mine()[0]!;
}

/** A link of ours in the text part, as the test's server serves it. */
function ownLink(text: string, path: string, base: string): string {
  const found = text.match(new RegExp(`https?://\\S+${path}\\S*`));
  expect(found, text).not.toBeNull();
  const u = new URL(found![0]);
  return `${base}${u.pathname}${u.search}`;
}

describe("emails through SMTP", () => {
  it("an invoice arrives from the merchant's name with its PDF, a text part, and a link that opens the invoice", async () => {
    const customer = await app.call("POST", "/v1/customers", { body: { email: "ada@buyer.example", name: "Ada <b>Lovelace</b>" } });
    expect(customer.status, customer.text).toBe(201);
    const invoice = await app.call("POST", "/v1/invoices", {
      body: {
        customerId: customer.body.id,
        lineItems: [{ description: "Consulting <script>x</script>", quantity: 2, unitAmount: "5.25" }],
        dueDate: "2026-12-31",
      },
    });
    expect(invoice.status, invoice.text).toBe(201);
    expect((await app.call("POST", `/v1/invoices/${invoice.body.id}/finalize`)).status).toBe(200);
    expect((await app.call("POST", `/v1/invoices/${invoice.body.id}/send`)).status).toBe(200);

    const message = await arrivedFor("ada@buyer.example");
    expect(message.to).toEqual(["ada@buyer.example"]);
    expect(message.from).toBe(FROM);
    expect(message.parsed.from?.value[0]).toMatchObject({ name: "Test Shop", address: FROM });
    expect(message.parsed.subject).toMatch(/invoice/i);
    const pdf = message.parsed.attachments.find((a) => a.contentType === "application/pdf");
    expect(pdf?.content.subarray(0, 4).toString()).toBe("%PDF");
    expect(message.parsed.html).not.toMatch(/<script|<b>Lovelace/);
    expect(message.parsed.html).not.toMatch(/src="https?:/);
    const page = await fetch(ownLink(message.parsed.text!, `/invoices/${invoice.body.id}`, app.url));
    expect(page.status).toBe(200);
    expect(await page.text()).toContain("10.50");
    // As kept in the outbox: sent, once.
    const listed = await app.call("GET", `/v1/emails?to=ada@buyer.example`);
    expect(listed.body.data.map((e: { type: string; status: string }) => [e.type, e.status])).toEqual([["invoice", "sent"]]);
  });

  it("a 5xx ends the email failed with the server's reply, and nothing arrives (4xx retries: sender.test.ts)", async () => {
    const send = async (email: string) => {
      const customer = await app.call("POST", "/v1/customers", { body: { email, name: "Retry" } });
      const invoice = await app.call("POST", "/v1/invoices", {
        body: { customerId: customer.body.id, lineItems: [{ description: "Thing", quantity: 1, unitAmount: "1.00" }] },
      });
      await app.call("POST", `/v1/invoices/${invoice.body.id}/finalize`);
      expect((await app.call("POST", `/v1/invoices/${invoice.body.id}/send`)).status).toBe(200);
    };
    smtp.failNext(1, 550, "5.1.1 No such mailbox here");
    await send("gone@buyer.example");
    await expect.poll(async () => (await app.call("GET", "/v1/emails?to=gone@buyer.example")).body.data[0]?.status, { timeout: 10_000 }).toBe("failed");
    const failed = (await app.call("GET", "/v1/emails?to=gone@buyer.example")).body.data[0];
    expect(failed.lastError).toContain("No such mailbox");
    expect(smtp.messages.filter((m) => m.to.includes("gone@buyer.example"))).toEqual([]);
  });

  it("a password reset's link reaches only the mailbox: the API, GraphQL and the preview show its token redacted", async () => {
    const email = "owner@shop.example";
    await createUser(app.db.prisma, app.merchant.merchant.id, { email, password: "a long enough password" }, OPERATOR);
    expect((await app.call("POST", "/dashboard/password/forgot", { key: null, body: { email } })).status).toBe(202);
    const message = await arrivedFor(email, "reset-password?token=");
    const token = /reset-password\?token=([0-9A-Za-z_]+)/.exec(message.parsed.text!)![1]!;

    const listed = await app.call("GET", "/v1/emails?type=password_reset");
    expect(listed.body.data).toHaveLength(1);
    expect(listed.body.data[0].text).toContain("reset-password?token=[redacted]");
    expect(listed.text).not.toContain(token);
    const gql = await app.gql(`{ emails(type: PASSWORD_RESET, first: 5) { edges { node { text html } } } }`);
    expect(JSON.stringify(gql)).not.toContain(token);
    expect(gql.data.emails.edges[0].node.html).toContain("[redacted]");
    // The mailbox's link still works.
    const reset = await app.call("POST", "/dashboard/password/reset", { key: null, body: { token, password: "another long password" } });
    expect(reset.status, reset.text).toBe(200);
  });
});
