// Payment links (.docs/invoices.md "Payment links"): a no-code checkout. A merchant makes a link with a name and
// an amount once; every buyer who presses Pay at its URL gets a charge of their own.
//
// Invariants:
// - a link's amount never changes (a buyer who opened the page pays what it showed);
// - each charge a link makes carries `paymentLinkId` and an orderId no other charge of the link has;
// - an inactive link makes no charge (410 `payment_link_inactive`); charges it made live on;
// - a live link is made or reactivated only while the merchant has a live settlement wallet;
// - with `quantityMax`, a buyer picks 1..quantityMax and the charge is amount × quantity, which stays
//   within the charge limits for every quantity allowed;
// - one browser has at most one PENDING charge per link, quantity and email: Pay → Back → Pay reuses it.
import { z } from "zod";
import type { Prisma } from "../db/client.js";
import { jsonOrNull } from "../db/json.js";
import type { PaymentLink, Prisma as P } from "../generated/prisma/client.js";
import { CHARGE_COLUMNS, type Charge } from "./charges/read.js";
import type { ChargeSettings } from "./charges/settings.js";
import { checkRedirectUrl, insertCharge } from "./charges/create.js";
import { CHARGE_MINUTES_DEFAULT } from "./charges/requests.js";
import { AppError, invalidParam, notFound } from "./errors.js";
import { hashToken, newId, randomBase62 } from "./ids.js";
import { MetadataShape, mergeMetadata, storedMetadata } from "./metadata.js";
import { formatAmount, parseAmount, toUnits, type Units } from "./money.js";
import { keysetPage, type Page, type PageEnd } from "./paging.js";
import {
  buyerEmailSchema,
  type PaymentLinkFilters,
  type PaymentLinkListQuery,
  type PaymentLinkRequest,
  type PaymentLinkUpdate,
} from "./payment-link-requests.js";
import { inScope, type Scope } from "./scope.js";
import { assertLiveReady } from "./live-chains.js";
import { assertLiveWallet } from "./settlement-wallets.js";
import { parseInput } from "./validation.js";

export type { PaymentLink };

/** The public JSON form of a payment link. */
export const PaymentLinkResource = z.object({
  id: z.string(),
  object: z.literal("payment_link"),
  livemode: z.boolean().describe("True in live mode, false in test mode."),
  name: z.string().describe("What the buyer pays for, shown on the page."),
  amount: z.string().describe('USDC, e.g. "25.00"; fixed for the link\'s life.'),
  description: z.string().nullable().describe("Shown to the buyer on the page."),
  url: z.string().describe("Share it: each buyer who pays there gets a charge of their own."),
  active: z.boolean().describe("False once retired: its page answers 410."),
  successUrl: z.string().nullable().describe("Where the buyer goes once paid."),
  cancelUrl: z.string().nullable().describe("Where a buyer who gives up goes."),
  metadata: MetadataShape.nullable().describe("Copied onto every charge the link makes."),
  collectEmail: z.boolean().describe("The page asks the buyer's email before Pay; the charge keeps it as customerEmail (the receipt goes there)."),
  quantityMax: z.number().int().nullable().describe("When set, the buyer picks a quantity from 1 to this; the charge is amount × quantity. Null: always one."),
  createdAt: z.string().describe("When it was created."),
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
    metadata: storedMetadata(l.metadata, "payment_links.metadata"),
    collectEmail: l.collectEmail,
    quantityMax: l.quantityMax,
    createdAt: l.createdAt.toISOString(),
  };
}

/** The link's page: `{paymentBaseUrl}/l/<id>`. */
export function paymentLinkUrl(l: Pick<PaymentLink, "id">, settings: Pick<ChargeSettings, "paymentBaseUrl">): string {
  return `${settings.paymentBaseUrl}/l/${l.id}`;
}

