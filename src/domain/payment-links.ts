// Payment links (.docs/invoices.md "Payment links"): a no-code checkout. A merchant makes a link with a name and
// an amount once; every buyer who presses Pay at its URL gets a charge of their own.
//
// Invariants:
// - a link's amount never changes (a buyer who opened the page pays what it showed);
// - each charge a link makes carries `paymentLinkId` and an orderId no other charge of the link has;
// - an inactive link makes no charge (410 `payment_link_inactive`); charges it made live on;
// - a live link is made or reactivated only while the merchant has a live settlement wallet.
import { z } from "zod";
import type { Prisma } from "../db/client.js";
import { jsonOrNull } from "../db/json.js";
import type { PaymentLink, Prisma as P } from "../generated/prisma/client.js";
import { type Charge, type ChargeSettings, checkRedirectUrl, createSchema as chargeSchema, insertCharge } from "./charges.js";
import { AppError, invalidParam, notFound } from "./errors.js";
import { newId, randomBase62 } from "./ids.js";
import { type Metadata, MetadataShape, mergeMetadata, metadataInput } from "./metadata.js";
import { formatAmount, parseAmount } from "./money.js";
import { keysetPage, type Page, type PageEnd, pageParams } from "./paging.js";
import { inScope, type Scope } from "./scope.js";
import { assertLiveWallet } from "./settlement-wallets.js";
import { parseInput } from "./validation.js";
import { isEmailAddress } from "../email/address.js";

export type { PaymentLink };

const name = z
  .string()
  .max(200)
  .refine((s) => s.trim().length > 0, "must not be blank");

const optionalFields = {
  description: z.string().max(1000).nullable().optional(),
  successUrl: chargeSchema.shape.successUrl,
  cancelUrl: chargeSchema.shape.cancelUrl,
  metadata: metadataInput.optional(),
  collectEmail: z.boolean().optional(),
};

/** The body of POST /v1/payment_links (and the createPaymentLink mutation's input). */
export const createSchema = z.strictObject(
  { name, amount: z.string({ error: 'must be a decimal string such as "25.00"' }), ...optionalFields },
  { error: "must be a JSON object" },
);

/** The body of PATCH /v1/payment_links/:id: everything but the amount; `active: false` retires it. */
export const updateSchema = z.strictObject({ name: name.optional(), active: z.boolean().optional(), ...optionalFields }, { error: "must be a JSON object" });

export const listSchema = z.strictObject({
  ...pageParams,
  active: z.union([z.boolean(), z.enum(["true", "false"]).transform((v) => v === "true")], { error: "must be true or false" }).optional(),
});

/** The public JSON form of a payment link. */
export const PaymentLinkResource = z.object({
  id: z.string(),
  object: z.literal("payment_link"),
  livemode: z.boolean(),
  name: z.string(),
  amount: z.string().describe('USDC, e.g. "25.00".'),
  description: z.string().nullable(),
  url: z.string().describe("Share it: each buyer who pays there gets a charge of their own."),
  active: z.boolean(),
  successUrl: z.string().nullable(),
  cancelUrl: z.string().nullable(),
  metadata: MetadataShape.nullable().describe("Copied onto every charge the link makes."),
  collectEmail: z.boolean().describe("The page asks the buyer's email before Pay; the charge keeps it as customerEmail (the receipt goes there)."),
  createdAt: z.string(),
});
export type PaymentLinkResource = z.infer<typeof PaymentLinkResource>;

/** Shapes a stored payment link as the API shows it. */
export function paymentLinkResource(l: PaymentLink, settings: Pick<ChargeSettings, "paymentBaseUrl">): PaymentLinkResource {
  return {
    id: l.id,
    object: "payment_link",
    livemode: l.livemode,
    name: l.name,
    amount: formatAmount(l.amount),
    description: l.description,
    url: paymentLinkUrl(l, settings),
    active: l.active,
    successUrl: l.successUrl,
    cancelUrl: l.cancelUrl,
    metadata: l.metadata as Metadata | null,
    collectEmail: l.collectEmail,
    createdAt: l.createdAt.toISOString(),
  };
}

