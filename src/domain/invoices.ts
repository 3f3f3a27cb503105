// Invoices (.docs/invoices.md "Invoices"): a bill of line items to a customer, paid through charges made from
// its hosted page. The invoice never holds money either: it counts the confirmed money of its charges.
// Its statuses and what moves them are domain/invoice-lifecycle.ts; this module reads and writes invoices.
//
// Invariants:
// - only a DRAFT changes its lines, customer, due date or memo, or is deleted;
// - a due date given by a caller (create, update) is not in the past, and a draft whose due date has
//   passed since is not finalized by a caller until it gets a new one (a subscription's period invoice,
//   due at its period's start, is issued by the billing loop and may be late by its own delay);
// - `number` is given once, at finalization, from a per-merchant-and-mode counter whose row stays
//   locked until the finalization commits: numbers have no gap and no duplicate;
// - `amountPaid` is the ledger's payments for it (domain/ledger.ts): money its charges received on
//   time, while it was not void, derived in the transaction that confirms it; money that reaches a
//   charge after the charge ended (cancelled by a void, expired, completed) is that charge's late
//   money, refundable, never the invoice's. The invoice is PAID exactly when amountPaid reaches the total;
// - at most one charge pays it at a time: a charge is made (or the open one reused) under the
//   invoice's row lock, so a second buyer waits for it, and a void that raced it starts over;
// - a void cancels the open charge, and is refused once money was paid or is on its way (mark it
//   uncollectible then);
// - a live invoice is made and issued only while the merchant has a live settlement wallet.
import { z } from "zod";
import type { Prisma } from "../db/client.js";
import { jsonOrNull } from "../db/json.js";
import type { Customer, Invoice, Prisma as P } from "../generated/prisma/client.js";
import { type Charge, CHARGE_COLUMNS } from "./charges/read.js";
import type { ChargeSettings } from "./charges/settings.js";
import { cancelLockedCharge } from "./charges/cancel.js";
import { expireDueCharges } from "./charges/expire.js";
import { insertCharge } from "./charges/create.js";
import { createSchema as chargeSchema } from "./charges/requests.js";
import { moneyOnItsWay } from "./charges/money-on-its-way.js";
import { type BusinessLogo, businessLogoOf, type SellerDetails, sellerDetailsOf } from "./business-details.js";
import { type PostalAddress, storedAddress } from "./postal-address.js";
import { AppError, invalidParam, notFound, unknownReference } from "./errors.js";
import { type NewEvent, recordEvents } from "./events.js";
import { newId } from "./ids.js";
import { amountDue, INVOICE_STATUSES, invoiceStep, reopens, settles } from "./invoice-lifecycle.js";
import type { InvoiceFilters, InvoiceListQuery, InvoiceRequest, InvoiceUpdate, LineItemsRequest } from "./invoice-requests.js";
import { jsonColumn } from "./json-columns.js";
import { MetadataShape, mergeMetadata, storedMetadata } from "./metadata.js";
import { formatAmount, parseAmount, toUnits } from "./money.js";
import { countsByParent, keysetPage, type Page, type PageEnd, pagesByParent, type Position, type RelatedRows, type Relation } from "./paging.js";
import { inScope, type Scope } from "./scope.js";
import { assertLiveChain, assertLiveReady } from "./live-chains.js";
import { assertLiveWallet } from "./settlement-wallets.js";
import { parseInput } from "./validation.js";

export type { Invoice };
// The doors find these here with the rest of the invoice (graphql/types/Invoice.ts, pay/invoice-page.ts).
export { amountDue, INVOICE_STATUSES, takesPayment } from "./invoice-lifecycle.js";

/** Why a subscription's invoice was made. */
export const BILLING_REASONS = ["subscription_create", "subscription_cycle"] as const;
export type BillingReason = (typeof BILLING_REASONS)[number];

/** How long the charge made from the hosted page waits for the buyer's money. */
const CHARGE_MINUTES = 60;

const LineItem = z.object({
  description: z.string().describe("What the line bills."),
  quantity: z.number().int().describe("How many units."),
  unitAmount: z.string().describe('USDC, e.g. "5.00".'),
  amount: z.string().describe("The line's total: quantity × unitAmount."),
});

