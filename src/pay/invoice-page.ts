// The hosted invoice page and the payment link page, on the hosted pages' look: server-rendered, no
// script, plain forms whose Pay makes (or reuses) a charge and sends the buyer to its payment page.
import { logoDataUrl } from "../domain/business-details.js";
import { invoiceDocument } from "../domain/invoice-document.js";
import type { InvoiceDocument } from "../domain/invoice-pdf.js";
import { type InvoiceSettings, type InvoiceView, takesPayment } from "../domain/invoices.js";
import type { PaymentLink } from "../domain/payment-links.js";
import { formatAmount } from "../domain/money.js";
import { document } from "./page.js";
import { escapeHtml as h } from "./qr.js";

const STATUS_TEXT = {
  DRAFT: "Draft",
  OPEN: "Due",
  PAID: "Paid",
  VOID: "Void: nothing is due",
  UNCOLLECTIBLE: "Due",
} as const;

const testBanner = (livemode: boolean) =>
  livemode ? "" : `<p class="test-banner" role="note"><strong>TEST MODE</strong>: no real money moves on this page.</p>`;

const day = (d: Date) => d.toISOString().slice(0, 10);

/** The hosted invoice page: what is billed, what is due, and Pay while something is. */
export function renderInvoicePage(view: InvoiceView, settings: InvoiceSettings, basePath: string, error: string | null = null): string {
  const doc = invoiceDocument(view, settings);
  const { invoice } = view;
  const base = `${h(basePath)}/invoices/${h(invoice.id)}`;
  const open = takesPayment(invoice);
  const billTo = doc.customer;
  const seller = doc.seller;
  const dates = [
    ["Issued", doc.finalizedAt ?? doc.createdAt],
    ["Due", doc.dueDate],
    ["Paid", doc.paidAt],
  ].filter((d): d is [string, Date] => d[1] !== null);
  const body = [
    testBanner(invoice.livemode),
    // The logo is inline (a data: URL): the page stays one request, and its CSP allows no other origin.
    `<header>${view.logo ? `<img class="logo" src="${h(logoDataUrl(view.logo))}" alt="">` : ""}<p class="merchant">${h(view.merchantName)}</p>`,
    `<h1>Invoice <span class="nowrap">${h(invoice.number ?? "")}</span></h1>`,
    `<p id="status" class="status" role="status" data-status="${h(invoice.status)}">${h(STATUS_TEXT[invoice.status])}` +
      (open ? `: <strong>${h(doc.amountDue)} USDC</strong>` : "") +
      `</p></header>`,
    error ? `<p class="status error" role="alert">${h(error)}</p>` : "",
    `<div class="parties">`,
    `<section aria-labelledby="from"><h2 id="from">From</h2><p class="seller">` +
      lines([seller.legalName ?? view.merchantName, ...addressLines(seller.address), seller.taxId ? `Tax ID: ${seller.taxId}` : null]) +
      `</p></section>`,
    billTo
      ? `<section aria-labelledby="bill-to"><h2 id="bill-to">Bill to</h2><p class="bill-to">` +
        lines([billTo.name, billTo.companyName, ...addressLines(billTo.address), billTo.taxId ? `Tax ID: ${billTo.taxId}` : null, billTo.email]) +
        `</p></section>`
      : "",
    `</div>`,
    `<dl>${dates.map(([label, at]) => `<dt>${label}</dt><dd><time datetime="${h(at.toISOString())}">${day(at)}</time></dd>`).join("")}</dl>`,
    `<table class="lines"><caption class="visually-hidden">Line items</caption>` +
      `<thead><tr><th scope="col">Description</th><th scope="col" class="num">Qty</th><th scope="col" class="num">Unit price</th><th scope="col" class="num">Amount</th></tr></thead><tbody>` +
      doc.lineItems
        .map(
          (l) =>
            `<tr><td>${h(l.description)}</td><td class="num">${l.quantity}</td><td class="num">${h(l.unitAmount)}</td><td class="num">${h(l.amount)}</td></tr>`,
        )
        .join("") +
      `</tbody><tfoot>` +
      [
        ["Total", doc.total],
        ["Amount paid", doc.amountPaid],
        ["Amount due", doc.amountDue],
      ]
        .map(([label, amount]) => `<tr><th scope="row" colspan="3">${label}</th><td class="num">${h(amount!)} USDC</td></tr>`)
        .join("") +
      `</tfoot></table>`,
    invoice.memo ? `<p class="description">${h(invoice.memo)}</p>` : "",
    open
      ? `<form method="post" action="${base}/pay"><p><button type="submit">Pay ${h(doc.amountDue)} USDC</button></p></form>` +
        `<p class="expires">You choose the network on the next page and pay from any wallet; the money goes straight to ${h(view.merchantName)}.</p>`
      : "",
    `<p><a href="${base}/pdf" download>Download PDF</a></p>`,
  ].join("\n");
  return document(`Invoice ${invoice.number ?? ""} from ${view.merchantName}`, body, null, basePath);
}

function addressLines(address: InvoiceDocument["seller"]["address"]): (string | null)[] {
  if (!address) return [];
  return [address.line1, address.line2, [address.postalCode, address.city].filter(Boolean).join(" "), address.state, address.country];
}

// Escaped, one per line, the empty ones left out.
function lines(texts: (string | null)[]): string {
  return texts
    .filter((line): line is string => Boolean(line))
    .map(h)
    .join("<br>");
}

/**
 * The payment link page: what is sold and its Pay; with `collectEmail`, the buyer's email first, and
 * with `quantityMax`, a quantity to pick (`email`, `quantity`: what was given, `error`: why it was refused).
 */
export function renderPaymentLinkPage(
  link: PaymentLink,
  merchantName: string,
  basePath: string,
  asked: { email?: string; quantity?: string; error?: string } = {},
): string {
  const amount = formatAmount(link.amount);
  const each = link.quantityMax === null ? "" : " each";
  const body = [
    testBanner(link.livemode),
    `<header><p class="merchant">${h(merchantName)}</p>`,
    `<h1>${h(link.name)}</h1>`,
    link.description ? `<p class="description">${h(link.description)}</p>` : "",
    `<p class="amount">${h(amount)} USDC${each}</p></header>`,
    asked.error ? `<p class="status error" role="alert">${h(asked.error)}</p>` : "",
    `<form method="post" action="${h(basePath)}/l/${h(link.id)}">`,
    link.collectEmail
      ? `<p><label for="email">Your email (${h(merchantName)} sends your receipt there)</label><br>` +
        `<input id="email" name="email" type="email" required maxlength="254" autocomplete="email" value="${h(asked.email ?? "")}"></p>`
      : "",
    link.quantityMax === null
      ? ""
      : `<p><label for="quantity">Quantity (1 to ${link.quantityMax})</label><br>` +
        `<input id="quantity" name="quantity" type="number" required min="1" max="${link.quantityMax}" step="1" inputmode="numeric" value="${h(asked.quantity ?? "1")}"></p>`,
    `<p><button type="submit">${link.quantityMax === null ? `Pay ${h(amount)} USDC` : "Continue to payment"}</button></p></form>`,
    `<p class="expires">You choose the network on the next page and pay from any wallet; the money goes straight to ${h(merchantName)}.</p>`,
  ].join("\n");
  return document(`${link.name}: ${amount} USDC to ${merchantName}`, body, null, basePath);
}
