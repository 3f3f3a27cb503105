// Creating a charge: checks what the request cannot say alone (the amount's bounds, the redirect
// URLs for the mode, the customer, the settlement wallet), then writes the row and its
// `charge.pending` event in one statement, guarded by the merchant's terms (./terms.ts).
import { CURRENT_CONTRACT_VERSION, predictCloneV2 } from "../../chain/clones.js";
import { type Prisma, queryRows } from "../../db/client.js";
import { isForeignKeyViolation, isUniqueViolation } from "../../db/errors.js";
import { Prisma as P } from "../../generated/prisma/client.js";
import { AppError, invalidParam } from "../errors.js";
import { eventWrites, eventsWritten, QUEUED_DELIVERIES, type RecordedEvent } from "../events.js";
import { newId } from "../ids.js";
import { assertLiveChain } from "../live-chains.js";
import { mergeMetadata } from "../metadata.js";
import { formatAmount, parseAmount } from "../money.js";
import { inScope, type Scope } from "../scope.js";
import { type Charge, CHARGE_COLUMNS_TEXT, chargeFromRow } from "./read.js";
import type { ChargeRequest } from "./requests.js";
import { chargeResource } from "./resource.js";
import type { ChargeSettings } from "./settings.js";
import { type ChargeTerms, missingCustomer, readChargeTerms, termsHold } from "./terms.js";

const MINUTE_MS = 60_000;

/** Where a charge came from: an invoice, or a payment link (with the email its buyer gave, when it asks one). */
export type ChargeOrigin = { invoiceId: string } | { paymentLinkId: string; customerEmail?: string | null; linkSessionHash?: string | null };

/**
 * Creates a PENDING charge. The merchant's fee and settlement wallet for the mode are copied onto
 * it, so later settings changes never redirect its funds: 400 `settlement_wallet_missing` without one;
 * a live one needs an enabled live chain (400 `chain_unsupported`, domain/live-chains.ts).
 * 409 `duplicate_order_id` while another charge for the same order is open.
 */
export async function createCharge(prisma: Prisma, scope: Scope, data: ChargeRequest, settings: ChargeSettings, now = new Date()): Promise<Charge> {
  const { charge, events } = await insertCharge(prisma, scope, data, settings, now);
  if (events.length > 0) settings.feed?.changed([charge]);
  return charge;
}

/** How often a charge is written again after its merchant's terms changed under it (each time read afresh). */
const TERMS_ATTEMPTS = 3;

/**
 * `createCharge` without the announcement, so it can run inside a caller's transaction (which
 * announces once it commits). A charge paying an invoice takes no underpayment tolerance: the
 * invoice counts what is still due. One round trip when the merchant's terms are remembered
 * (domain/charges/terms.ts).
 */
export async function insertCharge(
  db: Prisma | P.TransactionClient,
  scope: Scope,
  data: ChargeRequest,
  settings: ChargeSettings,
  now: Date,
  origin?: ChargeOrigin,
): Promise<{ charge: Charge; events: RecordedEvent[] }> {
  const amount = parseAmount(data.amount);
  if (amount === null) throw invalidParam("amount", 'Invalid amount: must be a decimal string with at most 6 decimals, such as "25.00"');
  if (amount < settings.amount.min || amount > settings.amount.max) {
    throw invalidParam("amount", `Invalid amount: must be between ${formatAmount(settings.amount.min)} and ${formatAmount(settings.amount.max)} USDC`);
  }
  for (const param of ["successUrl", "cancelUrl"] as const) checkRedirectUrl(data[param], param, scope.livemode);
  let terms = settings.terms?.get(scope) ?? (await readChargeTerms(db, scope, data.customerId));
  assertLiveChain(scope.livemode, settings.chains);
  const id = newId("chrg");
  for (let attempt = 1; ; attempt++) {
    const charge = chargeRow(id, scope, data, amount, terms, settings, now, origin);
    const events = eventWrites([{ scope, type: "charge.pending", data: chargeResource(charge, settings) }], P.sql`EXISTS (SELECT 1 FROM inserted)`);
    const created = await writeCharge(db, charge, termsHold(scope, terms, charge.customerId), events.sql, data);
    if (created) {
      settings.terms?.set(scope, terms);
      eventsWritten(db, events.recorded, created.queuedDeliveries);
      return { charge: created.charge, events: events.recorded };
    }
    settings.terms?.forget(scope);
    if (attempt === TERMS_ATTEMPTS) throw new Error(`merchant ${scope.merchantId}'s charge terms changed during ${attempt} attempts to create a charge`);
    terms = await readChargeTerms(db, scope, data.customerId);
  }
}

