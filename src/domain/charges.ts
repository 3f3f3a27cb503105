// Charges: a merchant's request to be paid an amount of USDC for one order. Status changes go
// through ./charge-lifecycle.ts; this module reads, writes and shapes charges.
import { z } from "zod";
import { CURRENT_CONTRACT_VERSION, predictCloneV2 } from "../chain/clones.js";
import { explorerAddressUrl } from "../chain/registry.js";
import { type Prisma, selectRows } from "../db/client.js";
import { type Charge, Prisma as P } from "../generated/prisma/client.js";
import { amountOverpaid } from "./charge-display.js";
import { CHARGE_STATUSES, cancelStatus, nextStatus } from "./charge-lifecycle.js";
import { AppError, invalidParam, notFound, unknownReference } from "./errors.js";
import { isForeignKeyViolation, isUniqueViolation } from "../db/errors.js";
import {
  countsByParent,
  keysetPage,
  keysetSql,
  type Page,
  type PageEnd,
  pageParams,
  type PageRequest,
  pagesByParent,
  type Position,
  type RelatedRows,
  type Relation,
} from "./paging.js";
import { searchCondition, searchFilter } from "./charge-search.js";
import { PaymentResource } from "./payment-schema.js";
import { EXPIRY_CAUSE, eventWrites, eventsWritten, type RecordedEvent, recordEvent, recordEvents } from "./events.js";
import type { ChargeFeed } from "./live.js";
import { newId } from "./ids.js";
import { type Metadata, MetadataShape, mergeMetadata, metadataInput } from "./metadata.js";
import { formatAmount, formatAmountOrNull, parseAmount, toUnits, type Units } from "./money.js";
import { assertLiveChain } from "./live-chains.js";
import { inScope, type Scope } from "./scope.js";
import { settlementWalletMissing } from "./settlement-wallets.js";
import { SettlementResource, settlementResource, storedSettlements } from "./settlements.js";
import { amountInput, instantParam, integerField, integerParam, parseInput } from "./validation.js";

export type { Charge };

/**
 * A charge whose money fields may be bigints as well as stored numerics: what the API shapes, so a
 * change can show the charge as it is after each of its steps before the row is written.
 */
export type ChargeView = Omit<Charge, "amountReceived" | "feeAmount" | "netAmount" | "settledAmount" | "amountRefunded"> & {
  amountReceived: Units | null;
  feeAmount: Units | null;
  netAmount: Units | null;
  settledAmount: Units;
  amountRefunded: Units;
};

/** Service settings that shape charges. */
export interface ChargeSettings {
  /** Bounds of `amount`, in base units. */
  amount: { min: bigint; max: bigint };
  /** Hosted payment pages live at `{paymentBaseUrl}/<chargeId>`. */
  paymentBaseUrl: string;
  /** Announces committed changes to live subscribers; none in code that has no subscribers. */
  feed?: ChargeFeed | undefined;
  /** Payment without gas (GASLESS_MIN_AMOUNT); the default where unset. */
  gasless?: { minAmount: bigint };
  /** RELAYER_GAS_BUDGET_PER_MERCHANT: a merchant's relayer gas per chain and UTC day for sweeps and payments without gas; the default where unset. */
  relayerGasBudget?: bigint;
  /** The ChargeFactoryV2 of the enabled chains: a charge's address is fixed at creation (none: at the pick). */
  factory?: string | null;
  /**
   * Dust (PAYOUT_MIN_AMOUNT, else 0.01 USDC): confirmed money below it does not hold up completion, and a payment seen
   * below it holds nothing up. What a clone must hold before it is paid out is its chain's own minimum (EnabledChain).
   */
  payoutMinAmount?: bigint;
  /**
   * The enabled chains: each one's indexer watches every version-2 charge address of its mode, so
   * each one's clock has a say in when such a charge expires (none: the wall clock decides).
   */
  chains?: readonly ExpiryChain[];
  /** PUBLIC_URL: alerts emailed to the team link the charge's dashboard page under it (none: no link). */
  publicUrl?: string;
}

/** An enabled chain as expiry needs it: its id and mode. */
export interface ExpiryChain {
  chainId: number;
  /** Testnets and the devnet serve test mode, mainnets live mode. */
  testnet: boolean;
}

/** What a change to a charge needs: links for its event snapshot, the feed that announces it, the dust limit, the chains whose clocks expire it. */
export type ChangeSettings = Pick<ChargeSettings, "paymentBaseUrl" | "feed" | "payoutMinAmount" | "chains" | "publicUrl">;

/** The dust limit's default (PAYOUT_MIN_AMOUNT unset): 0.01 USDC. */
export const DEFAULT_PAYOUT_MIN_AMOUNT = 10_000n;

/** The dust limit: less than this left in a charge's clones neither holds up its completion nor counts as money on its way. */
export function dustLimit(settings: Pick<ChangeSettings, "payoutMinAmount">): bigint {
  return settings.payoutMinAmount ?? DEFAULT_PAYOUT_MIN_AMOUNT;
}

const MINUTE_MS = 60_000;

// Printable: no control, format or line/paragraph separator characters.
const printable = /^[^\p{Cc}\p{Cf}\p{Zl}\p{Zp}]+$/u;

