// The charges as one CSV for accountants (GET /v1/charges/export.csv, the dashboard's export): every
// charge matching the list's filters (status, customer, search, createdGte/createdLt), newest first,
// written by the one CSV writer (domain/csv.ts) a batch at a time. Amounts are the API's decimal
// strings, money fields the ledger's sums as the charge carries them.
import type { Prisma } from "../db/client.js";
import type { Charge } from "../generated/prisma/client.js";
import { amountOverpaid } from "./charges/display.js";
import { chargeFilter } from "./charges/list.js";
import type { ChargeFilters } from "./charges/requests.js";
import { csvLines, olderThan } from "./csv.js";
import { formatAmount, formatAmountOrNull } from "./money.js";
import type { Scope } from "./scope.js";

/** The columns of the charges export, in order (its header row). */
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
] as const;

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
