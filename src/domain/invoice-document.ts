// An invoice as its PDF shows it (the same figures the hosted invoice page shows), and that PDF: one
// document for the REST download and the buyer's "Download PDF" alike.
import { amountDue, takesPayment } from "./invoice-lifecycle.js";
import { hostedInvoiceUrl, invoiceLines, type InvoiceSettings, type InvoiceView } from "./invoices.js";
import { type InvoiceDocument, renderInvoicePdf } from "./invoice-pdf.js";
import { formatAmount } from "./money.js";

/** What the PDF of an invoice shows. */
export function invoiceDocument({ invoice, merchantName, seller, logo, billTo }: InvoiceView, settings: InvoiceSettings): InvoiceDocument {
  return {
    number: invoice.number,
    status: invoice.status,
    livemode: invoice.livemode,
    merchantName,
    seller,
    logo,
    customer: billTo,
    lineItems: invoiceLines(invoice),
    subtotal: formatAmount(invoice.total),
    total: formatAmount(invoice.total),
    amountPaid: formatAmount(invoice.amountPaid),
    amountDue: formatAmount(amountDue(invoice)),
    currency: "USDC",
    createdAt: invoice.createdAt,
    finalizedAt: invoice.finalizedAt,
    dueDate: invoice.dueDate,
    paidAt: invoice.paidAt,
    memo: invoice.memo,
    // "Pay online" only while there is something to pay.
    hostedInvoiceUrl: takesPayment(invoice) ? hostedInvoiceUrl(invoice, settings) : null,
  };
}

/** The invoice as a PDF. */
export function invoicePdf(view: InvoiceView, settings: InvoiceSettings): Promise<Buffer> {
  return renderInvoicePdf(invoiceDocument(view, settings));
}
