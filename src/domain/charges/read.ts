// Reading a charge: every column under its Prisma field name (for raw SQL that returns charges), the
// same with the amounts as text (for the path below the ORM), and the two lookups the API offers.
import { selectRows, type Prisma } from "../../db/client.js";
import { type Charge as ChargeModel, Prisma as P } from "../../generated/prisma/client.js";
import { AppError, notFound } from "../errors.js";
import type { Units } from "../money.js";
import type { Scope } from "../scope.js";

/**
 * A charge as the domain reads it. `amount` is int8 in this release and numeric(78,0) from the next
 * (prisma/contract-next/): a release reading it must take either, so it is read with `toUnits`.
 */
export type Charge = Omit<ChargeModel, "amount"> & { amount: Units };

/** The Charge model's amount columns (numeric, and `amount`, int8 until the next release). */
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
  `id, merchant_id AS "merchantId", livemode, kind, customer_id AS "customerId", order_id AS "orderId", currency, status::text AS status`,
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

// Every column of the Charge model under its Prisma field name (a test holds it equal to the model):
// for raw SQL inside a transaction that locks, updates or returns charges. Every amount comes back as
// a decimal, `amount` too: cast to numeric, it reads the same whether its column is int8 or numeric.
// Outside a transaction, getCharge and getChargeByOrderId read through selectRows.
export const CHARGE_COLUMNS = P.raw([...OTHER_COLUMNS, ...amounts("::numeric(78,0)")].join(", "));
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
  const charge = await selectCharge(prisma, "id = $1 AND merchant_id = $2 AND livemode = $3 AND kind = 'charge'", [id, scope.merchantId, scope.livemode]);
  if (!charge) throw notFound("charge", id);
  return charge;
}

/** The newest charge for an order of this merchant and mode, whatever its status, or 404. */
export async function getChargeByOrderId(prisma: Prisma, scope: Scope, orderId: string): Promise<Charge> {
  const charge = await selectCharge(prisma, "merchant_id = $1 AND livemode = $2 AND order_id = $3 AND kind = 'charge' ORDER BY created_at DESC, id DESC", [
    scope.merchantId,
    scope.livemode,
    orderId,
  ]);
  if (!charge) throw new AppError("resource_missing", `No charge for order '${orderId}'`, "orderId");
  return charge;
}

/** The first charge `condition` (and its order) selects, or null. A hot read: below the ORM (db/client.ts, selectRows). */
async function selectCharge(prisma: Prisma, condition: string, params: unknown[]): Promise<Charge | null> {
  const [row] = await selectRows<Record<string, unknown>>(prisma, `SELECT ${CHARGE_COLUMNS_TEXT} FROM charges WHERE ${condition} LIMIT 1`, params);
  return row ? chargeFromRow(row) : null;
}