/** The public JSON form of an invoice; also its events' data. */
export const InvoiceResource = z.object({
  id: z.string(),
  object: z.literal("invoice"),
  livemode: z.boolean().describe("True in live mode, false in test mode."),
  number: z.string().nullable().describe("INV-000001, per merchant and mode; given at finalization."),
  status: z.enum(INVOICE_STATUSES).describe("Where the invoice is in its lifecycle."),
  customerId: z.string().nullable(),
  currency: z.literal("USDC").describe('Always "USDC".'),
  lineItems: z.array(LineItem).describe("The lines, in order."),
  subtotal: z.string().describe("The lines' sum, USDC."),
  total: z.string().describe("What the invoice asks for, USDC (the subtotal: there are no taxes or discounts)."),
  amountPaid: z.string().describe("What its charges received on time, confirmed on chain (the ledger's payments for it)."),
  amountDue: z.string().describe("What is left to pay: the total less amountPaid (the total while DRAFT)."),
  dueDate: z.string().nullable().describe("When it is due, if you set a date."),
  memo: z.string().nullable().describe("A note shown on the invoice."),
  metadata: MetadataShape.nullable().describe("Your key-value pairs."),
  hostedInvoiceUrl: z.string().nullable().describe("The page where the customer sees and pays it; from finalization on."),
  createdAt: z.string().describe("When it was created."),
  finalizedAt: z.string().nullable().describe("When it became OPEN."),
  paidAt: z.string().nullable().describe("When it was paid in full."),
  voidedAt: z.string().nullable().describe("When it was voided."),
  markedUncollectibleAt: z.string().nullable().describe("When it was marked uncollectible."),
  subscriptionId: z.string().nullable().describe("The subscription whose period it bills; null for an invoice made by hand."),
  billingReason: z
    .enum(BILLING_REASONS)
    .nullable()
    .describe("Why a subscription's invoice was made: its first period (subscription_create) or a renewal (subscription_cycle)."),
});
export type InvoiceResource = z.infer<typeof InvoiceResource>;

/** A line as stored (invoices.line_items): amounts in base units, as decimal strings. */
const StoredLine = z.object({
  description: z.string(),
  quantity: z.number().int(),
  unitAmount: z.string().regex(/^\d+$/),
  amount: z.string().regex(/^\d+$/),
});
type StoredLine = z.infer<typeof StoredLine>;

/** An address frozen onto an invoice, read as any stored address is (domain/postal-address.ts). */
const FrozenAddress = z.unknown().transform((a): PostalAddress | null => storedAddress(a));

/** Who is billed, as the invoice shows it (invoices.customer_details, frozen at finalization). */
const BillingDetails = z.object({
  name: z.string(),
  email: z.string(),
  companyName: z.string().nullable(),
  taxId: z.string().nullable(),
  address: FrozenAddress,
});
export type BillingDetails = z.infer<typeof BillingDetails>;

/** The seller as frozen at finalization (invoices.seller_details). */
const FrozenSeller = z.object({ legalName: z.string().nullable(), address: FrozenAddress, taxId: z.string().nullable() });
const StoredSeller = FrozenSeller.nullable();
const StoredBillTo = BillingDetails.nullable();

/** Where hosted invoices live: `{paymentBaseUrl}/invoices/<id>`. */
export type InvoiceSettings = Pick<ChargeSettings, "paymentBaseUrl" | "chains">;

const StoredLines = z.array(StoredLine);
const lines = (i: Pick<Invoice, "lineItems">) => jsonColumn(StoredLines, i.lineItems, "invoices.line_items");

/** An invoice's lines as the API shows them: amounts as USDC decimal strings. */
export function invoiceLines(i: Pick<Invoice, "lineItems">): InvoiceResource["lineItems"] {
  return lines(i).map((l) => ({ ...l, unitAmount: formatAmount(BigInt(l.unitAmount)), amount: formatAmount(BigInt(l.amount)) }));
}