/** 400 naming `quantityMax` when the largest quantity would make a charge above the charge limit. */
function checkQuantityMax(amount: bigint, quantityMax: number | null | undefined, settings: Pick<ChargeSettings, "amount">): void {
  if (!quantityMax || amount * BigInt(quantityMax) <= settings.amount.max) return;
  const most = settings.amount.max / amount;
  throw invalidParam(
    "quantityMax",
    `Invalid quantityMax: ${quantityMax} × ${formatAmount(amount)} USDC is above the charge limit of ${formatAmount(settings.amount.max)} USDC; at most ${most} here`,
  );
}

function checkUrls(data: { successUrl?: string | null | undefined; cancelUrl?: string | null | undefined }, livemode: boolean): void {
  for (const param of ["successUrl", "cancelUrl"] as const) checkRedirectUrl(data[param], param, livemode);
}

/** Creates an active payment link; its amount is bound by the same limits as a charge's. A live one needs a live settlement wallet and an enabled live chain. */
export async function createPaymentLink(
  prisma: Prisma,
  scope: Scope,
  data: PaymentLinkRequest,
  settings: ChargeSettings,
  now = new Date(),
): Promise<PaymentLink> {
  const amount = parseAmount(data.amount);
  if (amount === null || amount < settings.amount.min || amount > settings.amount.max) {
    throw invalidParam(
      "amount",
      `Invalid amount: must be a decimal string with at most 6 decimals between ${formatAmount(settings.amount.min)} and ${formatAmount(settings.amount.max)} USDC`,
    );
  }
  checkQuantityMax(amount, data.quantityMax, settings);
  checkUrls(data, scope.livemode);
  await assertLiveReady(prisma, scope, settings.chains);
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
      quantityMax: data.quantityMax ?? null,
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

/**
 * Changes a link's name, description, redirects, metadata (merged), quantity maximum or whether it
 * takes payments (live: again only with a live wallet and an enabled live chain).
 */
export async function updatePaymentLink(
  prisma: Prisma,
  scope: Scope,
  id: string,
  data: PaymentLinkUpdate,
  settings: Pick<ChargeSettings, "amount" | "chains">,
  now = new Date(),
): Promise<PaymentLink> {
  checkUrls(data, scope.livemode);
  if (data.active === true) {
    await assertLiveReady(prisma, scope, settings.chains);
  }
  return prisma.$transaction(async (tx) => {
    // The row lock keeps two concurrent metadata merges from losing each other's keys.
    const [row] = await tx.$queryRaw<{ metadata: unknown; amount: Units }[]>`
      SELECT metadata, amount FROM payment_links WHERE id = ${id} AND merchant_id = ${scope.merchantId} AND livemode = ${scope.livemode} FOR UPDATE`;
    if (!row) throw notFound("payment link", id);
    checkQuantityMax(toUnits(row.amount), data.quantityMax, settings);
    const metadata = data.metadata === undefined ? undefined : mergeMetadata(storedMetadata(row.metadata, "payment_links.metadata"), data.metadata);
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
        ...(data.quantityMax !== undefined && { quantityMax: data.quantityMax }),
        updatedAt: now,
      },
    });
  });
}

function linkFilter(scope: Scope, f: PaymentLinkFilters): P.PaymentLinkWhereInput {
  return { ...inScope(scope), ...(f.active !== undefined && { active: f.active }) };
}

/** How many links match the list's filter (GraphQL's `totalCount`). */
export function countPaymentLinks(prisma: Prisma, scope: Scope, filters: PaymentLinkFilters): Promise<number> {
  return prisma.paymentLink.count({ where: linkFilter(scope, filters) });
}

