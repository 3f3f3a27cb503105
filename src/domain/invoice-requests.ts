// The request contract of invoices: the bodies of POST and PATCH /v1/invoices (GraphQL's createInvoice
// and updateInvoice inputs) and the query of GET /v1/invoices. The doors parse a request with these
// (parseInput) and hand the domain the typed result.
import { z } from "zod";
import { INVOICE_STATUSES } from "./invoice-lifecycle.js";
import { metadataInput } from "./metadata.js";
import { pageParams } from "./paging.js";
import { amountInput, integerField } from "./validation.js";

const lineItemInput = z.strictObject(
  {
    description: z
      .string()
      .max(500)
      .refine((s) => s.trim().length > 0, "must not be blank"),
    quantity: integerField(1, 10_000),
    unitAmount: amountInput("5.00"),
  },
  { error: "must be an object with description, quantity and unitAmount" },
);

const lineItemsInput = z
  .array(lineItemInput, { error: "must be an array of line items" })
  .min(1, "must have 1 to 100 items")
  .max(100, "must have 1 to 100 items");

/** A due date: an ISO 8601 date (`2026-12-31`, the end of that day in UTC) or date-time with offset. */
const dueDateInput = z
  .union([z.iso.date(), z.iso.datetime({ offset: true })], { error: "must be an ISO 8601 date (2026-12-31) or date-time with offset" })
  .transform((s) => new Date(s.length === 10 ? `${s}T23:59:59.999Z` : s))
  .nullable();

const memoInput = z.string().max(5000).nullable();

/** The body of POST /v1/invoices (and the createInvoice mutation's input). */
export const createSchema = z.strictObject(
  {
    customerId: z.string().min(1).max(100),
    lineItems: lineItemsInput,
    dueDate: dueDateInput.optional(),
    memo: memoInput.optional(),
    metadata: metadataInput.optional(),
  },
  { error: "must be a JSON object" },
);

/** The body of PATCH /v1/invoices/:id: what it names changes; `lineItems` replaces all the lines. */
export const updateSchema = createSchema.partial();

/** The query of GET /v1/invoices: a keyset page and its filters (GraphQL's connection). */
export const listSchema = z.strictObject({
  ...pageParams,
  status: z.enum(INVOICE_STATUSES, { error: `must be one of ${INVOICE_STATUSES.join(", ")}` }).optional(),
  customerId: z.string().min(1).max(100).optional(),
  subscriptionId: z.string().min(1).max(100).optional(),
});

/** The list's filters alone: GraphQL's count. */
export const filterSchema = listSchema.pick({ status: true, customerId: true, subscriptionId: true });

/** An invoice to create, parsed (createSchema). */
export type InvoiceRequest = z.output<typeof createSchema>;
/** The changes to a draft, parsed (updateSchema). */
export type InvoiceUpdate = z.output<typeof updateSchema>;
/** The query of GET /v1/invoices, parsed (listSchema). */
export type InvoiceListQuery = z.output<typeof listSchema>;
/** The list's filters, parsed (filterSchema). */
export type InvoiceFilters = z.output<typeof filterSchema>;
/** The lines of a request, parsed. */
export type LineItemsRequest = InvoiceRequest["lineItems"];