/** Shapes a stored invoice as the API shows it. */
export function invoiceResource(i: Invoice, settings: InvoiceSettings): InvoiceResource {
  const iso = (d: Date | null) => d?.toISOString() ?? null;
  return {
    id: i.id,
    object: "invoice",
    livemode: i.livemode,
    number: i.number,
    status: i.status,
    customerId: i.customerId,
    currency: "USDC",
    lineItems: invoiceLines(i),
    // No discounts or taxes yet: the subtotal is the total.
    subtotal: formatAmount(i.total),
    total: formatAmount(i.total),
    amountPaid: formatAmount(i.amountPaid),
    amountDue: formatAmount(amountDue(i)),
    dueDate: iso(i.dueDate),
    memo: i.memo,
    metadata: storedMetadata(i.metadata, "invoices.metadata"),
    hostedInvoiceUrl: publishedUrl(i, settings),
    createdAt: i.createdAt.toISOString(),
    finalizedAt: iso(i.finalizedAt),
    paidAt: iso(i.paidAt),
    voidedAt: iso(i.voidedAt),
    markedUncollectibleAt: iso(i.markedUncollectibleAt),
    subscriptionId: i.subscriptionId,
    billingReason: i.billingReason as BillingReason | null,
  };
}

/** The hosted page of an invoice that has one: from finalization on (a DRAFT has none). */
export function publishedUrl(i: Pick<Invoice, "id" | "status">, settings: InvoiceSettings): string | null {
  return i.status === "DRAFT" ? null : hostedInvoiceUrl(i, settings);
}

/** The invoice's hosted page. */
export function hostedInvoiceUrl(i: Pick<Invoice, "id">, settings: InvoiceSettings): string {
  return `${settings.paymentBaseUrl}/invoices/${i.id}`;
}

/** The lines as stored and their total; 400 naming the line for a bad amount or a total out of bounds. */
function priceLines(input: LineItemsRequest, settings: Pick<ChargeSettings, "amount">): { lines: StoredLine[]; total: bigint } {
  const priced = input.map((line, index) => {
    const unit = parseAmount(line.unitAmount);
    if (unit === null || unit <= 0n) {
      throw invalidParam(`lineItems[${index}].unitAmount`, 'Invalid unitAmount: must be a positive decimal string with at most 6 decimals, such as "5.00"');
    }
    const amount = unit * BigInt(line.quantity);
    return { description: line.description.trim(), quantity: line.quantity, unitAmount: unit.toString(), amount: amount.toString() };
  });
  const total = priced.reduce((sum, l) => sum + BigInt(l.amount), 0n);
  if (total < settings.amount.min || total > settings.amount.max) {
    throw invalidParam(
      "lineItems",
      `Invalid lineItems: the total ${formatAmount(total)} USDC must be between ${formatAmount(settings.amount.min)} and ${formatAmount(settings.amount.max)} USDC`,
    );
  }
  return { lines: priced, total };
}

async function assertCustomer(db: Prisma | P.TransactionClient, scope: Scope, customerId: string): Promise<void> {
  const found = await db.customer.findFirst({ where: { id: customerId, ...inScope(scope) }, select: { id: true } });
  if (!found) throw unknownReference("customer", customerId, "customerId");
}

/** Refuses a due date that has passed: an invoice asking to be paid by yesterday is a typo, not a term. */
function assertDueDateAhead(dueDate: Date | null | undefined, now: Date, id?: string): void {
  if (!dueDate || dueDate.getTime() >= now.getTime()) return;
  const day = dueDate.toISOString().slice(0, 10);
  throw invalidParam(
    "dueDate",
    id === undefined
      ? `Invalid dueDate: ${day} is in the past; give today or a later date.`
      : `Invoice ${id} was due ${day}, which has passed: give it a dueDate of today or later (or none) before finalizing it.`,
  );
}