/** The link's page: `{paymentBaseUrl}/l/<id>`. */
export function paymentLinkUrl(l: Pick<PaymentLink, "id">, settings: Pick<ChargeSettings, "paymentBaseUrl">): string {
  return `${settings.paymentBaseUrl}/l/${l.id}`;
}

function checkUrls(data: { successUrl?: string | null | undefined; cancelUrl?: string | null | undefined }, livemode: boolean): void {
  for (const param of ["successUrl", "cancelUrl"] as const) checkRedirectUrl(data[param], param, livemode);
}

/** Creates an active payment link; its amount is bound by the same limits as a charge's. A live one needs a live settlement wallet. */
export async function createPaymentLink(prisma: Prisma, scope: Scope, input: unknown, settings: ChargeSettings, now = new Date()): Promise<PaymentLink> {
  const data = parseInput(createSchema, input);
  const amount = parseAmount(data.amount);
  if (amount === null || amount < settings.amount.min || amount > settings.amount.max) {
    throw invalidParam(
      "amount",
      `Invalid amount: must be a decimal string with at most 6 decimals between ${formatAmount(settings.amount.min)} and ${formatAmount(settings.amount.max)} USDC`,
    );
  }
  checkUrls(data, scope.livemode);
  await assertLiveWallet(prisma, scope);
  return prisma.paymentLink.create({
    data: {
      id: newId("plink"),
      ...inScope(scope),
      name: data.name.trim(),
      amount,
      description: data.description ?? null,
      successUrl: data.successUrl ?? null,
      cancelUrl: data.cancelUrl ?? null,
      metadata: jsonOrNull(mergeMetadata(null, data.metadata)),
      collectEmail: data.collectEmail ?? false,
      createdAt: now,
      updatedAt: now,
    },
  });
}

/** A payment link of `scope`, or 404; `query` reads the relations a GraphQL selection asks for with it. */
export async function getPaymentLink(prisma: Prisma, scope: Scope, id: string, query: { include?: P.PaymentLinkInclude } = {}): Promise<PaymentLink> {
  const link = await prisma.paymentLink.findFirst({ ...query, where: { id, ...inScope(scope) } });
  if (!link) throw notFound("payment link", id);
  return link;
}

/** Changes a link's name, description, redirects, metadata (merged) or whether it takes payments (live: again only with a live wallet). */
export async function updatePaymentLink(prisma: Prisma, scope: Scope, id: string, input: unknown, now = new Date()): Promise<PaymentLink> {
  const data = parseInput(updateSchema, input);
  checkUrls(data, scope.livemode);
  if (data.active === true) await assertLiveWallet(prisma, scope);
  return prisma.$transaction(async (tx) => {
    // The row lock keeps two concurrent metadata merges from losing each other's keys.
    const [row] = await tx.$queryRaw<{ metadata: Metadata | null }[]>`
      SELECT metadata FROM payment_links WHERE id = ${id} AND merchant_id = ${scope.merchantId} AND livemode = ${scope.livemode} FOR UPDATE`;
    if (!row) throw notFound("payment link", id);
    const metadata = data.metadata === undefined ? undefined : mergeMetadata(row.metadata, data.metadata);
    return tx.paymentLink.update({
      where: { id },
      data: {
        ...(data.name !== undefined && { name: data.name.trim() }),
        ...(data.active !== undefined && { active: data.active }),
        ...(data.description !== undefined && { description: data.description }),
        ...(data.successUrl !== undefined && { successUrl: data.successUrl }),
        ...(data.cancelUrl !== undefined && { cancelUrl: data.cancelUrl }),
        ...(metadata !== undefined && { metadata: jsonOrNull(metadata) }),
        ...(data.collectEmail !== undefined && { collectEmail: data.collectEmail }),
        updatedAt: now,
      },
    });
  });
}

