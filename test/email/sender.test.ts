// The mail path end to end: outbox rows written in a transaction, the worker's sender, and a real SMTP
// server on 127.0.0.1 (smtp-server) whose messages are parsed with mailparser. Retries run on a
// clock the test moves, so no assertion waits on the retry schedule's real delays.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pino } from "pino";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../../src/config.js";
import { type Database, openDatabase } from "../../src/db/client.js";
import { claimDueEmails, recordEmailAttempt } from "../../src/domain/email-outbox.js";
import { type EmailDraft, enqueueEmail } from "../../src/domain/emails.js";
import { createMerchant } from "../../src/domain/merchants.js";
import { alertRelayerLow } from "../../src/domain/relayer-alert.js";
import { renderEmail } from "../../src/email/layout.js";
import { createEmailTransport } from "../../src/email/transport.js";
import { type EmailSender, type EmailSenderOptions, startEmailSender } from "../../src/jobs/email-sender.js";
import { ProcessMetrics } from "../../src/lib/process-metrics.js";
import { waitFor } from "../helpers/chain.js";
import { freshDatabase, startApp } from "../helpers/harness.js";
import { type SmtpMessage, startSmtp, type TestSmtp } from "../helpers/smtp.js";

const FROM = "payments@stablegate.example";
// A 1×1 PNG.
const LOGO = Buffer.from("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==", "base64");
const PDF = Buffer.from("%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n");

let database: Awaited<ReturnType<typeof freshDatabase>>;
let smtp: TestSmtp;
let merchantId: string;
const senders: EmailSender[] = [];
/** The senders' clock: real time plus what the test moved it by. */
let offsetMs = 0;
const now = () => new Date(Date.now() + offsetMs);

beforeAll(async () => {
  database = await freshDatabase();
  smtp = await startSmtp();
  const created = await createMerchant(database.db.prisma, { name: 'Shop "Ünïcode", Ltd' }, { feeBps: 100 });
  merchantId = created.merchant.id;
  await database.db.prisma.merchant.update({ where: { id: merchantId }, data: { logo: LOGO, logoType: "image/png" } });
}, 60_000);
afterEach(async () => {
  await Promise.all(senders.splice(0).map((s) => s.stop()));
  offsetMs = 0;
});
afterAll(async () => {
  await smtp?.stop();
  await database?.drop();
});

function send(options: Partial<EmailSenderOptions> = {}, prisma = database.db.prisma): EmailSender {
  const sender = startEmailSender(prisma, pino({ level: "silent" }), { smtpUrl: smtp.url, from: FROM, now, intervalMs: 20, ...options });
  senders.push(sender);
  return sender;
}

let sequence = 0;
/** A receipt-like draft to a fresh address (each test finds its own messages by recipient). */
function draft(extra: Partial<EmailDraft> = {}): EmailDraft {
  const n = ++sequence;
  return {
    merchantId,
    livemode: false,
    type: "receipt",
    to: `buyer-${n}@customer.example`,
    subject: `Your receipt #${n}`,
    fromName: 'Shop "Ünïcode", Ltd',
    ...renderEmail({ name: 'Shop "Ünïcode", Ltd', logo: true }, { heading: `Receipt ${n}`, paragraphs: ["Thank you <b>for</b> paying."] }),
    inlineLogo: true,
    ...extra,
  };
}

async function enqueue(d: EmailDraft, prisma = database.db.prisma): Promise<string> {
  return prisma.$transaction((tx) => enqueueEmail(tx, d));
}

const row = (id: string) => database.db.prisma.email.findUniqueOrThrow({ where: { id } });
const to = (address: string) => smtp.messages.filter((m) => m.to.includes(address));
async function arrived(address: string): Promise<SmtpMessage> {
  return waitFor(`a message to ${address}`, async () => to(address)[0]);
}

