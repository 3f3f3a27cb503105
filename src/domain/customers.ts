// Customers: records of buyers, unique by email (case-insensitively) per merchant and mode.
import { z } from "zod";
import { type Prisma, queryRows, selectRows } from "../db/client.js";
import { type Customer, Prisma as P } from "../generated/prisma/client.js";
import { AppError, notFound } from "./errors.js";
import { isUniqueViolation } from "../db/errors.js";
import { jsonOrNull } from "../db/json.js";
import { eventWrites, eventsWritten, QUEUED_DELIVERIES, recordEvent } from "./events.js";
import { newId } from "./ids.js";
import { MetadataShape, mergeMetadata, metadataWithinLimits, storedMetadata } from "./metadata.js";
import { formatAmount, toUnits } from "./money.js";
import { inScope, type Scope } from "./scope.js";
import { keysetPage, type Page, type PageEnd } from "./paging.js";
import { AddressResource, addressResource, normaliseAddress } from "./postal-address.js";
import {
  type CustomerFilters,
  type CustomerJwtBody,
  type CustomerListQuery,
  type CustomerRequest,
  type CustomerUpdate,
  jwtClaimsSchema,
} from "./customer-requests.js";
import { parseInput } from "./validation.js";

export type { Customer };

/** The public JSON form of a customer (spec 2.1 plus `livemode`); also the event snapshot. */
export const CustomerResource = z.object({
  id: z.string(),
  object: z.literal("customer"),
  livemode: z.boolean().describe("True in live mode, false in test mode."),
  email: z.string().describe("Unique among the merchant's customers of the mode (compared case-insensitively)."),
  name: z.string().describe("The customer's name."),
  phone: z.string().nullable().describe("A phone number, as given."),
  address: AddressResource.nullable().describe("The postal address, if given."),
  companyName: z.string().nullable().describe("The company billed, if any."),
  taxId: z.string().nullable().describe("A tax or VAT number, as given."),
  description: z.string().nullable().describe("Your note about the customer."),
  metadata: MetadataShape.nullable().describe("Your key-value pairs."),
  created: z.number().int().describe("Unix timestamp (seconds) of creation; createdAt is the same instant as every other resource gives it."),
  updated: z.number().int().describe("Unix timestamp (seconds) of the last update; updatedAt is the same instant."),
  createdAt: z.string().describe("When it was created: the instant of created, as every other resource gives it."),
  updatedAt: z.string().describe("When it was last updated: the instant of updated."),
});
export type CustomerResource = z.infer<typeof CustomerResource>;

/** `expand=stats`: a customer with its aggregates. */
export const CustomerWithStats = CustomerResource.extend({
  invoiceCount: z.number().int(),
  chargeCount: z.number().int(),
  totalSpent: z.string().describe("USDC of COMPLETED charges."),
});

/** Aggregates shown with `expand=stats` and `Customer.stats`. */
export interface CustomerStats {
  invoiceCount: number;
  chargeCount: number;
  /** Sum of `amountReceived` of COMPLETED charges, in base units. */
  totalSpent: bigint;
}

/** Shapes a stored customer as the API shows it. */
export function customerResource(c: Customer): CustomerResource {
  return {
    id: c.id,
    object: "customer",
    livemode: c.livemode,
    email: c.email,
    name: c.name,
    phone: c.phone,
    address: addressResource(c.address),
    companyName: c.companyName,
    taxId: c.taxId,
    description: c.description,
    metadata: storedMetadata(c.metadata, "customers.metadata"),
    created: unixSeconds(c.createdAt),
    updated: unixSeconds(c.updatedAt),
    createdAt: c.createdAt.toISOString(),
    updatedAt: c.updatedAt.toISOString(),
  };
}

/** The `expand=stats` fields in API form. */
export function statsResource(s: CustomerStats): Omit<z.infer<typeof CustomerWithStats>, keyof CustomerResource> {
  return { invoiceCount: s.invoiceCount, chargeCount: s.chargeCount, totalSpent: formatAmount(s.totalSpent) };
}

/** Creates a customer; 409 `customer_email_exists` when the email is taken (case-insensitively). */
export async function createCustomer(prisma: Prisma, scope: Scope, data: CustomerRequest): Promise<Customer> {
  return insertCustomer(prisma, scope, data);
}

// Every column of the Customer model under its Prisma field name (a test holds it equal to the model).
const CUSTOMER_COLUMN_LIST = `id, merchant_id AS "merchantId", livemode, email, email_lower AS "emailLower", name, phone, address, company_name AS "companyName", tax_id AS "taxId", description, metadata, created_at AS "createdAt", updated_at AS "updatedAt"`;
const CUSTOMER_COLUMNS = P.raw(CUSTOMER_COLUMN_LIST);

/** Retrieves a customer of this merchant and mode, or 404. */
export async function getCustomer(prisma: Prisma, scope: Scope, id: string): Promise<Customer> {
  // The hottest read in the API: below the ORM (db/client.ts, selectRows).
  const [customer] = await selectRows<Customer>(prisma, `SELECT ${CUSTOMER_COLUMN_LIST} FROM customers WHERE id = $1 AND merchant_id = $2 AND livemode = $3`, [
    id,
    scope.merchantId,
    scope.livemode,
  ]);
  if (!customer) throw notFound("customer", id);
  return customer;
}

