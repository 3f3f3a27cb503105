// Emails to a merchant's buyers and customers (.docs/email.md "To buyers and customers"): the invoice
// (domain/invoice-emails.ts), the receipt and the refund claim link, each written to the outbox
// (domain/emails.ts) in the transaction of the change that causes it, in the merchant's name.
// Invariants:
// - the sender's name is the merchant's name made one line (headerText), Reply-To its support email
//   when set, the logo inline when it has one; anything a merchant or buyer typed reaches a subject
//   only through headerText and the body only through renderEmail (escaped);
// - a receipt is written only when the merchant turned receipts on, never to an address that
//   unsubscribed from that merchant's receipts, and carries List-Unsubscribe (one click, RFC 8058);
// - an unsubscribe link is the merchant and address with an HMAC under the merchant's own key: it
//   needs no login, works across restarts and processes, and cannot be made for another address.
import { createHmac, timingSafeEqual } from "node:crypto";
import { explorerTxUrl, knownChain } from "../chain/registry.js";
import type { Prisma } from "../db/client.js";
import { headerText } from "../email/address.js";
import { type EmailContent, renderEmail } from "../email/layout.js";
import type { Prisma as P } from "../generated/prisma/client.js";
import { type EmailAttachment, type EmailType, enqueueEmail, merchantBrand } from "./emails.js";
import { AppError } from "./errors.js";
import { formatAmount } from "./money.js";

/** What the buyer emails read of the merchant, in one read (not the logo's bytes: whether it has one is enough). */
const SENDER = {
  id: true,
  name: true,
  logoType: true,
  supportEmail: true,
  emailInvoices: true,
  emailReceipts: true,
  emailRefunds: true,
  emailTokenSecret: true,
} as const;

/** The merchant as its buyer emails need it: its name, logo, Reply-To and settings. */
export type BuyerSender = P.MerchantGetPayload<{ select: typeof SENDER }>;

/** The merchant whose buyers are written to. */
export function buyerSender(db: Prisma | P.TransactionClient, merchantId: string): Promise<BuyerSender> {
  return db.merchant.findUniqueOrThrow({ where: { id: merchantId }, select: SENDER });
}

/** One email to a buyer: what it is about and what it says. */
export interface BuyerEmail {
  type: Extract<
    EmailType,
    "invoice" | "receipt" | "refund_claim" | "subscription_checkout" | "invoice_upcoming" | "invoice_payment_failed" | "subscription_canceled"
  >;
  livemode: boolean;
  to: string;
  subject: string;
  content: EmailContent;
  /** The invoice, charge, refund or subscription it is about. */
  relatedId: string;
  attachments?: EmailAttachment[];
  headers?: Record<string, string>;
}

/** Writes `email` to the outbox in transaction `tx`, in `sender`'s name; returns its id. */
export function enqueueBuyerEmail(tx: P.TransactionClient, sender: BuyerSender, email: BuyerEmail): Promise<string> {
  // The layout only needs to know there is a logo; the sender attaches the bytes from the merchant's row.
  const brand = merchantBrand({ name: sender.name, logo: sender.logoType === null ? null : HAS_LOGO });
  return enqueueEmail(tx, {
    merchantId: sender.id,
    livemode: email.livemode,
    type: email.type,
    to: email.to,
    subject: email.subject,
    fromName: headerText(sender.name),
    replyTo: sender.supportEmail,
    headers: email.headers,
    attachments: email.attachments,
    inlineLogo: brand.logo,
    relatedId: email.relatedId,
    ...renderEmail(brand, email.content),
  });
}

const HAS_LOGO = new Uint8Array(1);

/** A charge's buyer: its customer's email, else the one the buyer gave (payment links), null when none; and the order. */
export async function chargeBuyer(tx: P.TransactionClient, chargeId: string): Promise<{ email: string | null; orderId: string }> {
  const [row] = await tx.$queryRaw<{ email: string | null; orderId: string }[]>`
    SELECT coalesce(cu.email, c.customer_email) AS email, c.order_id AS "orderId"
    FROM charges c LEFT JOIN customers cu ON cu.id = c.customer_id WHERE c.id = ${chargeId}`;
  return row ?? { email: null, orderId: "" };
}

/** A subject's merchant name: one line, bounded. */
export const subjectName = (sender: Pick<BuyerSender, "name">) => headerText(sender.name, 100);

// ---- Receipts ----

/** A charge as its receipt needs it. */
export interface ReceiptCharge {
  id: string;
  merchantId: string;
  livemode: boolean;
  orderId: string;
  amountReceived: Parameters<typeof formatAmount>[0] | null;
}

/**
 * Inside the transaction that COMPLETED `charge`: its receipt, when the merchant turned receipts on
 * and the buyer has an address that did not unsubscribe. The completion path is hot: with receipts
 * off this is one read of the merchant and nothing else.
 */