const redirectUrl = z.string().max(2048).nullable().optional();

/** The longest order id: also the longest path parameter any route takes. */
export const ORDER_ID_MAX_LENGTH = 200;

/** The body of POST /v1/charges (and the createCharge mutation's input). */
export const createSchema = z.strictObject(
  {
    orderId: z.string().min(1).max(ORDER_ID_MAX_LENGTH).regex(printable, "must contain only printable characters"),
    amount: amountInput("25.00"),
    description: z.string().max(1000).nullable().optional(),
    customerId: z.string().min(1).max(100).nullable().optional(),
    metadata: metadataInput.optional(),
    successUrl: redirectUrl,
    cancelUrl: redirectUrl,
    expiresInMinutes: integerField(5, 10_080).default(30),
  },
  { error: "must be a JSON object" },
);

/** The public JSON form of a charge (spec 2.2 plus the fields the OpenAPI `Charge` schema adds); also the event snapshot. */
export const ChargeResource = z.object({
  id: z.string(),
  object: z.literal("charge"),
  livemode: z.boolean(),
  orderId: z.string(),
  amount: z.string().describe('USDC, e.g. "25.00".'),
  amountReceived: z.string().nullable().describe("Confirmed money in the clone."),
  amountOverpaid: z
    .string()
    .describe('Confirmed money received beyond amount ("0.00" when none): what the buyer paid too much, yours to refund. Refunds do not lower it.'),
  amountRefunded: z.string().describe("Paid back to the buyer by your wallet: the completed refunds."),
  feeAmount: z.string().nullable(),
  netAmount: z.string().nullable(),
  currency: z.string(),
  status: z.enum(CHARGE_STATUSES),
  cloneAddress: z.string().nullable().describe("Where to pay, once the buyer picked a chain."),
  chainId: z.number().int().nullable(),
  paymentUrl: z.string().describe("The hosted payment page."),
  explorerUrl: z.string().nullable(),
  feeBps: z.number().int(),
  flushTxHash: z.string().nullable(),
  expiresAt: z.string(),
  createdAt: z.string(),
  completedAt: z.string().nullable(),
  deployedAt: z.string().nullable(),
  customerId: z.string().nullable(),
  description: z.string().nullable(),
  metadata: MetadataShape.nullable(),
  successUrl: z.string().nullable(),
  cancelUrl: z.string().nullable(),
  settlements: z.array(SettlementResource).describe("Every confirmed payout from the clone, oldest first, whoever sent it."),
  payoutBlockedReason: z.string().nullable().describe("Why money in the clone cannot be paid out right now, or null."),
  needsReview: z.boolean().describe("True when the ledger and the chain disagree about this charge (see reviewReason); the money fields may not be final."),
  reviewReason: z.string().nullable().describe("What the reconciliation or a deep reorg found, until the charge is marked reviewed."),
  strayAssets: z
    .array(z.object({ chainId: z.number().int(), token: z.string().describe('A token address, or "native".'), amount: z.string().describe("Base units.") }))
    .describe("Other tokens and the native coin found at the charge's address: they can be swept to your wallet."),
  invoiceId: z.string().nullable().describe("The invoice this charge pays (made from its hosted page), or null."),
  paymentLinkId: z.string().nullable().describe("The payment link a buyer made this charge from, or null."),
  customerEmail: z
    .string()
    .nullable()
    .describe("The email the buyer gave on a payment link that asks for it (collectEmail): where the receipt goes without a customer."),
});
export type ChargeResource = z.infer<typeof ChargeResource>;

/**
 * What some charge events add to the charge they carry (.docs/webhooks.md); never in an API answer.
 * The OpenAPI document gives each event type the fields it may carry (rest/schemas/events.ts).
 */
export const ChargeEventExtras = z.object({
  payments: z.array(PaymentResource).optional().describe("The confirmed payments the event reports, in chain order."),
  underpaidAmount: z.string().optional().describe("What is missing when money within the underpayment tolerance was accepted."),
  overpaidAmount: z.string().optional().describe('What was paid beyond amount ("0.00" when nothing): the charge\'s amountOverpaid when it completed.'),
});
export type ChargeEventExtras = z.infer<typeof ChargeEventExtras>;

/** Shapes a stored charge as the API shows it. */
export function chargeResource(c: ChargeView, settings: Pick<ChargeSettings, "paymentBaseUrl">): ChargeResource {
  return {
    id: c.id,
    object: "charge",
    livemode: c.livemode,
    orderId: c.orderId,
    amount: formatAmount(c.amount),
    amountReceived: formatAmountOrNull(c.amountReceived),
    amountOverpaid: formatAmount(amountOverpaid(c)),
    amountRefunded: formatAmount(c.amountRefunded),
    feeAmount: formatAmountOrNull(c.feeAmount),
    netAmount: formatAmountOrNull(c.netAmount),
    currency: c.currency,
    status: c.status,
    cloneAddress: c.cloneAddress,
    chainId: c.chainId,
    ...chargeLinks(c, settings),
    feeBps: c.feeBps,
    flushTxHash: c.flushTxHash,
    expiresAt: c.expiresAt.toISOString(),
    createdAt: c.createdAt.toISOString(),
    completedAt: c.completedAt?.toISOString() ?? null,
    deployedAt: c.deployedAt?.toISOString() ?? null,
    customerId: c.customerId,
    description: c.description,
    metadata: c.metadata as Metadata | null,
    successUrl: c.successUrl,
    cancelUrl: c.cancelUrl,
    settlements: storedSettlements(c).map(settlementResource),
    payoutBlockedReason: c.payoutBlockedReason,
    needsReview: c.reviewReason !== null,
    reviewReason: c.reviewReason,
    strayAssets: Array.isArray(c.strayAssets) ? (c.strayAssets as ChargeResource["strayAssets"]) : [],
    invoiceId: c.invoiceId,
    paymentLinkId: c.paymentLinkId,
    customerEmail: c.customerEmail ?? null,
  };
}