/** The new charge's row, built here so that it and its `charge.pending` event go in one statement. */
function chargeRow(
  id: string,
  scope: Scope,
  data: ChargeRequest,
  amount: bigint,
  terms: ChargeTerms,
  settings: ChargeSettings,
  now: Date,
  origin: ChargeOrigin | undefined,
): Charge {
  const { feeBps, wallet } = terms;
  return {
    id,
    ...inScope(scope),
    kind: "charge",
    customerId: data.customerId ?? null,
    orderId: data.orderId,
    amount,
    amountReceived: null,
    feeAmount: null,
    netAmount: null,
    currency: "USDC",
    status: "PENDING",
    feeBps,
    underpaymentToleranceBps: origin && "invoiceId" in origin ? 0 : terms.underpaymentToleranceBps,
    settlementWallet: wallet,
    contractVersion: CURRENT_CONTRACT_VERSION,
    // Known now and the same on every chain: money sent there before the pick is counted too.
    depositAddress: settings.factory ? predictCloneV2({ factory: settings.factory, chargeId: id, wallet, feeBps }) : null,
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
}

/**
 * Inserts `charge` with its events, only while `guard` holds; null when it did not (nothing written).
 * The values are cast, as an INSERT … SELECT does not type them from the columns.
 */
async function writeCharge(
  db: Prisma | P.TransactionClient,
  c: Charge,
  guard: P.Sql,
  events: P.Sql,
  data: ChargeRequest,
): Promise<{ charge: Charge; queuedDeliveries: number } | null> {
  try {
    // Below the ORM on the root client (db/client.ts, queryRows): amounts come back as text, as chargeFromRow reads them.
    const [row] = await queryRows<Record<string, unknown> & { queuedDeliveries: number }>(
      db,
      P.sql`
      WITH inserted AS (
        INSERT INTO charges (id, merchant_id, livemode, customer_id, order_id, amount, fee_bps, underpayment_tolerance_bps, settlement_wallet,
                             contract_version, deposit_address, description, metadata, success_url, cancel_url, expires_at, created_at, updated_at,
                             invoice_id, payment_link_id, customer_email, link_session_hash)
        SELECT ${c.id}::text, ${c.merchantId}::text, ${c.livemode}::boolean, ${c.customerId}::text, ${c.orderId}::text, ${c.amount}::bigint,
               ${c.feeBps}::int, ${c.underpaymentToleranceBps}::int, ${c.settlementWallet}::text, ${c.contractVersion}::int, ${c.depositAddress}::text,
               ${c.description}::text, ${c.metadata === null ? null : JSON.stringify(c.metadata)}::jsonb, ${c.successUrl}::text, ${c.cancelUrl}::text,
               ${c.expiresAt}::timestamptz, ${c.createdAt}::timestamptz, ${c.updatedAt}::timestamptz, ${c.invoiceId}::text, ${c.paymentLinkId}::text,
               ${c.customerEmail}::text, ${c.linkSessionHash}::text
        WHERE ${guard}
        RETURNING ${P.raw(CHARGE_COLUMNS_TEXT)}
      ), ${events}
      SELECT inserted.*, ${QUEUED_DELIVERIES} AS "queuedDeliveries" FROM inserted`,
    );
    if (!row) return null;
    const { queuedDeliveries, ...charge } = row;
    return { charge: chargeFromRow(charge), queuedDeliveries };
  } catch (e) {
    // The only unique key a new charge can hit is the open-orderId index (ids are random).
    if (isUniqueViolation(e)) throw new AppError("duplicate_order_id", `An open charge for order '${data.orderId}' already exists`, "orderId");
    // The customer was deleted between the check and the insert.
    if (isForeignKeyViolation(e)) throw missingCustomer(data.customerId!);
    throw e;
  }
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