describe("sending", () => {
  it("delivers an enqueued email: HTML and text, the merchant's name on EMAIL_FROM, Reply-To, headers, the attachment and the inline logo", async () => {
    const user = new URL(smtp.url);
    user.username = "mailer";
    user.password = "s3cret";
    const results: string[] = [];
    send({ smtpUrl: user.toString(), onResult: (type, result) => results.push(`${type}:${result}`) });
    const d = draft({
      replyTo: "support@shop.example",
      headers: { "List-Unsubscribe": "<https://shop.example/unsubscribe?t=1>" },
      attachments: [{ filename: "INV-0001.pdf", contentType: "application/pdf", content: PDF }],
    });
    const id = await enqueue(d);
    const m = await arrived(d.to);

    expect(m.user).toBe("mailer");
    expect(m.from).toBe(FROM);
    expect(m.parsed.from?.value).toEqual([{ name: 'Shop "Ünïcode", Ltd', address: FROM }]);
    expect(m.parsed.replyTo?.value).toEqual([{ name: "", address: "support@shop.example" }]);
    expect(m.parsed.subject).toBe(d.subject);
    expect(m.parsed.messageId).toBe(`<${id}@stablegate.example>`);
    expect(m.raw.toString()).toMatch(/^List-Unsubscribe: <https:\/\/shop\.example\/unsubscribe\?t=1>\r$/m);
    // mailparser resolves cid: references to their inline attachments: the logo is the one the HTML refers to.
    expect(m.parsed.html).toBe(d.html.replace('src="cid:logo"', `src="data:image/png;base64,${LOGO.toString("base64")}"`));
    expect(m.parsed.text?.trim()).toBe(d.text.trim());
    expect(m.parsed.html).toContain("Thank you &#60;b&#62;for&#60;/b&#62; paying.");
    const pdf = m.parsed.attachments.find((a) => a.filename === "INV-0001.pdf");
    expect(pdf?.contentType).toBe("application/pdf");
    expect(pdf?.content.equals(PDF)).toBe(true);
    const logo = m.parsed.attachments.find((a) => a.cid === "logo");
    expect(logo).toMatchObject({ contentType: "image/png", contentDisposition: "inline" });
    expect(logo?.content.equals(LOGO)).toBe(true);

    await waitFor("the row sent", async () => (await row(id)).status === "SENT");
    expect(await row(id)).toMatchObject({ attempts: 1, lastError: null, lease: null, sentAt: expect.any(Date) });
    // Told once the outcome is recorded, which may be just after the server has the message.
    await waitFor("the results", async () => results.length >= 1);
    expect(results).toEqual(["receipt:sent"]);
  });

  it("attaches no logo when the email shows none", async () => {
    send();
    const d = draft({ inlineLogo: false, ...renderEmail({ name: "Shop", logo: false }, { heading: "Plain", paragraphs: ["No logo."] }) });
    await enqueue(d);
    const m = await arrived(d.to);
    expect(m.parsed.attachments).toEqual([]);
  });

  it("a 4xx is tried again on the webhook schedule: sent once, after 2 attempts", async () => {
    const results: string[] = [];
    send({ onResult: (_type, result) => results.push(result) });
    smtp.failNext(1, 451);
    const d = draft();
    const id = await enqueue(d);
    const first = await waitFor("the first attempt recorded", async () => ((await row(id)).attempts === 1 ? row(id) : undefined));
    expect(first).toMatchObject({ status: "QUEUED", lastError: "451 4.3.0 Try again later", sentAt: null });
    // Due again 5 s later (±10 %), not before.
    expect(first.nextAttemptAt.getTime() - Date.now()).toBeGreaterThan(3_000);
    expect(to(d.to)).toEqual([]);

    offsetMs = 6_000;
    await arrived(d.to);
    await waitFor("the row sent", async () => (await row(id)).status === "SENT");
    expect(await row(id)).toMatchObject({ attempts: 2, lastError: null });
    expect(to(d.to)).toHaveLength(1);
    await waitFor("the results", async () => results.length >= 2);
    expect(results).toEqual(["retrying", "sent"]);
  });

  it("a 5xx ends failed with the server's reply, and nothing more is tried", async () => {
    const results: string[] = [];
    send({ onResult: (_type, result) => results.push(result) });
    smtp.failNext(1, 550, "5.1.1 No such mailbox here");
    const d = draft();
    const id = await enqueue(d);
    await waitFor("the row failed", async () => (await row(id)).status === "FAILED");
    expect(await row(id)).toMatchObject({ attempts: 1, lastError: "550 5.1.1 No such mailbox here", sentAt: null });
    offsetMs = 24 * 3600_000;
    const marker = draft();
    await enqueue(marker);
    await arrived(marker.to);
    expect(to(d.to)).toEqual([]);
    await waitFor("the results", async () => results.length >= 2);
    expect(results).toEqual(["failed", "sent"]);
  });

  it("a connection error is transient, and an email whose schedule is used up ends failed", async () => {
    send({ smtpUrl: "smtp://127.0.0.1:1", timeoutMs: 2_000 });
    const id = await enqueue(draft());
    await waitFor("the first attempt recorded", async () => (await row(id)).attempts === 1);
    expect(await row(id)).toMatchObject({ status: "QUEUED", lastError: expect.stringMatching(/ECONNREFUSED/) });
    // The schedule has 7 retries: each jump of a day makes the next one due, the 8th failure is the last.
    for (let attempt = 2; attempt <= 8; attempt++) {
      offsetMs += 24 * 3600_000;
      await waitFor(`attempt ${attempt}`, async () => (await row(id)).attempts === attempt);
    }
    expect(await row(id)).toMatchObject({ status: "FAILED", attempts: 8 });
  });

  it("never puts a header that is not one line on the wire: the message is refused before it is sent", async () => {
    const transport = createEmailTransport({ smtpUrl: smtp.url, from: FROM });
    try {
      const d = draft();
      const email = { id: "eml_hostile", ...d, fromName: "Shop\r\nBcc: victim@else.example", replyTo: null, attachments: null, logo: null };
      const hostile: Record<string, string>[] = [{ "X-Note": "a\r\nBcc: victim@else.example" }, { "Bcc: victim@else.example\r\nX-Note": "a" }];
      for (const headers of hostile) {
        expect(await transport.send({ ...email, headers })).toEqual({ result: "permanent", error: expect.stringMatching(/^not sent: header/) });
      }
      // A display name with a line break is made one line (the outbox refuses it already).
      expect(await transport.send({ ...email, headers: null })).toMatchObject({ result: "accepted" });
      const m = await arrived(d.to);
      expect(m.to).toEqual([d.to]);
      expect(m.parsed.from?.value).toEqual([{ name: "Shop Bcc: victim@else.example", address: FROM }]);
      expect(smtp.messages.some((x) => x.to.includes("victim@else.example"))).toBe(false);
    } finally {
      transport.close();
    }
  });

  it("sends nothing for a rolled-back transaction", async () => {
    send();
    const rolledBack = draft();
    await expect(
      database.db.prisma.$transaction(async (tx) => {
        await enqueueEmail(tx, rolledBack);
        throw new Error("the change failed");
      }),
    ).rejects.toThrow("the change failed");
    expect(await database.db.prisma.email.count({ where: { to: rolledBack.to } })).toBe(0);
    const marker = draft();
    await enqueue(marker);
    await arrived(marker.to);
    expect(to(rolledBack.to)).toEqual([]);
  });
});