/** Updates a customer: given fields replace, `null` clears an optional field, metadata merges. */
export async function updateCustomer(prisma: Prisma, scope: Scope, id: string, patch: CustomerUpdate): Promise<Customer> {
  if (Object.keys(patch).length === 0) return getCustomer(prisma, scope, id);
  return withEmailConflict(patch.email, () =>
    prisma.$transaction(async (tx) => {
      // Row lock: two concurrent metadata patches must both land, not overwrite each other.
      const locked = await tx.$queryRaw<{ metadata: unknown }[]>`
        SELECT metadata FROM customers WHERE id = ${id} AND merchant_id = ${scope.merchantId} AND livemode = ${scope.livemode} FOR UPDATE`;
      const current = locked[0];
      if (!current) throw notFound("customer", id);
      const metadata = mergeMetadata(storedMetadata(current.metadata, "customers.metadata"), patch.metadata);
      if (!metadataWithinLimits(metadata)) throw new AppError("parameter_invalid", "Invalid metadata: a customer can hold at most 50 keys", "metadata");
      const updated = await tx.customer.update({
        where: { id },
        data: {
          ...columns(patch),
          ...(patch.metadata !== undefined && { metadata: jsonOrNull(metadata) }),
        },
      });
      await recordEvent(tx, updated, "customer.updated", customerResource(updated));
      return updated;
    }),
  );
}

/**
 * Permanently deletes a customer; its charges and invoices stay, with `customerId` set to null.
 * 409 `customer_has_subscriptions` while it has any subscription. `customer.deleted` carries the customer as it was.
 */
export async function deleteCustomer(prisma: Prisma, scope: Scope, id: string): Promise<void> {
  await prisma.$transaction(async (tx) => {
    // A subscription bills its customer period after period, and an ended one is its billing history:
    // refused rather than canceled behind the merchant's back or left without its customer.
    const subscriptions = await tx.subscription.count({ where: { customerId: id, ...inScope(scope) } });
    if (subscriptions > 0) {
      throw new AppError(
        "customer_has_subscriptions",
        `Customer ${id} has ${subscriptions} subscription${subscriptions === 1 ? "" : "s"}: a customer with subscriptions is kept (cancel those still running instead).`,
        "id",
      );
    }
    const rows = await tx.$queryRaw<Customer[]>`
      DELETE FROM customers WHERE id = ${id} AND merchant_id = ${scope.merchantId} AND livemode = ${scope.livemode} RETURNING ${CUSTOMER_COLUMNS}`;
    if (!rows[0]) throw notFound("customer", id);
    await recordEvent(tx, rows[0], "customer.deleted", { ...customerResource(rows[0]), deleted: true });
  });
}

/** One page of customers, newest first, with cursor pagination and filters. */
export async function listCustomers(prisma: Prisma, scope: Scope, params: CustomerListQuery, end: PageEnd = "newest"): Promise<Page<Customer>> {
  const where = filterWhere(scope, params);
  return keysetPage(
    "customer",
    params,
    (id) => prisma.customer.findFirst({ where: { id, ...inScope(scope) }, select: { id: true, createdAt: true } }),
    (q) => prisma.customer.findMany({ where: { AND: [where, q.where] }, orderBy: q.orderBy, take: q.take }),
    end,
  );
}

/** How many customers match the list filters (for GraphQL's `totalCount`). */
export async function countCustomers(prisma: Prisma, scope: Scope, filters: CustomerFilters): Promise<number> {
  return prisma.customer.count({ where: filterWhere(scope, filters) });
}

/** Stats for many customers in a fixed number of queries, whatever their count. */
export async function customerStats(prisma: Prisma, ids: readonly string[]): Promise<Map<string, CustomerStats>> {
  const customerId = { in: [...ids] };
  const [charges, spent, invoices] = await Promise.all([
    prisma.charge.groupBy({ by: ["customerId"], where: { customerId }, _count: { _all: true } }),
    prisma.charge.groupBy({ by: ["customerId"], where: { customerId, status: "COMPLETED" }, _sum: { amountReceived: true } }),
    prisma.invoice.groupBy({ by: ["customerId"], where: { customerId, status: { not: "DRAFT" } }, _count: { _all: true } }),
  ]);
  const stats = new Map(ids.map((id) => [id, { invoiceCount: 0, chargeCount: 0, totalSpent: 0n }]));
  for (const row of charges) if (row.customerId) stats.get(row.customerId)!.chargeCount = row._count._all;
  for (const row of spent) if (row.customerId) stats.get(row.customerId)!.totalSpent = row._sum.amountReceived === null ? 0n : toUnits(row._sum.amountReceived);
  for (const row of invoices) if (row.customerId) stats.get(row.customerId)!.invoiceCount = row._count._all;
  return stats;
}

/** Identity claims of a verified customer JWT. */
export interface CustomerClaims {
  email: string;
  name?: string | undefined;
  phone?: string | undefined;
}