/** Where the buyer pays (the hosted page) and where anyone can watch the clone (the explorer). */
export function chargeLinks(
  c: Pick<Charge, "id" | "chainId" | "cloneAddress">,
  settings: Pick<ChargeSettings, "paymentBaseUrl">,
): { paymentUrl: string; explorerUrl: string | null } {
  const explorerUrl = c.chainId !== null && c.cloneAddress !== null ? explorerAddressUrl(c.chainId, c.cloneAddress) : null;
  return { paymentUrl: `${settings.paymentBaseUrl}/${c.id}`, explorerUrl };
}

/** What a charge is made to pay when not a merchant's own order: an invoice or a payment link. */
/** Where a charge came from: an invoice, or a payment link (with the email its buyer gave, when it asks one). */
export type ChargeOrigin = { invoiceId: string } | { paymentLinkId: string; customerEmail?: string | null; linkSessionHash?: string | null };

/**
 * Creates a PENDING charge. The merchant's fee and settlement wallet for the mode are copied onto
 * it, so later settings changes never redirect its funds: 400 `settlement_wallet_missing` without one;
 * a live one needs an enabled live chain (400 `chain_unsupported`, domain/live-chains.ts).
 * 409 `duplicate_order_id` while another charge for the same order is open.
 */
export async function createCharge(prisma: Prisma, scope: Scope, input: unknown, settings: ChargeSettings, now = new Date()): Promise<Charge> {
  const { charge, events } = await insertCharge(prisma, scope, input, settings, now);
  if (events.length > 0) settings.feed?.changed([charge]);
  return charge;
}

/**
 * `createCharge` without the announcement, so it can run inside a caller's transaction (which
 * announces once it commits). A charge paying an invoice takes no underpayment tolerance: the
 * invoice counts what is still due.
 */
