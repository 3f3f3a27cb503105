// `Invoice`: a bill of line items to a customer, paid through charges from its hosted page, like
// REST's invoices. Rules live in domain/invoices.ts.
import {
  amountDue,
  countInvoices,
  createInvoice,
  deleteInvoice,
  finalizeInvoice,
  getInvoice,
  publishedUrl,
  INVOICE_STATUSES,
  invoiceLines,
  listInvoices,
  markInvoiceUncollectible,
  updateInvoice,
  voidInvoice,
} from "../../domain/invoices.js";
import type { Metadata } from "../../domain/metadata.js";
import { formatAmount } from "../../domain/money.js";
import { CHARGE_ORDER } from "../../domain/charges.js";
import { builder } from "../builder.js";
import { connectionOf, countedConnection, pageRequest } from "../connection.js";

const InvoiceStatus = builder.enumType("InvoiceStatus", {
  description: "DRAFT → OPEN (finalize) → PAID; OPEN → VOID | UNCOLLECTIBLE; an UNCOLLECTIBLE invoice can still be paid or voided.",
  values: INVOICE_STATUSES,
});

type Line = ReturnType<typeof invoiceLines>[number];

const InvoiceLineItem = builder.objectRef<Line>("InvoiceLineItem").implement({
  fields: (t) => ({
    description: t.exposeString("description"),
    quantity: t.exposeInt("quantity"),
    unitAmount: t.exposeString("unitAmount", { description: "USDC." }),
    amount: t.exposeString("amount", { description: "quantity × unitAmount." }),
  }),
});

const iso = (d: Date | null) => d?.toISOString() ?? null;

const Invoice = builder.prismaNode("Invoice", {
  id: { field: "id" },
  findUnique: (id, ctx) => ({ id, ...ctx.scope() }),
  fields: (t) => ({
    livemode: t.exposeBoolean("livemode"),
    number: t.exposeString("number", { nullable: true, description: "INV-000001, per merchant and mode; given at finalization." }),
    status: t.field({ type: InvoiceStatus, resolve: (i) => i.status }),
    customer: t.relation("customer", { nullable: true }),
    currency: t.exposeString("currency"),
    lineItems: t.field({ type: [InvoiceLineItem], resolve: (i) => invoiceLines(i) }),
    subtotal: t.string({ resolve: (i) => formatAmount(i.total) }),
    total: t.string({ resolve: (i) => formatAmount(i.total) }),
    amountPaid: t.string({ description: "Confirmed money of the charges made to pay it.", resolve: (i) => formatAmount(i.amountPaid) }),
    amountDue: t.string({ description: "The total less amountPaid (the total while DRAFT).", resolve: (i) => formatAmount(amountDue(i)) }),
    dueDate: t.string({ nullable: true, resolve: (i) => iso(i.dueDate) }),
    memo: t.exposeString("memo", { nullable: true }),
    metadata: t.field({ type: "Metadata", nullable: true, resolve: (i) => i.metadata as Metadata | null }),
    hostedInvoiceUrl: t.string({
      nullable: true,
      description: "Where the customer sees and pays it; from finalization on.",
      resolve: (i, _args, ctx) => publishedUrl(i, ctx.charges),
    }),
    pdfUrl: t.string({
      nullable: true,
      description: "The PDF the hosted page links; from finalization on.",
      resolve: (i, _args, ctx) => {
        const url = publishedUrl(i, ctx.charges);
        return url && `${url}/pdf`;
      },
    }),
    charges: t.relation("charges", { description: "The charges made to pay it, newest first.", query: { orderBy: CHARGE_ORDER } }),
    createdAt: t.string({ resolve: (i) => i.createdAt.toISOString() }),
    finalizedAt: t.string({ nullable: true, resolve: (i) => iso(i.finalizedAt) }),
    paidAt: t.string({ nullable: true, resolve: (i) => iso(i.paidAt) }),
    voidedAt: t.string({ nullable: true, resolve: (i) => iso(i.voidedAt) }),
    markedUncollectibleAt: t.string({ nullable: true, resolve: (i) => iso(i.markedUncollectibleAt) }),
  }),
});

const DeletedInvoice = builder.objectRef<{ id: string }>("DeletedInvoice").implement({
  fields: (t) => ({
    id: t.exposeID("id"),
    deleted: t.boolean({ resolve: () => true }),
  }),
});

