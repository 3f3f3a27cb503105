// `Invoice`: a bill of line items to a customer, paid through charges from its hosted page, like
// REST's invoices. Rules live in domain/invoices.ts.
import { describe } from "../../domain/describe.js";
import {
  amountDue,
  countInvoices,
  createInvoice,
  customersInvoices,
  subscriptionsInvoices,
  deleteInvoice,
  getInvoice,
  publishedUrl,
  BILLING_REASONS,
  INVOICE_STATUSES,
  invoiceLines,
  listInvoices,
  markInvoiceUncollectible,
  updateInvoice,
  VOID_RULE,
  voidInvoice,
  InvoiceResource,
} from "../../domain/invoices.js";
import { finalizeInvoice, sendInvoice } from "../../domain/invoice-emails.js";
import { createSchema, filterSchema, listSchema, updateSchema } from "../../domain/invoice-requests.js";
import { storedMetadata } from "../../domain/metadata.js";
import { CHARGE_ORDER } from "../../domain/charges/list.js";
import { parseInput } from "../../domain/validation.js";
import type { Prisma as P } from "../../generated/prisma/client.js";
import { builder } from "../builder.js";
import { connectionOf, countedConnection, pageEnd, pageRequest, relatedConnection } from "../connection.js";

const STATUS_DESCRIPTIONS: Record<(typeof INVOICE_STATUSES)[number], string> = {
  DRAFT: "Being written: it can be changed or deleted, and no one can pay it yet.",
  OPEN: "Finalized and numbered: the customer can pay it on its hosted page.",
  PAID: "Paid in full.",
  VOID: "Cancelled after finalization: it can no longer be paid.",
  UNCOLLECTIBLE: "Written off as not expected to be paid; it can still be paid or voided.",
};

const InvoiceStatus = builder.enumType("InvoiceStatus", {
  description: "DRAFT → OPEN (finalize) → PAID; OPEN → VOID | UNCOLLECTIBLE; an UNCOLLECTIBLE invoice can still be paid or voided.",
  values: Object.fromEntries(INVOICE_STATUSES.map((s) => [s, { description: STATUS_DESCRIPTIONS[s] }])),
});

// Upper case like every GraphQL enum; the values stay the domain's (and REST's) lower-case ones.
const BillingReason = builder.enumType("BillingReason", {
  description: "Why a subscription's invoice was made.",
  values: {
    SUBSCRIPTION_CREATE: { value: "subscription_create", description: "Its first period, paid at checkout (or at the trial's end)." },
    SUBSCRIPTION_CYCLE: { value: "subscription_cycle", description: "A renewal." },
  } as const,
});

type Line = ReturnType<typeof invoiceLines>[number];

const InvoiceLineItem = builder.objectRef<Line>("InvoiceLineItem").implement({
  description: "One line of an invoice.",
  fields: (t) => ({
    description: t.exposeString("description", { description: describe(InvoiceResource.shape.lineItems.element, "description") }),
    quantity: t.exposeInt("quantity", { description: describe(InvoiceResource.shape.lineItems.element, "quantity") }),
    unitAmount: t.expose("unitAmount", { type: "Amount", description: describe(InvoiceResource.shape.lineItems.element, "unitAmount") }),
    amount: t.expose("amount", { type: "Amount", description: describe(InvoiceResource.shape.lineItems.element, "amount") }),
  }),
});