export async function insertCharge(
  db: Prisma | P.TransactionClient,
  scope: Scope,
  input: unknown,
  settings: ChargeSettings,
  now: Date,
  origin?: ChargeOrigin,
): Promise<{ charge: Charge; events: RecordedEvent[] }> {
  const data = parseInput(createSchema, input);
  const amount = parseAmount(data.amount);
  if (amount === null) throw invalidParam("amount", 'Invalid amount: must be a decimal string with at most 6 decimals, such as "25.00"');
  if (amount < settings.amount.min || amount > settings.amount.max) {
    throw invalidParam("amount", `Invalid amount: must be between ${formatAmount(settings.amount.min)} and ${formatAmount(settings.amount.max)} USDC`);
  }
  for (const param of ["successUrl", "cancelUrl"] as const) checkRedirectUrl(data[param], param, scope.livemode);

  const [merchant, customer] = await Promise.all([
    db.merchant.findUniqueOrThrow({
      where: { id: scope.merchantId },
      select: { feeBps: true, underpaymentToleranceBps: true, testWallet: true, liveWallet: true },
    }),
    data.customerId ? db.customer.findFirst({ where: { id: data.customerId, ...inScope(scope) }, select: { id: true } }) : null,
  ]);
  if (data.customerId && !customer) throw missingCustomer(data.customerId);
  const wallet = scope.livemode ? merchant.liveWallet : merchant.testWallet;
  if (!wallet) throw settlementWalletMissing(scope.livemode);
  assertLiveChain(scope.livemode, settings.chains);
  const id = newId("chrg");
  const feeBps = merchant.feeBps;
  // Known now and the same on every chain: money sent there before the pick is counted too.
  const depositAddress = settings.factory ? predictCloneV2({ factory: settings.factory, chargeId: id, wallet, feeBps }) : null;
  // Built here, so the row and its `charge.pending` event go in one statement (the create path is hot).
  const charge: Charge = {
    id,
    ...inScope(scope),
    customerId: data.customerId ?? null,
    orderId: data.orderId,
    amount,
    amountReceived: null,
    feeAmount: null,
    netAmount: null,
    currency: "USDC",
    status: "PENDING",
    feeBps,
    underpaymentToleranceBps: origin && "invoiceId" in origin ? 0 : merchant.underpaymentToleranceBps,
    settlementWallet: wallet,
    contractVersion: CURRENT_CONTRACT_VERSION,
    depositAddress,
    chainId: null,
    confirmations: null,
    cloneAddress: null,
    flushTxHash: null,
    description: data.description ?? null,
    metadata: mergeMetadata(null, data.metadata),
    successUrl: data.successUrl ?? null,
    cancelUrl: data.cancelUrl ?? null,
    expiresAt: new Date(now.getTime() + data.expiresInMinutes * MINUTE_MS),
    createdAt: now,
    updatedAt: now,
    completedAt: null,
    deployedAt: null,
    settledAmount: new P.Decimal(0),
    amountRefunded: new P.Decimal(0),
    settlements: [],
    payoutBlockedReason: null,
    payoutBlockedAt: null,
    expiryExtendedMinutes: 0,
    reviewReason: null,
    reviewAt: null,
    reviewedReason: null,
    strayAssets: [],
    invoiceId: origin && "invoiceId" in origin ? origin.invoiceId : null,
    paymentLinkId: origin && "paymentLinkId" in origin ? origin.paymentLinkId : null,
    customerEmail: origin && "paymentLinkId" in origin ? (origin.customerEmail ?? null) : null,
    linkSessionHash: origin && "paymentLinkId" in origin ? (origin.linkSessionHash ?? null) : null,
  };
  const events = eventWrites([{ scope, type: "charge.pending", data: chargeResource(charge, settings) }]);
  try {
    const [created] = await db.$queryRaw<Charge[]>`
      WITH inserted AS (
        INSERT INTO charges (id, merchant_id, livemode, customer_id, order_id, amount, fee_bps, underpayment_tolerance_bps, settlement_wallet,
                             contract_version, deposit_address, description, metadata, success_url, cancel_url, expires_at, created_at, updated_at,
                             invoice_id, payment_link_id, customer_email, link_session_hash)
        VALUES (${charge.id}, ${charge.merchantId}, ${charge.livemode}, ${charge.customerId}, ${charge.orderId}, ${amount}, ${charge.feeBps},
                ${charge.underpaymentToleranceBps}, ${wallet}, ${charge.contractVersion}, ${depositAddress}, ${charge.description},
                ${charge.metadata === null ? null : JSON.stringify(charge.metadata)}::jsonb, ${charge.successUrl}, ${charge.cancelUrl}, ${charge.expiresAt},
                ${now}, ${now}, ${charge.invoiceId}, ${charge.paymentLinkId}, ${charge.customerEmail}, ${charge.linkSessionHash})
        RETURNING ${CHARGE_COLUMNS}
      ), ${events.sql}
      SELECT * FROM inserted`;
    eventsWritten(db, events.recorded);
    return { charge: created!, events: events.recorded };
  } catch (e) {
    // The only unique key a new charge can hit is the open-orderId index (ids are random).
    if (isUniqueViolation(e)) throw new AppError("duplicate_order_id", `An open charge for order '${data.orderId}' already exists`, "orderId");
    // The customer was deleted between the check and the insert.
    if (isForeignKeyViolation(e)) throw missingCustomer(data.customerId!);
    throw e;
  }
}

/**
 * Whether money is on its way to the charge `charges` (as the query names its row): a payment seen in
 * a block before its expiry and not yet confirmed, or a buyer's authorization accepted and not yet
 * spent or expired on chain (whatever became of our relay). A cancel or an expiry waits for it. Dust
 * (below the payout minimum) holds nothing up: 1 base unit a block must not keep a charge open.
 */
export function moneyOnItsWay(settings: Pick<ChangeSettings, "payoutMinAmount">): P.Sql {
  const dust = dustLimit(settings);
  return P.sql`(EXISTS (SELECT 1 FROM chain_transfers t WHERE t.charge_id = charges.id AND t.kind = 'PAYMENT' AND t.status = 'SEEN'
      AND t.amount >= ${dust} AND (t.block_time IS NULL OR t.block_time < charges.expires_at))
    OR EXISTS (SELECT 1 FROM authorizations a WHERE a.charge_id = charges.id AND a.purpose = 'PAYMENT' AND a.ended_at IS NULL))`;
}

/** The Charge model's amount columns (int8 and numeric, which the drivers parse differently). */
const AMOUNT_COLUMNS = {
  amount: "amount",
  amountReceived: "amount_received",
  feeAmount: "fee_amount",
  netAmount: "net_amount",
  settledAmount: "settled_amount",
  amountRefunded: "amount_refunded",
} as const;
/** The Charge model's amount fields: the ones that travel as decimal strings of base units. */
export const AMOUNT_FIELDS = Object.keys(AMOUNT_COLUMNS) as (keyof typeof AMOUNT_COLUMNS)[];
const OTHER_COLUMNS = [
  `id, merchant_id AS "merchantId", livemode, customer_id AS "customerId", order_id AS "orderId", currency, status::text AS status`,
  `fee_bps AS "feeBps", underpayment_tolerance_bps AS "underpaymentToleranceBps", settlement_wallet AS "settlementWallet", chain_id AS "chainId", confirmations, clone_address AS "cloneAddress"`,
  `contract_version AS "contractVersion", deposit_address AS "depositAddress"`,
  `flush_tx_hash AS "flushTxHash", description, metadata, success_url AS "successUrl", cancel_url AS "cancelUrl"`,
  `expires_at AS "expiresAt", created_at AS "createdAt", updated_at AS "updatedAt", completed_at AS "completedAt", deployed_at AS "deployedAt", settlements`,
  `payout_blocked_reason AS "payoutBlockedReason", payout_blocked_at AS "payoutBlockedAt", expiry_extended_minutes AS "expiryExtendedMinutes"`,
  `review_reason AS "reviewReason", review_at AS "reviewAt", reviewed_reason AS "reviewedReason", stray_assets AS "strayAssets"`,
  `invoice_id AS "invoiceId", payment_link_id AS "paymentLinkId", customer_email AS "customerEmail"`,
  `link_session_hash AS "linkSessionHash"`,
];
const amounts = (cast: string) => Object.entries(AMOUNT_COLUMNS).map(([field, column]) => `${column}${cast} AS "${field}"`);