const InvoiceLineItemInput = builder.inputType("InvoiceLineItemInput", {
  fields: (t) => ({
    description: t.string({ required: true }),
    quantity: t.int({ required: true, description: "1 to 10000." }),
    unitAmount: t.string({ required: true, description: 'USDC, e.g. "5.00".' }),
  }),
});

const invoiceFields = (t: Parameters<Parameters<typeof builder.inputType>[1]["fields"]>[0]) => ({
  dueDate: t.string({ description: "An ISO 8601 date (the end of that day, UTC) or date-time with offset." }),
  memo: t.string(),
  metadata: t.field({ type: "Metadata", description: "Merged into the existing metadata; a key set to null is removed." }),
});

const CreateInvoiceInput = builder.inputType("CreateInvoiceInput", {
  fields: (t) => ({
    customerId: t.id({ required: true }),
    lineItems: t.field({ type: [InvoiceLineItemInput], required: true, description: "1 to 100 lines." }),
    ...invoiceFields(t),
  }),
});

const UpdateInvoiceInput = builder.inputType("UpdateInvoiceInput", {
  fields: (t) => ({
    customerId: t.id(),
    lineItems: t.field({ type: [InvoiceLineItemInput], description: "Replaces all the lines." }),
    ...invoiceFields(t),
  }),
});

builder.queryFields((t) => ({
  invoices: t.connection(
    {
      type: Invoice,
      description: "Invoices, newest first.",
      args: { status: t.arg({ type: InvoiceStatus }), customerId: t.arg.id() },
      resolve: async (_root, args, ctx) => {
        const scope = ctx.scope();
        const filters = { status: args.status ?? undefined, customerId: args.customerId ?? undefined };
        const page = await listInvoices(ctx.prisma, scope, { ...pageRequest(args), ...filters });
        return connectionOf(page, args, () => countInvoices(ctx.prisma, scope, filters));
      },
    },
    countedConnection("Invoices matching the filters."),
  ),
  invoice: t.prismaField({
    type: "Invoice",
    args: { id: t.arg.id({ required: true }) },
    resolve: (_query, _root, { id }, ctx) => getInvoice(ctx.prisma, ctx.scope(), id),
  }),
}));

builder.prismaObjectField("Customer", "invoices", (t) =>
  t.relatedConnection("invoices", {
    cursor: "id",
    totalCount: true,
    defaultSize: 10,
    maxSize: 100,
    description: "The customer's invoices, newest first.",
    query: () => ({ orderBy: [{ createdAt: "desc" }, { id: "desc" }] }),
  }),
);

builder.prismaObjectField("Charge", "invoice", (t) => t.relation("invoice", { nullable: true, description: "The invoice this charge pays, if any." }));

const step = (name: string, run: typeof voidInvoice) =>
  builder.mutationField(name, (t) =>
    t.prismaField({
      type: "Invoice",
      args: { id: t.arg.id({ required: true }) },
      resolve: (_q, _r, { id }, ctx) => run(ctx.prisma, ctx.scope(), id, ctx.charges),
    }),
  );

builder.mutationFields((t) => ({
  createInvoice: t.prismaField({
    type: "Invoice",
    description: "Drafts an invoice for a customer.",
    args: { input: t.arg({ type: CreateInvoiceInput, required: true }) },
    resolve: (_query, _root, { input }, ctx) =>
      createInvoice(ctx.prisma, ctx.scope(), { ...input, lineItems: input.lineItems.map((l) => ({ ...l })) }, ctx.charges),
  }),
  updateInvoice: t.prismaField({
    type: "Invoice",
    description: "Changes a DRAFT invoice.",
    args: { id: t.arg.id({ required: true }), input: t.arg({ type: UpdateInvoiceInput, required: true }) },
    resolve: (_query, _root, { id, input }, ctx) =>
      updateInvoice(ctx.prisma, ctx.scope(), id, { ...input, ...(input.lineItems && { lineItems: input.lineItems.map((l) => ({ ...l })) }) }, ctx.charges),
  }),
  deleteInvoice: t.field({
    type: DeletedInvoice,
    description: "Deletes a DRAFT invoice.",
    args: { id: t.arg.id({ required: true }) },
    resolve: async (_root, { id }, ctx) => {
      await deleteInvoice(ctx.prisma, ctx.scope(), id, ctx.charges);
      return { id };
    },
  }),
}));

step("finalizeInvoice", finalizeInvoice);
step("voidInvoice", voidInvoice);
step("markInvoiceUncollectible", markInvoiceUncollectible);