const filterSchema = listSchema.pick({ active: true });

function linkFilter(scope: Scope, f: z.output<typeof filterSchema>): P.PaymentLinkWhereInput {
  return { ...inScope(scope), ...(f.active !== undefined && { active: f.active }) };
}

/** How many links match the list's filter (GraphQL's `totalCount`). */
export function countPaymentLinks(prisma: Prisma, scope: Scope, input: unknown): Promise<number> {
  return prisma.paymentLink.count({ where: linkFilter(scope, parseInput(filterSchema, input)) });
}

/** One page of payment links, newest first, optionally only active or inactive ones. */
export async function listPaymentLinks(prisma: Prisma, scope: Scope, input: unknown, end: PageEnd = "newest"): Promise<Page<PaymentLink>> {
  const { active, ...page } = parseInput(listSchema, input);
  const where = linkFilter(scope, { active });
  return keysetPage(
    "payment link",
    page,
    (id) => prisma.paymentLink.findFirst({ where: { id, ...inScope(scope) }, select: { id: true, createdAt: true } }),
    (q) => prisma.paymentLink.findMany({ where: { AND: [where, q.where] }, orderBy: q.orderBy, take: q.take }),
    end,
  );
}

/** A link and who sells, whether or not it is active; 404 for an unknown id. */
async function publicPaymentLink(prisma: Prisma, id: string): Promise<{ link: PaymentLink; merchantName: string }> {
  const link = await prisma.paymentLink.findUnique({ where: { id }, include: { merchant: { select: { name: true } } } });
  if (!link) throw notFound("payment link", id);
  const { merchant, ...rest } = link;
  return { link: rest, merchantName: merchant.name };
}

/**
 * What the link's page shows while the link takes payments: 404 for an unknown id, 410
 * `payment_link_inactive` once retired, 400 `settlement_wallet_missing` for a live link whose merchant
 * has cleared the live wallet since (no Pay button that cannot work).
 */
export async function activePaymentLink(prisma: Prisma, id: string): Promise<{ link: PaymentLink; merchantName: string }> {
  const found = await publicPaymentLink(prisma, id);
  if (!found.link.active) throw new AppError("payment_link_inactive", `Payment link ${id} no longer takes payments.`, "id");
  await assertLiveWallet(prisma, found.link);
  return found;
}

/** The buyer's email a link that asks for it takes: one plain address (nothing that could add a header), at most 254 characters. */
export const buyerEmailSchema = z.strictObject({ email: z.string().trim().refine(isEmailAddress, "must be one email address, such as you@example.com") });

/**
 * A buyer pressed Pay: a new charge of the link's amount, with its description, redirects and
 * metadata, and `paymentLinkId`. A link with `collectEmail` needs the buyer's `email` in `input`
 * (400 naming `email` without a valid one), kept as the charge's `customerEmail`. 404 for an unknown
 * link, 410 `payment_link_inactive` for a retired one.
 */
export async function chargeFromPaymentLink(prisma: Prisma, id: string, input: unknown, settings: ChargeSettings, now = new Date()): Promise<Charge> {
  const { link } = await activePaymentLink(prisma, id);
  const customerEmail = link.collectEmail ? parseInput(buyerEmailSchema, input).email.toLowerCase() : null;
  const { charge, events } = await insertCharge(
    prisma,
    link,
    {
      // Unique per link, and says where the charge came from in the merchant's order list.
      orderId: `${link.id}-${randomBase62(12)}`,
      amount: formatAmount(link.amount),
      description: link.description ?? link.name,
      successUrl: link.successUrl,
      cancelUrl: link.cancelUrl,
      metadata: link.metadata as Metadata | null,
    },
    settings,
    now,
    { paymentLinkId: link.id, customerEmail },
  );
  settings.feed?.changed([charge], events);
  return charge;
}
