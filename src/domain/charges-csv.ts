// The charges as one CSV for accountants (GET /v1/charges/export.csv, the dashboard's export): every
// charge matching the list's filters (status, customer, search, createdGte/createdLt), newest first,
// written by the one CSV writer (domain/csv.ts) a batch at a time. Amounts are the API's decimal
// strings, money fields the ledger's sums as the charge carries them.
import type { Prisma } from "../db/client.js";
import type { Charge } from "./charges/read.js";
import { amountOverpaid } from "./charges/display.js";
import { chargeFilter } from "./charges/list.js";
import type { ChargeFilters } from "./charges/requests.js";
import { ChargeResource } from "./charges/resource.js";
import { csvLines, olderThan } from "./csv.js";
import { describe } from "./describe.js";
import { formatAmount, formatAmountOrNull } from "./money.js";
import type { Scope } from "./scope.js";

/** The columns of the charges export, in order (its header row): fields of the API's charge, named and meant alike. */
export const CHARGE_CSV_COLUMNS = [
  "id",
  "orderId",
  "status",
  "amount",
  "amountReceived",
  "amountRefunded",
  "feeAmount",
  "netAmount",
  "amountOverpaid",
  "currency",
  "chainId",
  "customerId",
  "customerEmail",
  "description",
  "invoiceId",
  "paymentLinkId",
  "needsReview",
  "createdAt",
  "completedAt",
  "livemode",
] as const satisfies readonly (keyof ChargeResource)[];

/**
 * The one column that holds something else than the API's field of its name: the export has always
 * given the linked customer's email there, which accountants match on, where the API's customerEmail
 * is the email a payment link asked for. Renaming it would break their sheets; it is described here.
 */
const OWN_DESCRIPTIONS: Partial<Record<(typeof CHARGE_CSV_COLUMNS)[number], string>> = {
  customerEmail: "The email of the customer the charge is for (customerId); empty without one.",
};

/** Each column of the export with the description of the charge field it holds (the API reference lists them). */
export function chargeCsvColumns(): { name: (typeof CHARGE_CSV_COLUMNS)[number]; description: string }[] {
  return CHARGE_CSV_COLUMNS.map((name) => ({ name, description: OWN_DESCRIPTIONS[name] ?? describe(ChargeResource, name) }));
}

type ChargeWithEmail = Charge & { customer: { email: string } | null };

/** One charge as its export line shows it. */
function chargeRecord(c: ChargeWithEmail): Record<(typeof CHARGE_CSV_COLUMNS)[number], string | number | boolean | null> {
  return {
    id: c.id,
    orderId: c.orderId,
    status: c.status,
    amount: formatAmount(c.amount),
    amountReceived: formatAmountOrNull(c.amountReceived),
    amountRefunded: formatAmount(c.amountRefunded),
    feeAmount: formatAmountOrNull(c.feeAmount),
    netAmount: formatAmountOrNull(c.netAmount),
    amountOverpaid: formatAmount(amountOverpaid(c)),
    currency: c.currency,
    chainId: c.chainId,
    customerId: c.customerId,
    customerEmail: c.customer?.email ?? null,
    description: c.description,
    invoiceId: c.invoiceId,
    paymentLinkId: c.paymentLinkId,
    needsReview: c.reviewReason !== null,
    createdAt: c.createdAt.toISOString(),
    completedAt: c.completedAt?.toISOString() ?? null,
    livemode: c.livemode,
  };
}

/**
 * Every charge of `scope` matching the list's `filters` (no page: an export is every matching
 * charge), newest first, as CSV lines: the header, then one line per charge.
 */
export function chargesCsv(prisma: Prisma, scope: Scope, filters: ChargeFilters): AsyncGenerator<string> {
  const where = chargeFilter(scope, filters);
  return csvLines(
    CHARGE_CSV_COLUMNS,
    (after, take) =>
      prisma.charge.findMany({
        where: after ? { AND: [where, olderThan(after)] } : where,
        include: { customer: { select: { email: true } } },
        orderBy: [{ createdAt: "desc" }, { id: "desc" }],
        take,
      }),
    chargeRecord,
  );
}