/**
 * Creates the customer named by verified JWT claims, or returns the one that already has that email.
 * Signed claims win over the body, which may only carry the optional fields.
 */
export async function findOrCreateCustomerByEmail(
  prisma: Prisma,
  scope: Scope,
  claims: CustomerClaims,
  extra: CustomerJwtBody,
): Promise<{ customer: Customer; created: boolean }> {
  // The claims are checked here, not by the door: they come signed inside the token, not as the request's fields.
  const identity = parseInput(jwtClaimsSchema, claims, "jwt");
  const existing = await findByEmail(prisma, scope, identity.email);
  if (existing) return { customer: existing, created: false };
  try {
    const customer = await insertCustomer(prisma, scope, {
      ...extra,
      email: identity.email,
      // Without a name claim the email stands in, so the record is still complete; PATCH can fix it.
      name: identity.name ?? identity.email,
      phone: identity.phone ?? extra.phone,
    });
    return { customer, created: true };
  } catch (e) {
    // A concurrent request created it first: that one is the answer.
    const raced = e instanceof AppError && e.code === "customer_email_exists" ? await findByEmail(prisma, scope, identity.email) : null;
    if (raced) return { customer: raced, created: false };
    throw e;
  }
}

function findByEmail(prisma: Prisma, scope: Scope, address: string): Promise<Customer | null> {
  return prisma.customer.findFirst({ where: { ...inScope(scope), emailLower: address.toLowerCase() } });
}

/** Inserts a customer and its `customer.created` event in one statement (the create path is hot). */
async function insertCustomer(prisma: Prisma, scope: Scope, data: CustomerRequest): Promise<Customer> {
  const now = new Date();
  const address = data.address === undefined ? null : normaliseAddress(data.address);
  const customer: Customer = {
    id: newId("cus"),
    ...inScope(scope),
    email: data.email,
    emailLower: data.email.toLowerCase(),
    name: data.name,
    phone: data.phone ?? null,
    address,
    companyName: data.companyName ?? null,
    taxId: data.taxId ?? null,
    description: data.description ?? null,
    metadata: mergeMetadata(null, data.metadata),
    createdAt: now,
    updatedAt: now,
  };
  const events = eventWrites([{ scope, type: "customer.created", data: customerResource(customer) }]);
  const json = (v: unknown) => (v === null ? null : JSON.stringify(v));
  return withEmailConflict(data.email, async () => {
    // Below the ORM (db/client.ts, queryRows): the create path is hot.
    const [row] = await queryRows<Customer & { queuedDeliveries: number }>(
      prisma,
      P.sql`
      WITH inserted AS (
        INSERT INTO customers (id, merchant_id, livemode, email, name, phone, address, company_name, tax_id, description, metadata, created_at, updated_at)
        VALUES (${customer.id}, ${customer.merchantId}, ${customer.livemode}, ${customer.email}, ${customer.name}, ${customer.phone},
                ${json(address)}::jsonb, ${customer.companyName}, ${customer.taxId}, ${customer.description}, ${json(customer.metadata)}::jsonb, ${now}, ${now})
        RETURNING ${CUSTOMER_COLUMNS}
      ), ${events.sql}
      SELECT inserted.*, ${QUEUED_DELIVERIES} AS "queuedDeliveries" FROM inserted`,
    );
    const { queuedDeliveries, ...created } = row!;
    eventsWritten(prisma, events.recorded, queuedDeliveries);
    return created;
  });
}

/** Maps validated fields onto columns, leaving out what was not sent. */
function columns(d: CustomerUpdate) {
  return {
    ...(d.email !== undefined && { email: d.email }),
    ...(d.name !== undefined && { name: d.name }),
    ...(d.phone !== undefined && { phone: d.phone }),
    ...(d.address !== undefined && { address: jsonOrNull(normaliseAddress(d.address)) }),
    ...(d.companyName !== undefined && { companyName: d.companyName }),
    ...(d.taxId !== undefined && { taxId: d.taxId }),
    ...(d.description !== undefined && { description: d.description }),
  };
}

function filterWhere(scope: Scope, p: CustomerFilters): P.CustomerWhereInput {
  const where: P.CustomerWhereInput = { ...inScope(scope) };
  if (p.email) where.emailLower = p.email.toLowerCase();
  if (p.query) {
    // Prisma passes `contains` to ILIKE unescaped: a literal % or _ must not act as a wildcard.
    const q = p.query.replace(/[\\%_]/g, (c) => `\\${c}`);
    where.OR = [
      { email: { contains: q, mode: "insensitive" } },
      { name: { contains: q, mode: "insensitive" } },
      { companyName: { contains: q, mode: "insensitive" } },
    ];
  }
  return where;
}

async function withEmailConflict<T>(address: string | undefined, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (e) {
    // The only unique key a customer write can hit is (merchant, mode, lower(email)).
    if (isUniqueViolation(e)) {
      throw new AppError("customer_email_exists", `A customer with email ${address} already exists`, "email");
    }
    throw e;
  }
}

function unixSeconds(d: Date): number {
  return Math.floor(d.getTime() / 1000);
}