/** Creates a DRAFT invoice for a customer of this merchant and mode; a live one only with a live settlement wallet and an enabled live chain. */
export async function createInvoice(prisma: Prisma, scope: Scope, data: InvoiceRequest, settings: ChargeSettings, now = new Date()): Promise<Invoice> {
  assertDueDateAhead(data.dueDate, now);
  const { lines, total } = priceLines(data.lineItems, settings);
  await assertCustomer(prisma, scope, data.customerId);
  await assertLiveReady(prisma, scope, settings.chains);
  return prisma.$transaction(async (tx) => {
    const invoice = await tx.invoice.create({
      data: {
        id: newId("inv"),
        ...inScope(scope),
        customerId: data.customerId,
        lineItems: lines,
        total,
        dueDate: data.dueDate ?? null,
        memo: data.memo ?? null,
        metadata: jsonOrNull(mergeMetadata(null, data.metadata)),
        createdAt: now,
        updatedAt: now,
      },
    });
    await recordEvents(tx, [invoiceEvent(invoice, "invoice.created", settings)]);
    return invoice;
  });
}

/** An invoice of `scope`, or 404; `query` reads the relations a GraphQL selection asks for with it. */
export async function getInvoice(prisma: Prisma | P.TransactionClient, scope: Scope, id: string, query: { include?: P.InvoiceInclude } = {}): Promise<Invoice> {
  const invoice = await prisma.invoice.findFirst({ ...query, where: { id, ...inScope(scope) } });
  if (!invoice) throw notFound("invoice", id);
  return invoice;
}

/** The invoice's row, locked until the transaction ends; 404 outside `scope` (or anywhere, without one). */
async function lockInvoice(tx: P.TransactionClient, id: string, scope: Scope | null): Promise<Invoice> {
  const [row] = await tx.$queryRaw<{ id: string }[]>`
    SELECT id FROM invoices WHERE id = ${id}
      AND (${scope === null} OR (merchant_id = ${scope?.merchantId ?? ""} AND livemode = ${scope?.livemode ?? false})) FOR UPDATE`;
  if (!row) throw notFound("invoice", id);
  return tx.invoice.findUniqueOrThrow({ where: { id } });
}

/** Changes a DRAFT: customer, lines (all replaced), due date, memo, metadata (merged). */
export async function updateInvoice(
  prisma: Prisma,
  scope: Scope,
  id: string,
  data: InvoiceUpdate,
  settings: ChargeSettings,
  now = new Date(),
): Promise<Invoice> {
  assertDueDateAhead(data.dueDate, now);
  const priced = data.lineItems === undefined ? null : priceLines(data.lineItems, settings);
  if (data.customerId !== undefined) await assertCustomer(prisma, scope, data.customerId);
  return prisma.$transaction(async (tx) => {
    const invoice = await lockInvoice(tx, id, scope);
    invoiceStep(invoice, "update", now);
    const updated = await tx.invoice.update({
      where: { id },
      data: {
        ...(data.customerId !== undefined && { customerId: data.customerId }),
        ...(priced && { lineItems: priced.lines, total: priced.total }),
        ...(data.dueDate !== undefined && { dueDate: data.dueDate }),
        ...(data.memo !== undefined && { memo: data.memo }),
        ...(data.metadata !== undefined && { metadata: jsonOrNull(mergeMetadata(storedMetadata(invoice.metadata, "invoices.metadata"), data.metadata)) }),
        updatedAt: now,
      },
    });
    await recordEvents(tx, [invoiceEvent(updated, "invoice.updated", settings)]);
    return updated;
  });
}

/** Deletes a DRAFT for good; `invoice.deleted` carries it as it was. */
export async function deleteInvoice(prisma: Prisma, scope: Scope, id: string, settings: InvoiceSettings, now = new Date()): Promise<Invoice> {
  return prisma.$transaction(async (tx) => {
    const invoice = await lockInvoice(tx, id, scope);
    invoiceStep(invoice, "delete", now);
    await tx.invoice.delete({ where: { id } });
    await recordEvents(tx, [{ scope: invoice, type: "invoice.deleted", data: { ...invoiceResource(invoice, settings), deleted: true } }]);
    return invoice;
  });
}

