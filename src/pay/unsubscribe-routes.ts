// The receipts' unsubscribe link (List-Unsubscribe): the signed token in the link is the only
// credential. GET shows what the link does and a button; POST records it (the button, or a mail
// client's one-click unsubscribe, RFC 8058). A GET never records anything: mail scanners open links.
import type { FastifyInstance } from "fastify";
import { readUnsubscribeToken, type Unsubscription, unsubscribeFromReceipts } from "../domain/buyer-emails.js";
import { AppError } from "../domain/errors.js";
import { ACTING, html, OPEN, type PayContext } from "./context.js";
import { document } from "./page.js";
import { escapeHtml as h } from "./qr.js";

type Unsubscribe = { Querystring: { token?: string }; Body: Record<string, string> | undefined };

/** Registers the unsubscribe page and its one-click POST. */
export function unsubscribeRoutes(scope: FastifyInstance, { options, basePath, failure }: PayContext): void {
  const { prisma } = options;
  const page = (title: string, body: string) => document(title, `<header><h1>${h(title)}</h1></header>\n${body}`, null, basePath);
  const invalid = () =>
    page("Unsubscribe", '<p class="status error" role="alert">This unsubscribe link is not valid. Use the link from your latest receipt.</p>');

  scope.get<Unsubscribe>(`${basePath}/unsubscribe`, OPEN, async (req, reply) => {
    const token = String(req.query.token ?? "");
    let who: Unsubscription;
    try {
      who = await readUnsubscribeToken(prisma, token);
    } catch (e) {
      return e instanceof AppError && e.code === "resource_missing" ? html(reply, 404, invalid()) : failure(req, reply, e);
    }
    const body = [
      `<p>Stop receipts from ${h(who.merchantName)} to ${h(who.email)}?</p>`,
      `<form method="post" action="${h(basePath)}/unsubscribe?token=${h(encodeURIComponent(token))}">`,
      `<p><button type="submit" name="List-Unsubscribe" value="One-Click">Unsubscribe</button></p></form>`,
      `<p class="expires">Invoices and refunds from ${h(who.merchantName)} still reach you.</p>`,
    ].join("\n");
    return html(reply, 200, page("Unsubscribe from receipts", body));
  });

  scope.post<Unsubscribe>(`${basePath}/unsubscribe`, ACTING, async (req, reply) => {
    try {
      const who = await unsubscribeFromReceipts(prisma, String(req.query.token ?? ""));
      return html(reply, 200, page("Unsubscribed", `<p role="status">${h(who.email)} will get no more receipts from ${h(who.merchantName)}.</p>`));
    } catch (e) {
      return e instanceof AppError && e.code === "resource_missing" ? html(reply, 404, invalid()) : failure(req, reply, e);
    }
  });
}