export async function enqueueReceipt(tx: P.TransactionClient, charge: ReceiptCharge, settings: { paymentBaseUrl: string }): Promise<void> {
  const sender = await buyerSender(tx, charge.merchantId);
  if (!sender.emailReceipts) return;
  const [buyer] = await tx.$queryRaw<{ to: string | null; suppressed: boolean; txHash: string | null; chainId: number | null }[]>`
    SELECT b.to, EXISTS (SELECT 1 FROM email_suppressions s WHERE s.merchant_id = ${charge.merchantId} AND s.email = lower(b.to)) AS suppressed,
           p.tx_hash AS "txHash", p.chain_id AS "chainId"
    FROM (SELECT coalesce(cu.email, c.customer_email) AS to FROM charges c LEFT JOIN customers cu ON cu.id = c.customer_id WHERE c.id = ${charge.id}) b
    LEFT JOIN LATERAL (SELECT tx_hash, chain_id FROM chain_transfers
                       WHERE charge_id = ${charge.id} AND kind = 'PAYMENT' AND status = 'CONFIRMED'
                       ORDER BY block_number DESC, log_index DESC LIMIT 1) p ON true`;
  if (!buyer?.to || buyer.suppressed) return;
  const amount = `${formatAmount(charge.amountReceived ?? 0n)} USDC`;
  const facts: [string, string][] = [
    ["Amount paid", amount],
    ["Order", charge.orderId],
  ];
  if (buyer.chainId !== null && buyer.txHash !== null) {
    facts.push(["Chain", knownChain(buyer.chainId)?.name ?? `Chain ${buyer.chainId}`]);
    facts.push(["Transaction", buyer.txHash]);
  }
  const explorer = buyer.chainId !== null && buyer.txHash !== null ? explorerTxUrl(buyer.chainId, buyer.txHash) : null;
  const unsubscribe = unsubscribeUrl(sender, buyer.to, settings);
  await enqueueBuyerEmail(tx, sender, {
    type: "receipt",
    livemode: charge.livemode,
    to: buyer.to,
    subject: `Your receipt from ${subjectName(sender)}: ${amount}`,
    content: {
      heading: `Receipt from ${sender.name}`,
      paragraphs: [`Thank you: your payment of ${amount} to ${sender.name} is confirmed on chain.`],
      facts,
      ...(explorer && { action: { label: "View the transaction", url: explorer } }),
      footer: [`You received this receipt because you paid ${sender.name}. To stop receipts from ${sender.name}, open: ${unsubscribe}`],
    },
    relatedId: charge.id,
    headers: { "List-Unsubscribe": `<${unsubscribe}>`, "List-Unsubscribe-Post": "List-Unsubscribe=One-Click" },
  });
}

// ---- Refund claim links ----

/** A refund waiting for its address, as its claim email needs it. */
export interface ClaimingRefund {
  id: string;
  livemode: boolean;
  amount: Parameters<typeof formatAmount>[0];
  reason: string | null;
  chainId: number;
}

/** The email asking `to` for the address to send `refund` to, linking its claim page. */
export function enqueueRefundClaim(
  tx: P.TransactionClient,
  sender: BuyerSender,
  refund: ClaimingRefund,
  buyer: { email: string; orderId: string },
  claimUrl: string,
): Promise<string> {
  const amount = `${formatAmount(refund.amount)} USDC`;
  const chain = knownChain(refund.chainId)?.name ?? `Chain ${refund.chainId}`;
  const facts: [string, string][] = [
    ["Amount", amount],
    ["Order", buyer.orderId],
    ["Chain", chain],
  ];
  if (refund.reason) facts.push(["Reason", refund.reason]);
  return enqueueBuyerEmail(tx, sender, {
    type: "refund_claim",
    livemode: refund.livemode,
    to: buyer.email,
    subject: `${subjectName(sender)} is refunding you ${amount}`,
    content: {
      heading: `${sender.name} is refunding you ${amount}`,
      paragraphs: [
        `To receive your refund, give the address of a wallet you control on ${chain}: the USDC is sent there.`,
        "The link is yours alone: do not share it.",
      ],
      facts,
      action: { label: "Claim your refund", url: claimUrl },
    },
    relatedId: refund.id,
  });
}

// ---- Unsubscribing from receipts ----

const mac = (secret: string, merchantId: string, email: string) =>
  createHmac("sha256", secret).update(`stablegate unsubscribe\n${merchantId}\n${email}`).digest("base64url");

/** The page where `email` stops `sender`'s receipts: `{paymentBaseUrl}/unsubscribe?token=…` (no login; the token is the capability). */
export function unsubscribeUrl(sender: Pick<BuyerSender, "id" | "emailTokenSecret">, email: string, settings: { paymentBaseUrl: string }): string {
  const address = email.toLowerCase();
  const token = `${sender.id}.${Buffer.from(address).toString("base64url")}.${mac(sender.emailTokenSecret, sender.id, address)}`;
  return `${settings.paymentBaseUrl}/unsubscribe?token=${token}`;
}

/** Whose receipts an unsubscribe token stops, and for which address. */
export interface Unsubscription {
  merchantId: string;
  merchantName: string;
  email: string;
}

/** What an unsubscribe token names; 404 for a malformed or forged one (the same answer, so nothing is learnt). */
export async function readUnsubscribeToken(prisma: Prisma, token: string): Promise<Unsubscription> {
  const refused = new AppError("resource_missing", "This unsubscribe link is not valid.", "token");
  const [merchantId, encoded, given] = token.split(".");
  if (!merchantId || !encoded || !given || token.split(".").length !== 3 || merchantId.length > 100) throw refused;
  const merchant = await prisma.merchant.findUnique({ where: { id: merchantId }, select: { name: true, emailTokenSecret: true } });
  const email = Buffer.from(encoded, "base64url").toString("utf8");
  if (!merchant) throw refused;
  const expected = Buffer.from(mac(merchant.emailTokenSecret, merchantId, email));
  const provided = Buffer.from(given);
  if (expected.length !== provided.length || !timingSafeEqual(expected, provided)) throw refused;
  return { merchantId, merchantName: merchant.name, email };
}

/** Records that the token's address wants no more receipts from its merchant (again: nothing changes). */
export async function unsubscribeFromReceipts(prisma: Prisma, token: string): Promise<Unsubscription> {
  const who = await readUnsubscribeToken(prisma, token);
  await prisma.emailSuppression.upsert({
    where: { merchantId_email: { merchantId: who.merchantId, email: who.email } },
    create: { merchantId: who.merchantId, email: who.email },
    update: {},
  });
  return who;
}
