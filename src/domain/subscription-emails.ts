// The subscriber's emails from the engine: a renewal coming (invoice_upcoming), a pull that failed
// (invoice_payment_failed) and the end of the subscription (subscription_canceled). Like invoices,
// they go out only when the merchant emails invoices (emailInvoices), to the customer's address unless
// it unsubscribed from the merchant, and always carry the manage page (cancel, revoke on chain).
// Written in the transaction of the change they tell about.
import type { Invoice, Prisma as P, Subscription } from "../generated/prisma/client.js";
import { buyerSender, enqueueBuyerEmail, subjectName, unsubscribeUrl } from "./buyer-emails.js";
import { formatAmount } from "./money.js";
import { manageUrl, type SubscriptionSettings } from "./subscriptions.js";

/** What a subscription email tells. */
export type SubscriptionEmail =
  | { type: "invoice_upcoming"; at: Date }
  | { type: "invoice_payment_failed"; invoice: Invoice; reason: string; retryAt: Date | null }
  | { type: "subscription_canceled"; reason: string };

const REASONS: Record<string, string> = {
  insufficient_balance: "the wallet did not hold enough USDC",
  insufficient_allowance: "the wallet's USDC allowance to the subscription contract is too low",
  blacklisted: "the token refused the transfer (an address is blocked by its issuer)",
  paused: "the token is paused by its issuer",
  revoked: "the permission was revoked",
  other: "the chain refused the payment",
  requested: "the merchant canceled it",
  customer: "you canceled it",
  period_end: "it was set to end with its period",
  payment_failed: "its payment kept failing",
  revoked_by_payer: "the permission was revoked from the wallet",
};

const day = (d: Date) => d.toISOString().slice(0, 10);

/** Queues `email` about `sub` to its customer, in `tx`, when the merchant emails invoices and the address did not unsubscribe. */
export async function enqueueSubscriptionEmail(
  tx: P.TransactionClient,
  sub: Subscription,
  email: SubscriptionEmail,
  settings: SubscriptionSettings,
): Promise<void> {
  const sender = await buyerSender(tx, sub.merchantId);
  if (!sender.emailInvoices) return;
  const [buyer] = await tx.$queryRaw<{ to: string; suppressed: boolean; plan: string }[]>`
    SELECT cu.email AS to, p.name AS plan,
      EXISTS (SELECT 1 FROM email_suppressions s WHERE s.merchant_id = ${sub.merchantId} AND s.email = lower(cu.email)) AS suppressed
    FROM customers cu, plans p WHERE cu.id = ${sub.customerId} AND p.id = ${sub.planId}`;
  if (!buyer || buyer.suppressed) return;
  const amount = `${formatAmount(sub.amount)} USDC`;
  const facts: [string, string][] = [
    ["Plan", buyer.plan],
    ["Amount", amount],
  ];
  let subject: string;
  let paragraphs: string[];
  if (email.type === "invoice_upcoming") {
    subject = `Your ${buyer.plan} subscription renews on ${day(email.at)}`;
    paragraphs = [
      `On ${day(email.at)} (UTC) your subscription to ${buyer.plan} renews: ${amount} will be taken from your wallet${sub.payer ? ` ${sub.payer}` : ""}.`,
    ];
  } else if (email.type === "invoice_payment_failed") {
    subject = `Payment failed for invoice ${email.invoice.number ?? email.invoice.id}`;
    paragraphs = [
      `We could not take ${amount} for your ${buyer.plan} subscription: ${REASONS[email.reason] ?? REASONS.other}.`,
      email.retryAt ? `We will try again on ${email.retryAt.toISOString().slice(0, 16).replace("T", " ")} UTC.` : "No further attempt will be made.",
    ];
    facts.push(["Invoice", email.invoice.number ?? email.invoice.id]);
  } else {
    subject = `Your ${buyer.plan} subscription has ended`;
    paragraphs = [`Your subscription to ${buyer.plan} has ended: ${REASONS[email.reason] ?? email.reason}. Nothing more will be taken from your wallet.`];
  }
  const unsubscribe = unsubscribeUrl(sender, buyer.to, settings);
  await enqueueBuyerEmail(tx, sender, {
    type: email.type,
    livemode: sub.livemode,
    to: buyer.to,
    subject: `${subject} (${subjectName(sender)})`,
    content: {
      heading: `${buyer.plan} from ${sender.name}`,
      paragraphs,
      facts,
      action: { label: "Manage your subscription", url: manageUrl(sub, settings) },
      footer: [`You received this because you subscribed to ${sender.name}. To stop these emails from ${sender.name}, open: ${unsubscribe}`],
    },
    relatedId: sub.id,
    headers: { "List-Unsubscribe": `<${unsubscribe}>`, "List-Unsubscribe-Post": "List-Unsubscribe=One-Click" },
  });
}
