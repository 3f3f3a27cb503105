// `npm run build && node test/bench/email.mjs`: the email sender on a throwaway PostgreSQL database,
// sending to a local SMTP server (smtp-server on 127.0.0.1). Prints one JSON line (progress on stderr):
// emails accepted per second for a burst of outbox rows drained by one sender, next to a baseline in
// the same run: the same messages sent straight from a nodemailer pool with the same connections and
// concurrency, no database (the ratio is what the outbox costs: claims, leases, outcomes).
import nodemailer from "nodemailer";
import { pino } from "pino";
import { SMTPServer } from "smtp-server";
import { openDatabase } from "../../dist/db/client.js";
import { migrate } from "../../dist/db/migrate.js";
import { enqueueEmail } from "../../dist/domain/emails.js";
import { createMerchant } from "../../dist/domain/merchants.js";
import { renderEmail } from "../../dist/email/layout.js";
import { startEmailSender } from "../../dist/jobs/email-sender.js";
import { throwawayDatabase } from "./throwaway-db.mjs";

const EMAILS = Number(process.env.BENCH_EMAILS ?? 2000);
/** The sender's defaults: 20 messages in flight over at most 5 connections. */
const CONCURRENCY = 20;
const CONNECTIONS = 5;
const FROM = "payments@bench.example";
const log = (...a) => console.error("[email]", ...a);

// The server only counts what it accepts: parsing is the receiver's cost, not ours.
let accepted = 0;
const server = new SMTPServer({
  disabledCommands: ["STARTTLS", "AUTH"],
  logger: false,
  onData(stream, _session, callback) {
    stream.on("end", () => {
      accepted++;
      callback();
    });
    stream.resume();
  },
});
await new Promise((r) => server.listen(0, "127.0.0.1", r));
const smtpUrl = `smtp://127.0.0.1:${server.server.address().port}`;

const content = renderEmail(
  { name: "Bench Shop", logo: false },
  {
    heading: "Your receipt",
    paragraphs: ["Thank you for your payment."],
    facts: [
      ["Amount", "12.50 USDC"],
      ["Order", "bench-1"],
    ],
  },
);
const message = (i) => ({ to: `buyer-${i}@customer.example`, subject: `Your receipt #${i}`, ...content });

const database = await throwawayDatabase("email");
const db = await openDatabase({ url: database.url, poolSize: 20 });
const result = {};
try {
  await migrate(db);
  const { prisma } = db;
  const shop = await createMerchant(prisma, { name: "Bench Shop" }, { feeBps: 100 });

  // Baseline: a nodemailer pool like the sender's, CONCURRENCY messages at a time.
  const pool = nodemailer.createTransport({ url: smtpUrl, pool: true, maxConnections: CONNECTIONS });
  let next = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < EMAILS) {
        const i = next++;
        await pool.sendMail({ from: { name: "Bench Shop", address: FROM }, ...message(i) });
      }
    }),
  );
  const baselinePerSecond = Math.round(EMAILS / ((performance.now() - t0) / 1000));
  pool.close();
  log(`baseline: ${baselinePerSecond} emails/s`);

  // The outbox: the burst is committed first, then one sender drains it.
  accepted = 0;
  await prisma.$transaction(
    async (tx) => {
      for (let i = 0; i < EMAILS; i++) {
        await enqueueEmail(tx, { merchantId: shop.merchant.id, livemode: false, type: "receipt", fromName: "Bench Shop", ...message(i) });
      }
    },
    { timeout: 120_000 },
  );
  const t1 = performance.now();
  const sender = startEmailSender(prisma, pino({ level: "warn" }), { smtpUrl, from: FROM, concurrency: CONCURRENCY });
  while (accepted < EMAILS) await new Promise((r) => setTimeout(r, 20));
  const seconds = (performance.now() - t1) / 1000;
  // Recorded too, not only accepted.
  while ((await prisma.email.count({ where: { status: "SENT" } })) < EMAILS) await new Promise((r) => setTimeout(r, 20));
  const recordedSeconds = (performance.now() - t1) / 1000;
  await sender.stop();
  result.throughput = {
    emails: EMAILS,
    perSecond: Math.round(EMAILS / seconds),
    perSecondRecorded: Math.round(EMAILS / recordedSeconds),
    baselinePerSecond,
    ratio: Number((EMAILS / seconds / baselinePerSecond).toFixed(2)),
  };
  log(result.throughput);
} finally {
  await db.close();
  server.close();
  await database.drop();
}
console.log(JSON.stringify({ bench: "email", ...result }));