// Every column of the Charge model under its Prisma field name (a test holds it equal to the model).
export const CHARGE_COLUMNS = P.raw([...OTHER_COLUMNS, ...amounts("")].join(", "));
/** The same columns with the amounts as text, for `selectRows`; `chargeFromRow` reads them. */
export const CHARGE_COLUMNS_TEXT = [...OTHER_COLUMNS, ...amounts("::text")].join(", ");

/** A charge from a row selected with CHARGE_COLUMNS_TEXT (or any object with its amounts as text). */
export function chargeFromRow(row: Record<string, unknown>): Charge {
  const decimal = (v: unknown) => (v === null ? null : new P.Decimal(v as string));
  return {
    ...row,
    amount: BigInt(row.amount as string),
    amountReceived: decimal(row.amountReceived),
    feeAmount: decimal(row.feeAmount),
    netAmount: decimal(row.netAmount),
    settledAmount: new P.Decimal(row.settledAmount as string),
    amountRefunded: new P.Decimal(row.amountRefunded as string),
  } as Charge;
}

/** Retrieves a charge of this merchant and mode, or 404. */
export async function getCharge(prisma: Prisma, scope: Scope, id: string): Promise<Charge> {
  // A hot read: below the ORM (db/client.ts, selectRows).
  const [row] = await selectRows<Record<string, unknown>>(
    prisma,
    `SELECT ${CHARGE_COLUMNS_TEXT} FROM charges WHERE id = $1 AND merchant_id = $2 AND livemode = $3`,
    [id, scope.merchantId, scope.livemode],
  );
  if (!row) throw notFound("charge", id);
  return chargeFromRow(row);
}

/** The newest charge for an order of this merchant and mode, whatever its status, or 404. */
export async function getChargeByOrderId(prisma: Prisma, scope: Scope, orderId: string): Promise<Charge> {
  const [row] = await selectRows<Record<string, unknown>>(
    prisma,
    `SELECT ${CHARGE_COLUMNS_TEXT} FROM charges WHERE merchant_id = $1 AND livemode = $2 AND order_id = $3 ORDER BY created_at DESC, id DESC LIMIT 1`,
    [scope.merchantId, scope.livemode, orderId],
  );
  if (!row) throw new AppError("resource_missing", `No charge for order '${orderId}'`, "orderId");
  return chargeFromRow(row);
}

/** What `search` finds (domain/charge-search.ts), as the API documents it. */
export const SEARCH_DESCRIPTION =
  'The start of a charge id, an order id, a clone address, a transaction hash (of a payment, a payout or a refund) or a customer\'s email (any case); a hash shortened as "0x1234abcd…89abcdef"; or an exact amount such as "12.50".';

const filterSchema = {
  status: z.enum(CHARGE_STATUSES, { error: `must be one of ${CHARGE_STATUSES.join(", ")}` }).optional(),
  needsReview: z
    .enum(["true", "false"], { error: "must be true or false" })
    .optional()
    .describe("Only charges that need review (true) or that do not (false)."),
  customerId: z.string().min(1).max(100).optional(),
  search: z.string().trim().min(1).max(100).optional().describe(SEARCH_DESCRIPTION),
  createdGte: instantParam().optional().describe("Only charges created at or after this instant (ISO 8601)."),
  createdLt: instantParam().optional().describe("Only charges created before this instant (ISO 8601)."),
};

/** The query of GET /v1/charges: numbered pages (`page`, the contract's) or cursors (`startingAfter`/`endingBefore`), not both. */
export const listSchema = z.strictObject({
  page: integerParam(1, 100_000).optional().describe("Numbered paging: 1 (the default) is the newest page. Not with startingAfter or endingBefore."),
  ...pageParams,
  ...filterSchema,
});
/** The filters alone: what the CSV export (domain/charges-csv.ts) and GraphQL's counts take. */
export const filtersOnly = z.strictObject(filterSchema);

export type ChargeFilters = z.input<typeof filtersOnly>;
type Filters = z.output<typeof filtersOnly>;

/**
 * The where-clause of a charge list: this merchant and mode, optionally one status, customer, search
 * or creation range. A search here scans what the rest selects: the lists read it through its indexes (`filterSql`).
 */
export function chargeFilter(scope: Scope, input: unknown): P.ChargeWhereInput {
  return filterWhere(scope, parseInput(filtersOnly, input));
}