/**
 * Issues a DRAFT: gives it the next number of its merchant and mode, freezes the customer's billing
 * details and the seller's business details onto it, and opens it for payment at `hostedInvoiceUrl`
 * (live: only with a live settlement wallet). In the caller's transaction: domain/invoice-emails.ts
 * `finalizeInvoice` runs it and emails the invoice in the same one. A caller's draft whose due date
 * has passed is refused; the billing loop's (`by: "billing"`) is issued however late it runs.
 */
export async function finalizeDraft(
  tx: P.TransactionClient,
  scope: Scope,
  id: string,
  settings: InvoiceSettings,
  now: Date,
  by: "caller" | "billing" = "caller",
): Promise<Invoice> {
  const invoice = await lockInvoice(tx, id, scope);
  const status = invoiceStep(invoice, "finalize", now);
  if (by === "caller") assertDueDateAhead(invoice.dueDate, now, id);
  // The wallet may have been cleared since the draft was made: an issued invoice must be payable.
  await assertLiveWallet(tx, scope);
  // A caller's invoice is refused without a live chain; a renewal's was authorized on one already.
  if (by === "caller") assertLiveChain(scope.livemode, settings.chains);
  const customer = invoice.customerId === null ? null : await tx.customer.findUnique({ where: { id: invoice.customerId } });
  if (!customer) {
    throw new AppError("parameter_missing", `Invoice ${id} has no customer (it was deleted): set customerId before finalizing.`, "customerId");
  }
  const seller = await tx.merchant.findUniqueOrThrow({ where: { id: scope.merchantId }, select: { legalName: true, businessAddress: true, taxId: true } });
  // The counter's row stays locked until this commits: a concurrent finalize waits, then takes the next.
  const [{ number }] = (await tx.$queryRaw<{ number: number }[]>`
    INSERT INTO invoice_numbers (merchant_id, livemode, last_number) VALUES (${scope.merchantId}, ${scope.livemode}, 1)
    ON CONFLICT (merchant_id, livemode) DO UPDATE SET last_number = invoice_numbers.last_number + 1
    RETURNING last_number AS number`) as [{ number: number }];
  const finalized = await tx.invoice.update({
    where: { id },
    data: {
      status,
      number: `INV-${String(number).padStart(6, "0")}`,
      customerDetails: billingDetailsOf(customer),
      sellerDetails: sellerDetailsOf(seller),
      finalizedAt: now,
      updatedAt: now,
    },
  });
  await recordEvents(tx, [invoiceEvent(finalized, "invoice.finalized", settings)]);
  return finalized;
}

/** What voiding does and when it is allowed, as both doors describe it. */
export const VOID_RULE =
  "An OPEN or UNCOLLECTIBLE invoice nothing was paid on (and nothing is on its way to) becomes VOID: it can no longer be paid, and its open charge is cancelled.";

/**
 * Voids an OPEN or UNCOLLECTIBLE invoice: nothing more can be paid on it, and its open charge is
 * cancelled. Refused once money was paid on it or is on its way (mark it uncollectible, or refund the
 * buyer); a VOID invoice is returned as is.
 */
export async function voidInvoice(prisma: Prisma, scope: Scope, id: string, settings: ChargeSettings, now = new Date()): Promise<Invoice> {
  // A Pay committing between the two locks below adds a charge the first read missed: start over,
  // so that every open charge is locked (charges before the invoice) before anything is decided.
  for (let attempt = 1; ; attempt++) {
    const outcome = await prisma.$transaction(async (tx) => voidLocked(tx, scope, id, settings, now));
    if (outcome === "retry" && attempt < VOID_ATTEMPTS) continue;
    if (outcome === "retry") throw new AppError("invoice_not_editable", `Invoice ${id} is being paid right now; try again in a moment.`, "id");
    if (outcome.charges.length > 0) settings.feed?.changed(outcome.charges);
    return outcome.invoice;
  }
}

const VOID_ATTEMPTS = 3;

