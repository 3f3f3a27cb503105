// The invoice and payment link pages: pages without script whose Pay makes (or reuses) a charge and
// goes to its payment page; and the invoice's PDF.
import type { FastifyInstance } from "fastify";
import { AppError } from "../domain/errors.js";
import { invoicePdf } from "../domain/invoice-document.js";
import { payInvoice, publicInvoiceView } from "../domain/invoices.js";
import { activePaymentLink, chargeFromPaymentLink } from "../domain/payment-links.js";
import { statusOf } from "../http/errors.js";
import { sendPdf } from "../http/pdf.js";
import { buyerNotice } from "./buyer-error.js";
import { ACTING, html, type IdParams, OPEN, type PayContext } from "./context.js";
import { renderInvoicePage, renderPaymentLinkPage } from "./invoice-page.js";

type LinkPost = IdParams & { Body: Record<string, string> | undefined };

/** Registers the invoice page, its PDF and its Pay, and the payment link page and its Pay. */
export function invoiceRoutes(scope: FastifyInstance, { options, basePath, failure, backToPage }: PayContext): void {
  const { prisma, charges } = options;

  scope.get<IdParams>(`${basePath}/invoices/:id`, OPEN, async (req, reply) => {
    try {
      return html(reply, 200, renderInvoicePage(await publicInvoiceView(prisma, req.params.id), charges, basePath));
    } catch (e) {
      return failure(req, reply, e);
    }
  });

  scope.get<IdParams>(`${basePath}/invoices/:id/pdf`, OPEN, async (req, reply) => {
    try {
      const view = await publicInvoiceView(prisma, req.params.id);
      return sendPdf(reply, view.invoice, await invoicePdf(view, charges));
    } catch (e) {
      return failure(req, reply, e);
    }
  });

  scope.post<IdParams>(`${basePath}/invoices/:id/pay`, ACTING, async (req, reply) => {
    try {
      return backToPage(reply, (await payInvoice(prisma, req.params.id, charges)).id);
    } catch (e) {
      // Paid or voided meanwhile: the invoice as it now is, saying why.
      if (!(e instanceof AppError) || statusOf(e) !== 409) return failure(req, reply, e);
      const view = await publicInvoiceView(prisma, req.params.id);
      return html(reply, 409, renderInvoicePage(view, charges, basePath, buyerNotice(e, "invoice", view.merchantName)));
    }
  });

  scope.get<IdParams>(`${basePath}/l/:id`, OPEN, async (req, reply) => {
    try {
      const { link, merchantName } = await activePaymentLink(prisma, req.params.id);
      return html(reply, 200, renderPaymentLinkPage(link, merchantName, basePath));
    } catch (e) {
      return failure(req, reply, e);
    }
  });

  scope.post<LinkPost>(`${basePath}/l/:id`, ACTING, async (req, reply) => {
    const email = String(req.body?.email ?? "");
    try {
      await options.rateLimiter.consume(`${req.clientAddress}:${req.params.id}`, "linkCharges");
      return backToPage(reply, (await chargeFromPaymentLink(prisma, req.params.id, { email }, charges)).id);
    } catch (e) {
      // A refused email: the page again, saying why, with what was typed.
      if (!(e instanceof AppError) || e.param !== "email") return failure(req, reply, e);
      const { link, merchantName } = await activePaymentLink(prisma, req.params.id);
      return html(reply, 400, renderPaymentLinkPage(link, merchantName, basePath, { email, error: "Enter your email address, such as you@example.com." }));
    }
  });
}