/** `chargeFilter` on filters already read. */
function filterWhere(scope: Scope, f: Filters): P.ChargeWhereInput {
  return {
    ...inScope(scope),
    ...(f.status && { status: f.status }),
    ...(f.customerId && { customerId: f.customerId }),
    ...(f.needsReview && { reviewReason: f.needsReview === "true" ? { not: null } : null }),
    ...(f.search && searchFilter(f.search)),
    ...((f.createdGte || f.createdLt) && { createdAt: { ...(f.createdGte && { gte: f.createdGte }), ...(f.createdLt && { lt: f.createdLt }) } }),
  };
}

/** The filters in SQL over `charges`, for a list with a search: its lookups go through expression indexes, which Prisma cannot write. */
function filterSql(scope: Scope, f: Filters & { search: string }): P.Sql {
  return P.join(
    [
      P.sql`merchant_id = ${scope.merchantId} AND livemode = ${scope.livemode}`,
      searchCondition(scope, f.search),
      ...(f.status ? [P.sql`status = ${f.status}::"ChargeStatus"`] : []),
      ...(f.customerId ? [P.sql`customer_id = ${f.customerId}`] : []),
      ...(f.needsReview ? [f.needsReview === "true" ? P.sql`review_reason IS NOT NULL` : P.sql`review_reason IS NULL`] : []),
      ...(f.createdGte ? [P.sql`created_at >= ${f.createdGte}`] : []),
      ...(f.createdLt ? [P.sql`created_at < ${f.createdLt}`] : []),
    ],
    " AND ",
  );
}

/** A search's filters, or null without a search. */
function searched(f: Filters): (Filters & { search: string }) | null {
  return f.search ? { ...f, search: f.search } : null;
}

/** The charges with `ids`, in that order (with the relations `include` asks for). */
async function chargesInOrder(prisma: Prisma, ids: { id: string }[], include?: P.ChargeInclude): Promise<Charge[]> {
  if (ids.length === 0) return [];
  const rows = await prisma.charge.findMany({ include, where: { id: { in: ids.map((r) => r.id) } } });
  const byId = new Map(rows.map((c) => [c.id, c]));
  return ids.flatMap((r) => byId.get(r.id) ?? []);
}

/** Newest first, ties broken by id so pages never overlap or skip. */
export const CHARGE_ORDER: P.ChargeOrderByWithRelationInput[] = [{ createdAt: "desc" }, { id: "desc" }];

/** A numbered page of charges: its place and the total count besides the keyset page's fields. */
export interface NumberedPage extends Page<Charge> {
  page: number;
  limit: number;
  total: number;
}

/**
 * One page of charges for REST: by cursor when `startingAfter` or `endingBefore` is given (as every
 * other list), else by number with the total count (`page`, default 1, as the contract keeps it).
 */
export async function listCharges(prisma: Prisma, scope: Scope, input: unknown): Promise<NumberedPage | Page<Charge>> {
  const { page, ...params } = parseInput(listSchema, input);
  const cursor = params.startingAfter !== undefined ? "startingAfter" : params.endingBefore !== undefined ? "endingBefore" : null;
  if (cursor !== null && page !== undefined) throw invalidParam(cursor, `Page by number (page) or by cursor (${cursor}), not both`);
  if (cursor !== null) return pageCharges(prisma, scope, params);
  // No cursor was given, so the rest are the filters: the page is the keyset order from the newest, offset.
  const { limit, ...filters } = params;
  const f = parseInput(filtersOnly, filters);
  const number = page ?? 1;
  const [data, total] = await Promise.all([
    readPage(prisma, scope, f, { limit, offset: (number - 1) * limit }).then((p) => p.data),
    countCharges(prisma, scope, filters),
  ]);
  return { data, page: number, limit, total, hasMore: (number - 1) * limit + data.length < total };
}

const pageSchema = z.strictObject({ ...pageParams, ...filterSchema });

/**
 * One keyset page of charges, newest first (GraphQL's connections, and REST's list given a cursor).
 * `include` loads relations in the same read (what a GraphQL selection asks for).
 */
export async function pageCharges(prisma: Prisma, scope: Scope, input: unknown, include?: P.ChargeInclude, end: PageEnd = "newest"): Promise<Page<Charge>> {
  const { limit, startingAfter, endingBefore, ...f } = parseInput(pageSchema, input);
  return readPage(prisma, scope, f, { limit, startingAfter, endingBefore }, include, end);
}

/** The page `request` asks for among the charges matching `f`; a search reads its ids through the expression indexes first. */
function readPage(prisma: Prisma, scope: Scope, f: Filters, request: PageRequest, include?: P.ChargeInclude, end: PageEnd = "newest"): Promise<Page<Charge>> {
  const search = searched(f);
  const where = filterWhere(scope, f);
  return keysetPage(
    "charge",
    request,
    (id) => locateCharge(prisma, scope, id),
    search
      ? async (q) => {
          const keyset = keysetSql(q);
          const ids = await prisma.$queryRaw<{ id: string }[]>`
            SELECT id FROM charges WHERE ${filterSql(scope, search)} AND ${keyset.where} ${keyset.orderLimit}`;
          return chargesInOrder(prisma, ids, include);
        }
      : (q) => prisma.charge.findMany({ include, where: { AND: [where, q.where] }, orderBy: q.orderBy, take: q.take, skip: q.skip }),
    end,
  );
}