async function voidLocked(tx: P.TransactionClient, scope: Scope, id: string, settings: ChargeSettings, now: Date) {
  // Charges first (in id order), then the invoice: the order the confirmation of payments takes them in.
  const open = await tx.$queryRaw<(Charge & { confirming: boolean })[]>`
    SELECT ${CHARGE_COLUMNS}, ${moneyOnItsWay(settings)} AS confirming
    FROM charges WHERE invoice_id = ${id} AND merchant_id = ${scope.merchantId} AND livemode = ${scope.livemode} AND status = 'PENDING'
    ORDER BY id FOR UPDATE`;
  const invoice = await lockInvoice(tx, id, scope);
  const [{ count }] = (await tx.$queryRaw<{ count: number }[]>`
    SELECT count(*)::int AS count FROM charges WHERE invoice_id = ${id} AND status = 'PENDING'`) as [{ count: number }];
  if (count !== open.length) return "retry" as const;
  if (invoice.status === "VOID") return { invoice, charges: [] };
  // As a charge's cancel does (charges/lifecycle.ts cancelStatus), money on its way is refused before
  // the machine is asked; only an OPEN or UNCOLLECTIBLE invoice has charges that can be confirming.
  if (open.some((c) => c.confirming)) {
    throw new AppError(
      "charge_payment_confirming",
      `Invoice ${id} cannot be voided while a payment for it is on its way; try again once it is confirmed.`,
      "id",
    );
  }
  const openChargeHoldsMoney = open.some((c) => c.amountReceived !== null && toUnits(c.amountReceived) > 0n);
  const status = invoiceStep({ ...invoice, openChargeHoldsMoney }, "void", now);
  const cancelled = [];
  for (const { confirming, ...charge } of open) cancelled.push(await cancelLockedCharge(tx, charge, confirming, settings, now));
  const voided = await tx.invoice.update({ where: { id }, data: { status, voidedAt: now, updatedAt: now } });
  await recordEvents(tx, [invoiceEvent(voided, "invoice.voided", settings)]);
  return { invoice: voided, charges: cancelled.map((c) => c.charge) };
}

/** Marks an OPEN invoice uncollectible (it can still be paid, or voided); an UNCOLLECTIBLE one is returned as is. */
export async function markInvoiceUncollectible(prisma: Prisma, scope: Scope, id: string, settings: InvoiceSettings, now = new Date()): Promise<Invoice> {
  return prisma.$transaction(async (tx) => {
    const invoice = await lockInvoice(tx, id, scope);
    if (invoice.status === "UNCOLLECTIBLE") return invoice;
    const status = invoiceStep(invoice, "mark_uncollectible", now);
    const marked = await tx.invoice.update({ where: { id }, data: { status, markedUncollectibleAt: now, updatedAt: now } });
    await recordEvents(tx, [invoiceEvent(marked, "invoice.marked_uncollectible", settings)]);
    return marked;
  });
}

function invoiceFilter(scope: Scope, f: InvoiceFilters): P.InvoiceWhereInput {
  return {
    ...inScope(scope),
    ...(f.status && { status: f.status }),
    ...(f.customerId && { customerId: f.customerId }),
    ...(f.subscriptionId && { subscriptionId: f.subscriptionId }),
  };
}

/** How many invoices match the list's filters (GraphQL's `totalCount`). */
export function countInvoices(prisma: Prisma, scope: Scope, filters: InvoiceFilters): Promise<number> {
  return prisma.invoice.count({ where: invoiceFilter(scope, filters) });
}

/** One page of invoices, newest first, optionally of one status, customer or subscription. */
export async function listInvoices(prisma: Prisma, scope: Scope, query: InvoiceListQuery, end: PageEnd = "newest"): Promise<Page<Invoice>> {
  const { status, customerId, subscriptionId, ...page } = query;
  const where = invoiceFilter(scope, { status, customerId, subscriptionId });
  return keysetPage(
    "invoice",
    page,
    (id) => locateInvoice(prisma, scope, id),
    (q) => prisma.invoice.findMany({ where: { AND: [where, q.where] }, orderBy: q.orderBy, take: q.take }),
    end,
  );
}

/** Where a cursor's invoice sits in the list, if the scope has it. */
function locateInvoice(prisma: Prisma, scope: Scope, id: string): Promise<Position | null> {
  return prisma.invoice.findFirst({ where: { id, ...inScope(scope) }, select: { id: true, createdAt: true } });
}

