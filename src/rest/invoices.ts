// REST invoices (.docs/invoices.md "Invoices"). Rules live in domain/invoices.ts; the PDF is the hosted page's.
import type { FastifyInstance } from "fastify";
import {
  createInvoice,
  deleteInvoice,
  getInvoice,
  InvoiceResource,
  invoiceResource,
  invoiceView,
  listInvoices,
  markInvoiceUncollectible,
  updateInvoice,
  VOID_RULE,
  voidInvoice,
} from "../domain/invoices.js";
import { invoicePdf } from "../domain/invoice-document.js";
import { createSchema, listSchema, updateSchema } from "../domain/invoice-requests.js";
import { finalizeInvoice, sendInvoice } from "../domain/invoice-emails.js";
import { parseInput } from "../domain/validation.js";
import { sendPdf } from "../http/pdf.js";
import { listOf } from "./openapi.js";
import { DeletedInvoice } from "./schemas/components.js";
import { type RestDeps, scopeOf } from "./plumbing.js";

const tag = "Invoices";

type IdParams = { Params: { id: string } };

/** Registers the invoice endpoints. */
export function invoiceRoutes(app: FastifyInstance, deps: RestDeps): void {
  recordRoutes(app, deps);
  stepRoutes(app, deps);
  pdfRoute(app, deps);
}

/** The invoice as REST shows it, its links made with `settings`. */
const shapeWith = (settings: RestDeps["charges"]) => (i: Parameters<typeof invoiceResource>[0]) => invoiceResource(i, settings);

/** Creating, listing, reading, changing and deleting invoices. */
function recordRoutes(app: FastifyInstance, { prisma, charges: settings }: RestDeps): void {
  const shape = shapeWith(settings);

  const create = {
    group: "create",
    doc: {
      operationId: "createInvoice",
      summary: "Draft an invoice for a customer: line items (1–100), due date, memo",
      description:
        "Drafts an invoice (DRAFT) for a customer: 1–100 line items, an optional due date and memo. A live invoice needs a live settlement wallet (400 `settlement_wallet_missing`) and an enabled live chain (400 `chain_unsupported`, naming the operator's setting). Sends `invoice.created`.",
      tag,
      body: createSchema,
      example: { customerId: "cus_…", lineItems: [{ description: "Consulting, November", quantity: 10, unitAmount: "120.00" }], dueDate: "2026-12-31" },
      ok: { 201: InvoiceResource },
      errors: ["settlement_wallet_missing", "chain_unsupported"],
    },
  } as const;
  app.post("/v1/invoices", { config: create }, async (req, reply) => {
    return reply.code(201).send(shape(await createInvoice(prisma, scopeOf(req), parseInput(createSchema, req.body ?? {}), settings)));
  });

  const list = {
    group: "list",
    doc: {
      operationId: "listInvoices",
      summary: "List invoices, newest first (status, customerId)",
      description: "Newest first, paged by cursor; filtered by `status` or `customerId`.",
      tag,
      query: listSchema,
      ok: { 200: listOf(InvoiceResource) },
    },
  } as const;
  app.get("/v1/invoices", { config: list }, async (req) => {
    const { data, hasMore } = await listInvoices(prisma, scopeOf(req), parseInput(listSchema, req.query));
    return { object: "list", data: data.map(shape), hasMore };
  });

  const retrieve = {
    group: "read",
    doc: {
      operationId: "getInvoice",
      summary: "Retrieve an invoice",
      description: "The invoice with its totals: `amountPaid` and `amountDue` follow the chain.",
      tag,
      ok: { 200: InvoiceResource },
    },
  } as const;
  app.get<IdParams>("/v1/invoices/:id", { config: retrieve }, async (req) => shape(await getInvoice(prisma, scopeOf(req), req.params.id)));

  const update = {
    group: "create",
    doc: {
      operationId: "updateInvoice",
      summary: "Change a DRAFT invoice (lineItems replaces all the lines)",
      description: "Changes a DRAFT; `lineItems` replaces every line. Sends `invoice.updated`.",
      tag,
      body: updateSchema,
      example: { memo: "Thank you for your business." },
      ok: { 200: InvoiceResource },
      errors: ["invoice_not_editable"],
    },
  } as const;
  app.patch<IdParams>("/v1/invoices/:id", { config: update }, async (req) =>
    shape(await updateInvoice(prisma, scopeOf(req), req.params.id, parseInput(updateSchema, req.body ?? {}), settings)),
  );

  const remove = {
    group: "create",
    doc: {
      operationId: "deleteInvoice",
      summary: "Delete a DRAFT invoice",
      description: "Deletes a DRAFT. Sends `invoice.deleted`.",
      tag,
      ok: { 200: DeletedInvoice },
      errors: ["invoice_not_editable"],
    },
  } as const;
  app.delete<IdParams>("/v1/invoices/:id", { config: remove }, async (req) => {
    await deleteInvoice(prisma, scopeOf(req), req.params.id, settings);
    return { id: req.params.id, object: "invoice", deleted: true };
  });
}