/** Where a cursor's charge sits in the list, if the scope has it. */
function locateCharge(prisma: Prisma, scope: Scope, id: string): Promise<Position | null> {
  return prisma.charge.findFirst({ where: { id, ...inScope(scope) }, select: { id: true, createdAt: true } });
}

/** The charges of customers or payment links (by `parent`), a page of each read for all at once (GraphQL's nested connections). */
export function relatedCharges(prisma: Prisma, scope: Scope, parent: Relation["parent"], include?: P.ChargeInclude): RelatedRows<Charge> {
  const relation: Relation = { table: "charges", parent };
  return {
    kind: "charge",
    locate: (id) => locateCharge(prisma, scope, id),
    pages: (ids, q) => pagesByParent(prisma, scope, relation, ids, q, (chargeIds) => prisma.charge.findMany({ include, where: { id: { in: chargeIds } } })),
    counts: (ids) => countsByParent(prisma, scope, relation, ids),
  };
}

/** How many charges match the list filters (GraphQL's `totalCount`). */
export async function countCharges(prisma: Prisma, scope: Scope, filters: unknown): Promise<number> {
  const f = parseInput(filtersOnly, filters);
  const search = searched(f);
  if (!search) return prisma.charge.count({ where: filterWhere(scope, f) });
  const [row] = await prisma.$queryRaw<{ count: number }[]>`SELECT count(*)::int AS count FROM charges WHERE ${filterSql(scope, search)}`;
  return row!.count;
}

/**
 * Cancels a PENDING charge; a CANCELLED one is returned unchanged. Confirmed partial money is then
 * paid out to the merchant (the charge is due for a payout once it is not PENDING); a payment seen
 * but not yet confirmed makes it 409 `charge_payment_confirming`.
 */
export async function cancelCharge(prisma: Prisma, scope: Scope, id: string, settings: ChangeSettings, now = new Date()): Promise<Charge> {
  const { charge, event } = await prisma.$transaction(async (tx) => {
    // The row lock orders this against a payment being confirmed for the same charge.
    const rows = await tx.$queryRaw<(Charge & { confirming: boolean })[]>`
      SELECT ${CHARGE_COLUMNS}, ${moneyOnItsWay(settings)} AS confirming
      FROM charges WHERE id = ${id} AND merchant_id = ${scope.merchantId} AND livemode = ${scope.livemode} FOR UPDATE`;
    const found = rows[0];
    if (!found) throw notFound("charge", id);
    const { confirming, ...charge } = found;
    return cancelLockedCharge(tx, charge, confirming, settings, now);
  });
  if (event) settings.feed?.changed([charge]);
  return charge;
}

/**
 * Inside `tx`, with `charge`'s row locked: cancels it as `cancelCharge` does (`confirming`: a payment
 * to it waits for confirmations). The event is null when it was CANCELLED already.
 */
export async function cancelLockedCharge(
  tx: P.TransactionClient,
  charge: Charge,
  confirming: boolean,
  settings: ChangeSettings,
  now: Date,
): Promise<{ charge: Charge; event: RecordedEvent | null }> {
  const status = cancelStatus(charge, confirming, now);
  if (status === null) return { charge, event: null };
  const cancelled = await tx.charge.update({ where: { id: charge.id }, data: { status } });
  return { charge: cancelled, event: await recordEvent(tx, cancelled, "charge.cancelled", chargeResource(cancelled, settings)) };
}

/**
 * When time is up for `charges` (as the query names its row): the earliest confirmed clock
 * (chain_cursors.confirmed_time) among the chains that could have paid it, its picked chain and, for
 * a version-2 address, every enabled chain of its mode (each one's indexer watches that address);
 * NULL, never due, while one of them has no confirmed clock yet. A charge no chain watches (no
 * address, no enabled chain) goes by the wall clock, `now`.
 */
function expiryClock(settings: Pick<ChangeSettings, "chains">, now: Date): P.Sql {
  const chainsOf = (testnet: boolean) => (settings.chains ?? []).filter((c) => c.testnet === testnet).map((c) => c.chainId);
  return P.sql`(SELECT CASE WHEN count(*) = 0 THEN ${now}::timestamptz WHEN count(cc.confirmed_time) = count(*) THEN min(cc.confirmed_time) END
    FROM (SELECT unnest(CASE WHEN charges.contract_version = 2 AND charges.deposit_address IS NOT NULL
                   THEN CASE WHEN charges.livemode THEN ${chainsOf(false)}::int[] ELSE ${chainsOf(true)}::int[] END END) AS chain_id
          UNION SELECT charges.chain_id WHERE charges.chain_id IS NOT NULL) AS watching
    LEFT JOIN chain_cursors cc ON cc.chain_id = watching.chain_id)`;
}

/** Which charges `expireDueCharges` looks at. */
export interface ExpiryOptions {
  limit?: number;
  /** Only this charge. */
  only?: string;
  /** Expire by `now` alone, without waiting for the chains' clocks (the test helper). */
  force?: boolean;
}