/** One page of payment links, newest first, optionally only active or inactive ones. */
export async function listPaymentLinks(prisma: Prisma, scope: Scope, query: PaymentLinkListQuery, end: PageEnd = "newest"): Promise<Page<PaymentLink>> {
  const { active, ...page } = query;
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

/** What the buyer gave on the link's page: their email (when asked) and a quantity (when they may pick one). */
export interface BuyerChoice {
  email?: string;
  quantity?: string;
}

/** The buyer's quantity: 1 on a link without `quantityMax`; else a whole number 1..quantityMax, or 400 naming `quantity`. */
export function buyerQuantity(link: Pick<PaymentLink, "quantityMax">, raw: string | undefined): number {
  if (link.quantityMax === null || raw === undefined) return 1;
  const quantity = /^\d{1,4}$/.test(raw.trim()) ? Number(raw.trim()) : Number.NaN;
  if (!(quantity >= 1 && quantity <= link.quantityMax)) {
    throw invalidParam("quantity", `Invalid quantity: must be a whole number from 1 to ${link.quantityMax}`);
  }
  return quantity;
}

/** A new random token for a browser's session on a link's page (its cookie); charges keep only its hash. */
export function newLinkSessionToken(): string {
  return randomBase62(32);
}

/** A buyer's open charge is handed back only with this long left to pay: one about to expire would be paid late. */
const REUSE_MIN_LEFT_MS = 5 * 60_000;

/**
 * A buyer pressed Pay: a charge of the link's amount × the buyer's quantity, with its description
 * (the quantity stated when the buyer picks one), redirects and metadata, and `paymentLinkId`. A link
 * with `collectEmail` needs the buyer's `email` (400 naming `email` without a valid one), kept as the
 * charge's `customerEmail`. With `sessionToken` (the page's cookie), the PENDING charge that browser
 * made with the same quantity and email is returned instead of a new one. 404 for an unknown link,
 * 410 `payment_link_inactive` for a retired one.
 */
export async function chargeFromPaymentLink(
  prisma: Prisma,
  id: string,
  input: BuyerChoice,
  settings: ChargeSettings,
  { now = new Date(), sessionToken = null }: { now?: Date; sessionToken?: string | null } = {},
): Promise<Charge> {
  const { link } = await activePaymentLink(prisma, id);
  // Parsed here rather than by the pay door: whether the email is asked for at all is the link's to say.
  const customerEmail = link.collectEmail ? parseInput(buyerEmailSchema, { email: input.email ?? "" }).email.toLowerCase() : null;
  const quantity = buyerQuantity(link, input.quantity);
  const amount = toUnits(link.amount) * BigInt(quantity);
  const linkSessionHash = sessionToken ? hashToken(sessionToken) : null;
  const base = link.description ?? link.name;
  const made = await prisma.$transaction(async (tx) => {
    if (linkSessionHash) {
      // Two presses of one browser at once make one charge: the second waits and finds the first.
      await tx.$queryRaw`SELECT 1 FROM (SELECT pg_advisory_xact_lock(hashtextextended(${linkSessionHash}, 0))) AS locked`;
      const [open] = await tx.$queryRaw<Charge[]>`
        SELECT ${CHARGE_COLUMNS} FROM charges
        WHERE link_session_hash = ${linkSessionHash} AND payment_link_id = ${link.id} AND status = 'PENDING'
          AND expires_at > ${new Date(now.getTime() + REUSE_MIN_LEFT_MS)}
          AND amount = ${amount} AND customer_email IS NOT DISTINCT FROM ${customerEmail}
        ORDER BY created_at DESC LIMIT 1`;
      if (open) return { charge: open, events: [] };
    }
    return insertCharge(
      tx,
      link,
      // Made from the link's stored fields, which were checked when the link was written: typed, not parsed again.
      {
        // Unique per link, and says where the charge came from in the merchant's order list.
        orderId: `${link.id}-${randomBase62(12)}`,
        amount: formatAmount(amount),
        description: link.quantityMax === null ? base : `${base} × ${quantity}`.slice(0, 1000),
        successUrl: link.successUrl,
        cancelUrl: link.cancelUrl,
        metadata: storedMetadata(link.metadata, "payment_links.metadata"),
        expiresInMinutes: CHARGE_MINUTES_DEFAULT,
      },
      settings,
      now,
      { paymentLinkId: link.id, customerEmail, linkSessionHash },
    );
  });
  if (made.events.length > 0) settings.feed?.changed([made.charge]);
  return made.charge;
}
