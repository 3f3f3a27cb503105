// PDF downloads (an invoice's, over REST and from its hosted page): one way to send them.
import type { FastifyReply } from "fastify";
import type { InvoiceView } from "../domain/invoices.js";

/** Answers with an invoice's PDF, named after its number; never cached, as it says what is paid. */
export function sendPdf(reply: FastifyReply, invoice: Pick<InvoiceView["invoice"], "id" | "number">, pdf: Buffer): FastifyReply {
  return reply
    .type("application/pdf")
    .header("Content-Disposition", `inline; filename="${invoice.number ?? invoice.id}.pdf"`)
    .header("Cache-Control", "no-store")
    .send(pdf);
}