const Invoice = builder.prismaNode("Invoice", {
  description: "A bill of line items to a customer, paid through charges from its hosted page.",
  id: { field: "id" },
  findUnique: (id, ctx) => ({ id, ...ctx.scope() }),
  fields: (t) => ({
    livemode: t.exposeBoolean("livemode", { description: describe(InvoiceResource, "livemode") }),
    number: t.exposeString("number", { nullable: true, description: describe(InvoiceResource, "number") }),
    status: t.field({ type: InvoiceStatus, description: describe(InvoiceResource, "status"), resolve: (i) => i.status }),
    customer: t.relation("customer", { nullable: true, description: "The customer billed; null once that customer is deleted." }),
    currency: t.exposeString("currency", { description: describe(InvoiceResource, "currency") }),
    lineItems: t.field({ type: [InvoiceLineItem], description: describe(InvoiceResource, "lineItems"), resolve: (i) => invoiceLines(i) }),
    subtotal: t.field({ type: "Amount", description: describe(InvoiceResource, "subtotal"), resolve: (i) => i.total }),
    total: t.field({
      type: "Amount",
      description: describe(InvoiceResource, "total"),
      resolve: (i) => i.total,
    }),
    amountPaid: t.field({ type: "Amount", description: describe(InvoiceResource, "amountPaid"), resolve: (i) => i.amountPaid }),
    amountDue: t.field({ type: "Amount", description: describe(InvoiceResource, "amountDue"), resolve: (i) => amountDue(i) }),
    dueDate: t.field({ type: "DateTime", nullable: true, description: describe(InvoiceResource, "dueDate"), resolve: (i) => i.dueDate }),
    memo: t.exposeString("memo", { nullable: true, description: describe(InvoiceResource, "memo") }),
    metadata: t.field({
      type: "Metadata",
      nullable: true,
      description: describe(InvoiceResource, "metadata"),
      resolve: (i) => storedMetadata(i.metadata, "invoices.metadata"),
    }),
    hostedInvoiceUrl: t.string({
      nullable: true,
      description: describe(InvoiceResource, "hostedInvoiceUrl"),
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
    createdAt: t.field({ type: "DateTime", description: describe(InvoiceResource, "createdAt"), resolve: (i) => i.createdAt }),
    finalizedAt: t.field({ type: "DateTime", nullable: true, description: describe(InvoiceResource, "finalizedAt"), resolve: (i) => i.finalizedAt }),
    paidAt: t.field({ type: "DateTime", nullable: true, description: describe(InvoiceResource, "paidAt"), resolve: (i) => i.paidAt }),
    voidedAt: t.field({ type: "DateTime", nullable: true, description: describe(InvoiceResource, "voidedAt"), resolve: (i) => i.voidedAt }),
    markedUncollectibleAt: t.field({
      type: "DateTime",
      nullable: true,
      description: describe(InvoiceResource, "markedUncollectibleAt"),
      resolve: (i) => i.markedUncollectibleAt,
    }),
    subscriptionId: t.exposeString("subscriptionId", { nullable: true, description: describe(InvoiceResource, "subscriptionId") }),
    billingReason: t.field({
      type: BillingReason,
      nullable: true,
      description: describe(InvoiceResource, "billingReason"),
      resolve: (i) => i.billingReason as (typeof BILLING_REASONS)[number] | null,
    }),
  }),
});

const DeletedInvoice = builder.objectRef<{ id: string }>("DeletedInvoice").implement({
  description: "What is left of a deleted draft invoice: its id.",
  fields: (t) => ({
    id: t.exposeID("id", { description: "The deleted invoice's id." }),
    deleted: t.boolean({ description: "Always true.", resolve: () => true }),
  }),
});

const InvoiceLineItemInput = builder.inputType("InvoiceLineItemInput", {
  description: "One line of an invoice.",
  fields: (t) => ({
    description: t.string({ required: true, description: "What the line bills." }),
    quantity: t.int({ required: true, description: "1 to 10000." }),
    unitAmount: t.string({ required: true, description: 'USDC, e.g. "5.00".' }),
  }),
});

const invoiceFields = (t: Parameters<Parameters<typeof builder.inputType>[1]["fields"]>[0]) => ({
  dueDate: t.string({ description: "An ISO 8601 date (the end of that day, UTC) or date-time with offset." }),
  memo: t.string({ description: "A note shown on the invoice." }),
  metadata: t.field({ type: "Metadata", description: "Merged into the existing metadata; a key set to null is removed." }),
});

const CreateInvoiceInput = builder.inputType("CreateInvoiceInput", {
  description: "A new draft invoice.",
  fields: (t) => ({
    customerId: t.id({ required: true, description: "The customer billed (cus_…)." }),
    lineItems: t.field({ type: [InvoiceLineItemInput], required: true, description: "1 to 100 lines." }),
    ...invoiceFields(t),
  }),
});

const UpdateInvoiceInput = builder.inputType("UpdateInvoiceInput", {
  description: "The fields of a draft invoice to change; an absent one stays as it is.",
  fields: (t) => ({
    customerId: t.id({ description: "The customer billed (cus_…)." }),
    lineItems: t.field({ type: [InvoiceLineItemInput], description: "Replaces all the lines." }),
    ...invoiceFields(t),
  }),
});

builder.queryFields((t) => ({
  invoices: t.connection(
    {
      type: Invoice,
      description: "Invoices, newest first.",
      args: {
        status: t.arg({ type: InvoiceStatus, description: "Only invoices with this status." }),
        customerId: t.arg.id({ description: "Only this customer's invoices." }),
        subscriptionId: t.arg.id({ description: "Only this subscription's invoices." }),
      },
      resolve: async (_root, args, ctx) => {
        const scope = ctx.scope();
        const filters = { status: args.status ?? undefined, customerId: args.customerId ?? undefined, subscriptionId: args.subscriptionId ?? undefined };
        const page = await listInvoices(ctx.prisma, scope, parseInput(listSchema, { ...pageRequest(args), ...filters }), pageEnd(args));
        return connectionOf(page, args, () => countInvoices(ctx.prisma, scope, parseInput(filterSchema, filters)));
      },
    },
    countedConnection("Invoices matching the filters."),
  ),
  invoice: t.prismaField({
    type: "Invoice",
    description: "An invoice by id; resource_missing when the key's merchant and mode have none.",
    args: { id: t.arg.id({ required: true, description: "The invoice's id (inv_…)." }) },
    resolve: (query, _root, { id }, ctx) => getInvoice(ctx.prisma, ctx.scope(), id, query),
  }),
}));

builder.prismaObjectField("Customer", "invoices", (t) =>
  t.connection(
    {
      type: Invoice,
      description: "The customer's invoices, newest first.",
      resolve: (customer, args, ctx, info) =>
        relatedConnection(ctx, info, customer.id, args, "Invoice", (include: P.InvoiceInclude | undefined) =>
          customersInvoices(ctx.prisma, ctx.scope(), include),
        ),
    },
    countedConnection("The customer's invoices."),
  ),
);

builder.prismaObjectField("Subscription", "invoices", (t) =>
  t.connection(
    {
      type: Invoice,
      description: "Its invoices, one per period, newest first.",
      resolve: (sub, args, ctx, info) =>
        relatedConnection(ctx, info, sub.id, args, "Invoice", (include: P.InvoiceInclude | undefined) =>
          subscriptionsInvoices(ctx.prisma, ctx.scope(), include),
        ),
    },
    countedConnection("Its invoices."),
  ),
);

builder.prismaObjectField("Charge", "invoice", (t) => t.relation("invoice", { nullable: true, description: "The invoice this charge pays, if any." }));

const step = (name: string, description: string, run: typeof voidInvoice) =>
  builder.mutationField(name, (t) =>
    t.prismaField({
      type: "Invoice",
      description,
      args: { id: t.arg.id({ required: true, description: "The invoice's id (inv_…)." }) },
      resolve: (_q, _r, { id }, ctx) => run(ctx.prisma, ctx.scope(), id, ctx.charges),
    }),
  );

builder.mutationFields((t) => ({
  createInvoice: t.prismaField({
    type: "Invoice",
    description:
      "Drafts an invoice for a customer. A live invoice needs a live settlement wallet (settlement_wallet_missing) and an enabled live chain (chain_unsupported, naming the operator's setting), also when it is finalized.",
    args: { input: t.arg({ type: CreateInvoiceInput, required: true, description: "The invoice." }) },
    resolve: (_query, _root, { input }, ctx) =>
      createInvoice(ctx.prisma, ctx.scope(), parseInput(createSchema, { ...input, lineItems: input.lineItems.map((l) => ({ ...l })) }), ctx.charges),
  }),
  updateInvoice: t.prismaField({
    type: "Invoice",
    description: "Changes a DRAFT invoice.",
    args: {
      id: t.arg.id({ required: true, description: "The invoice's id (inv_…)." }),
      input: t.arg({ type: UpdateInvoiceInput, required: true, description: "The changes." }),
    },
    resolve: (_query, _root, { id, input }, ctx) =>
      updateInvoice(
        ctx.prisma,
        ctx.scope(),
        id,
        parseInput(updateSchema, { ...input, ...(input.lineItems && { lineItems: input.lineItems.map((l) => ({ ...l })) }) }),
        ctx.charges,
      ),
  }),
  deleteInvoice: t.field({
    type: DeletedInvoice,
    description: "Deletes a DRAFT invoice.",
    args: { id: t.arg.id({ required: true, description: "The invoice's id (inv_…)." }) },
    resolve: async (_root, { id }, ctx) => {
      await deleteInvoice(ctx.prisma, ctx.scope(), id, ctx.charges);
      return { id };
    },
  }),
}));

step("finalizeInvoice", "Finalizes a DRAFT invoice: it gets its number and hosted page, and becomes OPEN.", finalizeInvoice);
step("voidInvoice", VOID_RULE, voidInvoice);
step(
  "sendInvoice",
  "Emails a finalized invoice to its customer now, with its PDF attached (invoice_not_sendable for a DRAFT or a customer without email).",
  sendInvoice,
);
step("markInvoiceUncollectible", "Marks an OPEN invoice as not expected to be paid; it can still be paid or voided.", markInvoiceUncollectible);