describe("leases", () => {
  it("an email claimed by a sender that died is sent by another once the lease runs out, and never while it holds", async () => {
    const d = draft();
    const id = await enqueue(d);
    // The dead sender: it claims for 60 s and never records anything.
    const claimed = await claimDueEmails(database.db.prisma, { token: "dead-sender", now: now(), leaseUntil: new Date(Date.now() + 60_000), limit: 100 });
    expect(claimed.map((c) => c.id)).toContain(id);
    expect(claimed.find((c) => c.id === id)?.logo?.contentType).toBe("image/png");

    send();
    // The live sender is working (it sends an email enqueued later), and leaves the claimed one alone.
    const marker = draft();
    await enqueue(marker);
    await arrived(marker.to);
    expect(to(d.to)).toEqual([]);
    expect(await row(id)).toMatchObject({ status: "QUEUED", lease: "dead-sender", attempts: 0 });

    offsetMs = 61_000;
    await arrived(d.to);
    await waitFor("the row sent", async () => (await row(id)).status === "SENT");
    expect(to(d.to)).toHaveLength(1);
    // The dead sender's outcome, arriving late, changes nothing.
    const late = await recordEmailAttempt(
      database.db.prisma,
      claimed.find((c) => c.id === id)!,
      "dead-sender",
      { result: "permanent", error: "late" },
      now(),
      Math.random,
    );
    expect(late).toBeNull();
    expect(await row(id)).toMatchObject({ status: "SENT", attempts: 1, lastError: null });
  });

  it("two senders on one database send each email exactly once", async () => {
    // On PostgreSQL the second sender has its own connections, as a second worker would; the embedded database has one process.
    const second: Database | null = database.url ? await openDatabase({ url: database.url, poolSize: 5 }) : null;
    try {
      const counts = [0, 0];
      send({ concurrency: 5, onResult: () => counts[0]!++ });
      send({ concurrency: 5, onResult: () => counts[1]!++ }, second?.prisma);
      const drafts = Array.from({ length: 60 }, () => draft({ type: "alert" }));
      await Promise.all(drafts.map((d) => enqueue(d)));
      await waitFor("every email sent", async () => drafts.every((d) => to(d.to).length > 0));
      await waitFor("every row recorded", async () => counts[0]! + counts[1]! === drafts.length);
      await Promise.all(senders.splice(0).map((s) => s.stop()));
      for (const d of drafts) expect(to(d.to), d.to).toHaveLength(1);
      const rows = await database.db.prisma.email.findMany({ where: { to: { in: drafts.map((d) => d.to) } } });
      expect(rows.map((r) => [r.status, r.attempts])).toEqual(drafts.map(() => ["SENT", 1]));
    } finally {
      await second?.close();
    }
  });

  it("stop() waits for the messages in flight and has them recorded", async () => {
    const sender = send();
    const d = draft();
    const id = await enqueue(d);
    await waitFor("claimed", async () => (await row(id)).lease !== null || (await row(id)).status === "SENT");
    await sender.stop();
    expect((await row(id)).status).toBe("SENT");
    expect(to(d.to)).toHaveLength(1);
  });
});

