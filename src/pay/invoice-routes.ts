// The invoice and payment link pages: pages without script whose Pay makes (or reuses) a charge and
// goes to its payment page; and the invoice's PDF.
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { AppError } from "../domain/errors.js";
import { invoicePdf } from "../domain/invoice-document.js";
import { payInvoice, publicInvoiceView } from "../domain/invoices.js";
import { activePaymentLink, chargeFromPaymentLink, newLinkSessionToken } from "../domain/payment-links.js";
import { statusOf } from "../http/errors.js";
import { cookieValue } from "../http/session-cookie.js";
import { sendPdf } from "../http/pdf.js";
import { buyerNotice } from "./buyer-error.js";
import { ACTING, html, type IdParams, OPEN, type PayContext } from "./context.js";
import { renderInvoicePage, renderPaymentLinkPage } from "./invoice-page.js";

type LinkPost = IdParams & { Body: Record<string, string> | undefined };

/** The cookie naming a browser's session on one link's page (scoped to that page's path). */
const LINK_SESSION_COOKIE = "sg_link";
const TOKEN_SHAPE = /^[0-9A-Za-z]{32}$/;

/**
 * The browser's session token on the link's page: the one its cookie holds, or a new one, (re)set
 * for a day. It lets Pay → Back → Pay find the charge this browser already made.
 */
function linkSession(req: FastifyRequest, reply: FastifyReply, path: string, secure: boolean): string {
  const held = cookieValue(req.headers.cookie, LINK_SESSION_COOKIE);
  const token = held !== null && TOKEN_SHAPE.test(held) ? held : newLinkSessionToken();
  reply.header("set-cookie", `${LINK_SESSION_COOKIE}=${token}; Path=${path}; Max-Age=86400; HttpOnly; SameSite=Lax${secure ? "; Secure" : ""}`);
  return token;
}

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

  const secure = new URL(charges.paymentBaseUrl).protocol === "https:";
  scope.post<LinkPost>(`${basePath}/l/:id`, ACTING, async (req, reply) => {
    const email = String(req.body?.email ?? "");
    const quantity = req.body?.quantity === undefined ? undefined : String(req.body.quantity);
    try {
      await options.rateLimiter.consume(`${req.clientAddress}:${req.params.id}`, "linkCharges");
      const sessionToken = linkSession(req, reply, `${basePath}/l/${encodeURIComponent(req.params.id)}`, secure);
      return backToPage(reply, (await chargeFromPaymentLink(prisma, req.params.id, { email, quantity }, charges, { sessionToken })).id);
    } catch (e) {
      // A refused email or quantity: the page again, saying why, with what was typed.
      if (!(e instanceof AppError) || (e.param !== "email" && e.param !== "quantity")) return failure(req, reply, e);
      const { link, merchantName } = await activePaymentLink(prisma, req.params.id);
      const error = e.param === "email" ? "Enter your email address, such as you@example.com." : `Choose a quantity from 1 to ${link.quantityMax ?? 1}.`;
      return html(reply, 400, renderPaymentLinkPage(link, merchantName, basePath, { email, quantity, error }));
    }
  });
}