/**
 * Moves up to `limit` PENDING charges whose time is up to EXPIRED, records `charge.expired` (nothing
 * received) or `charge.underpaid` (a partial amount, which is then paid out to the merchant) for
 * each, and returns them. Time is up by the chains' clocks (see expiryClock): every chain that could
 * have paid the charge has confirmed past `expiresAt`, so every payment in an earlier block is
 * already counted, whatever the wall clock said while the worker was down or one chain's indexer
 * lagged. A charge with money still on its way is left until it arrives or is gone. One statement
 * per batch, safe to run in any number of processes at once: rows another sweep holds are skipped,
 * and each charge is written only while still PENDING, so none expires twice.
 */
export async function expireDueCharges(prisma: Prisma, settings: ChangeSettings, now: Date, options: ExpiryOptions = {}): Promise<Charge[]> {
  const { limit = 500, only, force = false } = options;
  const clock = force ? P.sql`${now}::timestamptz` : expiryClock(settings, now);
  const expired = await prisma.$transaction(async (tx) => {
    // The first bound (no charge's clock is later than the latest clock there is) lets the partial
    // index over PENDING charges find the candidates: the cost is the due rows only.
    const due = await tx.$queryRaw<(Charge & { clock: Date })[]>`
      SELECT ${CHARGE_COLUMNS}, ${clock} AS clock
      FROM charges WHERE status = 'PENDING' AND expires_at <= GREATEST(${now}::timestamptz, (SELECT max(confirmed_time) FROM chain_cursors))
        AND expires_at <= ${clock}
        AND NOT ${moneyOnItsWay(settings)} ${only === undefined ? P.empty : P.sql`AND charges.id = ${only}`}
      ORDER BY expires_at LIMIT ${limit} FOR UPDATE SKIP LOCKED`;
    if (due.length === 0) return [];
    // The query chose them, but the state machine has the last word (it throws on a disagreement).
    for (const { clock, ...c } of due) nextStatus(c, "expire", clock);
    const ids = due.map((c) => c.id);
    const expired = await tx.$queryRaw<Charge[]>`
      UPDATE charges SET status = 'EXPIRED', updated_at = now() WHERE id = ANY(${ids}) AND status = 'PENDING' RETURNING ${CHARGE_COLUMNS}`;
    await recordEvents(
      tx,
      expired.map((c) => ({
        scope: c,
        type: c.amountReceived !== null && toUnits(c.amountReceived) > 0n ? "charge.underpaid" : "charge.expired",
        data: chargeResource(c, settings),
        cause: EXPIRY_CAUSE,
      })),
    );
    return expired;
  });
  if (expired.length > 0) settings.feed?.changed(expired);
  return expired;
}

/**
 * Test helper (.docs/payments.md "Charges"): expires a test-mode PENDING charge now, as the sweep would when its
 * time is up (charge.expired, or charge.underpaid with confirmed partial money), without waiting for
 * the chain's clock. 400 `test_mode_only` for a live key, 409 `charge_not_payable` for a charge no
 * longer PENDING, 409 `charge_payment_confirming` while money to it is on its way.
 */
export async function expireChargeNow(prisma: Prisma, scope: Scope, id: string, settings: ChangeSettings, now = new Date()): Promise<Charge> {
  if (scope.livemode)
    throw new AppError("test_mode_only", "Test helpers work in test mode only: use a test key (sk_test_…). A live charge expires when its time is up.");
  const charge = await getCharge(prisma, scope, id);
  if (charge.status !== "PENDING") throw new AppError("charge_not_payable", `Only a PENDING charge can expire; this one is ${charge.status}.`, "id");
  const confirming = () =>
    new AppError(
      "charge_payment_confirming",
      "Money to this charge is on its way (a payment waiting for confirmations, or one without gas being relayed): try again once it arrives.",
      "id",
    );
  const [onItsWay] = await prisma.$queryRaw<{ yes: boolean }[]>`SELECT ${moneyOnItsWay(settings)} AS yes FROM charges WHERE id = ${id}`;
  if (onItsWay?.yes) throw confirming();
  await prisma.charge.updateMany({ where: { id, ...inScope(scope), status: "PENDING", expiresAt: { gt: now } }, data: { expiresAt: now } });
  const [expired] = await expireDueCharges(prisma, settings, now, { limit: 1, only: id, force: true });
  if (expired) return expired;
  // Not expired: another writer got there first (a cancel, a confirmed payment), or money was seen
  // on its way meanwhile, which the sweep waits for too.
  const current = await getCharge(prisma, scope, id);
  if (current.status === "PENDING") throw confirming();
  return current;
}

function missingCustomer(id: string): AppError {
  return unknownReference("customer", id, "customerId");
}

/** Redirect targets must be absolute https URLs; test mode also allows http (local shops). */
export function checkRedirectUrl(value: string | null | undefined, param: string, livemode: boolean): void {
  if (value == null) return;
  const allowed = livemode ? ["https:"] : ["https:", "http:"];
  const url = URL.canParse(value) ? new URL(value) : null;
  if (!url || !allowed.includes(url.protocol) || !url.hostname) {
    throw invalidParam(param, `Invalid ${param}: must be an absolute ${livemode ? "https" : "http(s)"} URL`);
  }
}