describe("without SMTP_URL", () => {
  it("due emails become held and nothing is sent, not even later by a sender with SMTP", async () => {
    const results: string[] = [];
    const before = smtp.messages.length;
    send({ smtpUrl: undefined, onResult: (type, result) => results.push(`${type}:${result}`) });
    const d = draft({ type: "invoice" });
    const id = await enqueue(d);
    await waitFor("the row held", async () => (await row(id)).status === "HELD");
    expect(await row(id)).toMatchObject({ attempts: 0, sentAt: null, lease: null });
    expect(smtp.messages.length).toBe(before);
    await waitFor("the results", async () => results.length >= 1);
    expect(results).toEqual(["invoice:held"]);
    await Promise.all(senders.splice(0).map((s) => s.stop()));

    send();
    const marker = draft();
    await enqueue(marker);
    await arrived(marker.to);
    expect(to(d.to)).toEqual([]);
    expect((await row(id)).status).toBe("HELD");
  });
});

describe("the operator's relayer alert", () => {
  const low = {
    chainId: 8453,
    chainName: "Base",
    nativeSymbol: "ETH",
    livemode: true,
    relayerAddress: "0x00000000000000000000000000000000000A1e27",
    balance: 10n ** 15n,
    minBalance: 10n ** 17n,
  };

  it("goes to ALERT_EMAIL through the outbox, at most once a day per chain", async () => {
    send();
    const prisma = database.db.prisma;
    const first = await alertRelayerLow(prisma, low, "ops@operator.example", new Date());
    expect(first).toMatch(/^eml_/);
    expect(await alertRelayerLow(prisma, low, "ops@operator.example", new Date())).toBeNull();
    // Another chain is another alert.
    const other = await alertRelayerLow(prisma, { ...low, chainId: 10, chainName: "OP Mainnet" }, "ops@operator.example", new Date());
    expect(other).toMatch(/^eml_/);

    const m = await waitFor("the alert sent", async () => smtp.messages.find((x) => x.parsed.messageId === `<${first}@stablegate.example>`));
    expect(m.to).toEqual(["ops@operator.example"]);
    expect(m.parsed.from?.value).toEqual([{ name: "Stablegate", address: FROM }]);
    expect(m.parsed.subject).toBe("Relayer balance low on Base (8453): 0.001 ETH");
    expect(m.parsed.text).toContain("0x00000000000000000000000000000000000A1e27");
    expect(m.parsed.text).toContain("Minimum: 0.1 ETH");
    expect(await row(first!)).toMatchObject({ merchantId: null, type: "alert", livemode: true, relatedId: "relayer:8453" });

    // A day later it is said again.
    await prisma.email.update({ where: { id: first! }, data: { createdAt: new Date(Date.now() - 25 * 3600_000) } });
    expect(await alertRelayerLow(prisma, low, "ops@operator.example", new Date())).toMatch(/^eml_/);
  });
});