/** Customers' invoices, a page of each read for all at once (GraphQL's nested connections). */
export function customersInvoices(prisma: Prisma, scope: Scope, include?: P.InvoiceInclude): RelatedRows<Invoice> {
  return invoicesBy(prisma, scope, "customer_id", include);
}

/** Subscriptions' invoices (one per period), a page of each read for all at once. */
export function subscriptionsInvoices(prisma: Prisma, scope: Scope, include?: P.InvoiceInclude): RelatedRows<Invoice> {
  return invoicesBy(prisma, scope, "subscription_id", include);
}

function invoicesBy(prisma: Prisma, scope: Scope, parent: Relation["parent"], include?: P.InvoiceInclude): RelatedRows<Invoice> {
  const relation: Relation = { table: "invoices", parent };
  return {
    kind: "invoice",
    locate: (id) => locateInvoice(prisma, scope, id),
    pages: (ids, q) => pagesByParent(prisma, scope, relation, ids, q, (invoiceIds) => prisma.invoice.findMany({ include, where: { id: { in: invoiceIds } } })),
    counts: (ids) => countsByParent(prisma, scope, relation, ids),
  };
}

function billingDetailsOf(c: Customer): BillingDetails {
  return { name: c.name, email: c.email, companyName: c.companyName, taxId: c.taxId, address: storedAddress(c.address) };
}

/** What the hosted page and the PDF show: the invoice, who bills and who is billed. */
export interface InvoiceView {
  invoice: Invoice;
  merchantName: string;
  /** Frozen at finalization; a DRAFT (or an invoice issued before sellers had details) shows them as they are now. */
  seller: SellerDetails;
  /** The merchant's current logo. */
  logo: BusinessLogo | null;
  /** Frozen at finalization; a DRAFT shows its customer as it is now. */
  billTo: BillingDetails | null;
}

/** The invoice with what its page and PDF show, of `scope` (any DRAFT included). */
export async function invoiceView(prisma: Prisma, scope: Scope, id: string): Promise<InvoiceView> {
  return viewOf(prisma, await getInvoice(prisma, scope, id));
}

/** The hosted page's invoice: anyone with its id sees it once it is finalized; a DRAFT is 404. */
export async function publicInvoiceView(prisma: Prisma, id: string): Promise<InvoiceView> {
  const invoice = await prisma.invoice.findUnique({ where: { id } });
  if (!invoice || invoice.status === "DRAFT") throw notFound("invoice", id);
  return viewOf(prisma, invoice);
}

/** What `invoice`'s page and PDF show, read with `prisma` (a transaction's client too). */
export async function viewOf(prisma: Prisma | P.TransactionClient, invoice: Invoice): Promise<InvoiceView> {
  const [merchant, customer] = await Promise.all([
    prisma.merchant.findUniqueOrThrow({
      where: { id: invoice.merchantId },
      select: { name: true, legalName: true, businessAddress: true, taxId: true, logo: true, logoType: true },
    }),
    invoice.customerDetails === null && invoice.customerId !== null ? prisma.customer.findUnique({ where: { id: invoice.customerId } }) : null,
  ]);
  const billTo = jsonColumn(StoredBillTo, invoice.customerDetails, "invoices.customer_details") ?? (customer ? billingDetailsOf(customer) : null);
  const seller: SellerDetails = jsonColumn(StoredSeller, invoice.sellerDetails, "invoices.seller_details") ?? sellerDetailsOf(merchant);
  return { invoice, merchantName: merchant.name, seller, logo: businessLogoOf(merchant), billTo };
}

/**
 * The hosted page's Pay: the charge that pays what is due on an OPEN (or UNCOLLECTIBLE) invoice, made
 * now or the open one reused. 404 for a DRAFT or unknown id, 409 `invoice_not_payable` when nothing
 * can be paid. The buyer returns to the invoice from the charge's page.
 */