const STEP_ERRORS = {
  finalize: ["invoice_not_editable", "settlement_wallet_missing", "chain_unsupported"],
  void: ["invoice_not_editable"],
  mark_uncollectible: ["invoice_not_editable"],
  send: ["invoice_not_sendable", "chain_unsupported"],
} as const;

/** The lifecycle steps: finalize, void, mark uncollectible; and sending it by email. */
function stepRoutes(app: FastifyInstance, { prisma, charges: settings }: RestDeps): void {
  const shape = shapeWith(settings);
  const steps = [
    [
      "finalize",
      "finalizeInvoice",
      "Finalize a DRAFT: it gets its number and hosted page, and can be paid",
      "Gives the DRAFT the next number of your account in its mode (INV-000001, INV-000002, …: no gaps, no duplicates), freezes the customer's billing details onto it, and opens its hosted page (`hostedInvoiceUrl`), where the customer pays it, in one go or in parts: OPEN, then PAID when nothing is due. A live invoice needs a live settlement wallet (400 `settlement_wallet_missing`) and an enabled live chain (400 `chain_unsupported`, naming the operator's setting). Sends `invoice.finalized`.",
      finalizeInvoice,
    ],
    ["void", "voidInvoice", "Void an invoice nothing was paid on; its open charge is cancelled", `${VOID_RULE} Sends \`invoice.voided\`.`, voidInvoice],
    [
      "mark_uncollectible",
      "markInvoiceUncollectible",
      "Mark an OPEN invoice uncollectible (it can still be paid)",
      "For an OPEN invoice you no longer expect to be paid: UNCOLLECTIBLE, though a payment still settles it. Sends `invoice.marked_uncollectible`.",
      markInvoiceUncollectible,
    ],
    [
      "send",
      "sendInvoice",
      "Email a finalized invoice to its customer, with its PDF attached",
      "Emails the invoice to its customer's email now, in your name (Reply-To: your support email when set): the amount due, number, due date and a link to its hosted page, with the PDF attached. A DRAFT, or an invoice whose customer is gone, is 409 `invoice_not_sendable`. With the setting `emailInvoices` on, finalizing sends it already. The email is in the outbox (`GET /v1/emails`) once this returns. A live invoice is not sent while the service has no enabled live chain (400 `chain_unsupported`).",
      sendInvoice,
    ],
  ] as const;
  for (const [path, operationId, summary, description, step] of steps) {
    const config = {
      group: "create",
      doc: {
        operationId,
        summary,
        description,
        tag,
        ok: { 200: InvoiceResource },
        errors: STEP_ERRORS[path],
      },
    } as const;
    app.post<IdParams>(`/v1/invoices/:id/${path}`, { config }, async (req) => shape(await step(prisma, scopeOf(req), req.params.id, settings)));
  }
}

/** The invoice's PDF, the file its hosted page links. */
function pdfRoute(app: FastifyInstance, { prisma, charges: settings }: RestDeps): void {
  const pdf = {
    group: "read",
    doc: {
      operationId: "getInvoicePdf",
      summary: "The invoice as a PDF (the same as its hosted page links)",
      description: "The invoice as a PDF: the same file its hosted page links.",
      tag,
      ok: { 200: InvoiceResource },
      file: { type: "application/pdf", example: "%PDF-1.7 …" },
    },
  } as const;
  app.get<IdParams>("/v1/invoices/:id/pdf", { config: pdf }, async (req, reply) => {
    const view = await invoiceView(prisma, scopeOf(req), req.params.id);
    return sendPdf(reply, view.invoice, await invoicePdf(view, settings));
  });
}