describe("metrics and readiness", () => {
  it("counts emails by type and result", async () => {
    const metrics = new ProcessMetrics();
    send({ onResult: (type, result) => metrics.emails.inc({ type, result }) });
    const d = draft({ type: "security_notice" });
    await enqueue(d);
    await arrived(d.to);
    await waitFor("counted", async () => (await metrics.registry.metrics()).includes('stablegate_emails_total{type="security_notice",result="sent"} 1'));
    expect(await metrics.registry.metrics()).toContain("# TYPE stablegate_emails_total counter");
  });

  it('/readyz says email "not_configured" without SMTP_URL (still ready) and "configured" with it', async () => {
    for (const [env, email] of [
      [{}, "not_configured"],
      [{ SMTP_URL: smtp.url }, "configured"],
    ] as const) {
      const app = await startApp(env);
      try {
        const res = await app.call("GET", "/readyz", { key: null });
        expect(res.status).toBe(200);
        expect(res.body).toMatchObject({ status: "ok", database: "ok", email });
      } finally {
        await app.stop();
      }
    }
  }, 60_000);
});

describe("configuration", () => {
  const base = { NODE_ENV: "test" };
  it("SMTP_URL must be an smtp:// or smtps:// URL, and the error names it without its value", () => {
    for (const bad of ["http://mail.example:25", "mail.example:25", "smtp//user:pass@mail"]) {
      let error: unknown;
      try {
        loadConfig({ ...base, SMTP_URL: bad });
      } catch (e) {
        error = e;
      }
      expect(error, bad).toBeInstanceOf(ConfigError);
      expect((error as Error).message).toMatch(/SMTP_URL: must be smtp:\/\/user:pass@host:port/);
      expect((error as Error).message).not.toContain(bad);
    }
    expect(loadConfig({ ...base, SMTP_URL: "smtps://u:p@mail.example:465" }).email.smtpUrl).toBe("smtps://u:p@mail.example:465");
    expect(loadConfig(base).email.smtpUrl).toBeUndefined();
  });

  it("SMTP_URL_FILE reads the URL from a file; with SMTP_URL too it is an error naming both", () => {
    const dir = mkdtempSync(join(tmpdir(), "sg-smtp-"));
    try {
      const file = join(dir, "smtp_url");
      writeFileSync(file, "smtp://mailer:pa55@mail.example:587\n");
      expect(loadConfig({ ...base, SMTP_URL_FILE: file }).email.smtpUrl).toBe("smtp://mailer:pa55@mail.example:587");
      expect(() => loadConfig({ ...base, SMTP_URL_FILE: file, SMTP_URL: "smtp://mail.example" })).toThrow(
        /SMTP_URL_FILE: set either SMTP_URL or SMTP_URL_FILE/,
      );
      expect(() => loadConfig({ ...base, SMTP_URL_FILE: join(dir, "missing") })).toThrow(/SMTP_URL_FILE: cannot read/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
