// An invoice emailed to its customer (.docs/invoices.md "Emailing invoices"): the amount due, number,
// due date and the hosted invoice's link, with its PDF attached, in the merchant's name
// (domain/buyer-emails.ts). Written in the transaction that finalizes the invoice when the merchant
// turned invoice emails on, and on request (POST /v1/invoices/:id/send) for any finalized invoice.
// Its own module because the PDF (domain/invoice-document.ts) is drawn from domain/invoices.ts.
import type { Prisma } from "../db/client.js";
import type { Invoice, Prisma as P } from "../generated/prisma/client.js";
import { type BuyerSender, buyerSender, enqueueBuyerEmail, subjectName } from "./buyer-emails.js";
import { AppError } from "./errors.js";
import { invoicePdf } from "./invoice-document.js";
import { amountDue } from "./invoice-lifecycle.js";
import { finalizeDraft, getInvoice, hostedInvoiceUrl, type InvoiceSettings, viewOf } from "./invoices.js";
import { assertLiveChain } from "./live-chains.js";
import { formatAmount } from "./money.js";
import type { Scope } from "./scope.js";

/**
 * Issues a DRAFT (domain/invoices.ts `finalizeDraft`) and, in the same transaction, emails it to its
 * customer when the merchant turned invoice emails on.
 */
export async function finalizeInvoice(prisma: Prisma, scope: Scope, id: string, settings: InvoiceSettings, now = new Date()): Promise<Invoice> {
  return prisma.$transaction(async (tx) => {
    const invoice = await finalizeDraft(tx, scope, id, settings, now);
    const sender = await buyerSender(tx, scope.merchantId);
    if (sender.emailInvoices) await emailInvoice(tx, sender, invoice, settings, "automatic");
    return invoice;
  });
}

/** Emails an open invoice to its customer now; 409 `invoice_not_sendable` for any other (a DRAFT, or one paid, void or uncollectible: the email asks for payment) or a customer without an email. */
export async function sendInvoice(prisma: Prisma, scope: Scope, id: string, settings: InvoiceSettings): Promise<Invoice> {
  // The email asks for payment: not while no live chain could take it.
  assertLiveChain(scope.livemode, settings.chains);
  return prisma.$transaction(async (tx) => {
    const invoice = await getInvoice(tx, scope, id);
    if (invoice.status === "DRAFT") {
      throw new AppError("invoice_not_sendable", `Invoice ${id} is a DRAFT: finalize it before sending it.`, "id");
    }
    if (invoice.status !== "OPEN") {
      throw new AppError("invoice_not_sendable", `Invoice ${id} is ${invoice.status}: only an open invoice is sent, as its email asks for payment.`, "id");
    }
    await emailInvoice(tx, await buyerSender(tx, scope.merchantId), invoice, settings, "asked");
    return invoice;
  });
}

/** Writes the invoice's email to its customer's current address; without one, nothing (`automatic`) or 409 (`asked`). */
async function emailInvoice(tx: P.TransactionClient, sender: BuyerSender, invoice: Invoice, settings: InvoiceSettings, why: "automatic" | "asked") {
  const customer = invoice.customerId === null ? null : await tx.customer.findUnique({ where: { id: invoice.customerId }, select: { email: true } });
  if (!customer?.email) {
    if (why === "automatic") return;
    throw new AppError("invoice_not_sendable", `Invoice ${invoice.id} cannot be sent: it has no customer with an email.`, "id");
  }
  const number = invoice.number ?? invoice.id;
  const due = `${formatAmount(amountDue(invoice))} USDC`;
  const facts: [string, string][] = [
    ["Amount due", due],
    ["Invoice number", number],
  ];
  if (invoice.dueDate) facts.push(["Due date", invoice.dueDate.toISOString().slice(0, 10)]);
  const pdf = await invoicePdf(await viewOf(tx, invoice), settings);
  await enqueueBuyerEmail(tx, sender, {
    type: "invoice",
    livemode: invoice.livemode,
    to: customer.email,
    subject: `Invoice ${number} from ${subjectName(sender)}: ${due} due`,
    content: {
      heading: `Invoice ${number} from ${sender.name}`,
      paragraphs: [
        `${sender.name} sent you an invoice for ${due}. You can see it and pay it in USDC online; the PDF is attached.`,
        ...(invoice.memo ? [invoice.memo] : []),
      ],
      facts,
      action: { label: "View and pay the invoice", url: hostedInvoiceUrl(invoice, settings) },
    },
    relatedId: invoice.id,
    attachments: [{ filename: `${number}.pdf`, contentType: "application/pdf", content: pdf }],
  });
}