export async function payInvoice(prisma: Prisma, id: string, settings: ChargeSettings, now = new Date()): Promise<Charge> {
  // An open charge past its time that the sweep has not reached yet is expired now, not reused.
  const stale = await prisma.charge.findMany({ where: { invoiceId: id, status: "PENDING", expiresAt: { lte: now } }, select: { id: true } });
  for (const { id: chargeId } of stale) {
    const [expired] = await expireDueCharges(prisma, settings, now, { limit: 1, only: chargeId });
    // Money in blocks before its expiry still counts: until the chain's clock has passed it, wait.
    if (!expired && (await prisma.charge.count({ where: { id: chargeId, status: "PENDING" } })) > 0) {
      throw new AppError(
        "invoice_not_payable",
        `The last payment window of invoice ${id} is closing (the chain is confirming its last blocks); try again in a minute.`,
        "id",
      );
    }
  }
  const made = await prisma.$transaction(async (tx) => {
    const invoice = await lockInvoice(tx, id, null);
    if (invoice.status === "DRAFT") throw notFound("invoice", id);
    invoiceStep(invoice, "pay", now);
    const due = amountDue(invoice);
    const [open] = await tx.$queryRaw<Charge[]>`SELECT ${CHARGE_COLUMNS} FROM charges WHERE invoice_id = ${id} AND status = 'PENDING' LIMIT 1`;
    // A remainder below the smallest charge is charged at that minimum: a little over, rather than never payable.
    const amount = due < settings.amount.min ? settings.amount.min : due;
    if (open) return { charge: open, events: null };
    const back = hostedInvoiceUrl(invoice, settings);
    // A live charge takes only https pages to go back to (see createCharge); a plain-http test setup shows none.
    const returnUrl = !invoice.livemode || back.startsWith("https:") ? back : null;
    return insertCharge(
      tx,
      invoice,
      parseInput(chargeSchema, {
        orderId: invoice.id,
        amount: formatAmount(amount),
        description: `Invoice ${invoice.number}`,
        customerId: invoice.customerId,
        successUrl: returnUrl,
        cancelUrl: returnUrl,
        expiresInMinutes: CHARGE_MINUTES,
      }),
      settings,
      now,
      { invoiceId: invoice.id },
    );
  });
  if (made.events) settings.feed?.changed([made.charge]);
  return made.charge;
}

/** Locks the invoice a charge pays before money is posted for it (the invoice's row after the charge's). */
export async function lockPaidInvoice(tx: P.TransactionClient, invoiceId: string): Promise<Invoice> {
  return lockInvoice(tx, invoiceId, null);
}

/**
 * Once the ledger's payments for the invoice are posted and its amountPaid derived (domain/ledger.ts):
 * PAID when nothing is due any more. Returns the event to record (invoice.paid, else invoice.updated).
 */
export async function invoicePaymentEvent(tx: P.TransactionClient, invoiceId: string, settings: InvoiceSettings, now: Date): Promise<NewEvent> {
  const invoice = await tx.invoice.findUniqueOrThrow({ where: { id: invoiceId } });
  const paid = settles(invoice, now);
  const updated = paid ? await tx.invoice.update({ where: { id: invoiceId }, data: { status: "PAID", paidAt: now, updatedAt: now } }) : invoice;
  return invoiceEvent(updated, paid ? "invoice.paid" : "invoice.updated", settings);
}

/**
 * Inside a reversal's transaction, after the ledger's money for the invoice was derived again: a PAID
 * invoice that what is left no longer pays is OPEN again (the state machine's reopen). Returns the
 * invoice.updated event to record, or null when nothing changed. Locks the invoice (after the charge).
 */
export async function reopenReversedInvoice(tx: P.TransactionClient, invoiceId: string, settings: InvoiceSettings, now: Date): Promise<NewEvent | null> {
  const invoice = await lockInvoice(tx, invoiceId, null);
  if (!reopens(invoice, now)) return null;
  const updated = await tx.invoice.update({ where: { id: invoiceId }, data: { status: "OPEN", paidAt: null, updatedAt: now } });
  return invoiceEvent(updated, "invoice.updated", settings);
}

function invoiceEvent(invoice: Invoice, type: NewEvent["type"], settings: InvoiceSettings): NewEvent {
  return { scope: invoice, type, data: invoiceResource(invoice, settings) };
}
