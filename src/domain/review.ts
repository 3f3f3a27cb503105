// Charges that need review (.docs/ledger.md): the ledger and the chain disagree about them, found by a
// reconciliation (a clone holding more or less than its ledger rows say, a confirmed transfer the chain
// no longer has) or by a reorg deeper than the confirmations. Nothing is silently corrected: the charge
// shows `needsReview` with the reason, `charge.needs_review` is recorded once per new finding, and it
// stays so until an operator or the merchant marks it reviewed (`charge.reviewed`). The merchant's
// users get an `alert` email once per charge and reason.
import type { Prisma } from "../db/client.js";
import type { Prisma as P } from "../generated/prisma/client.js";
import type { ChangeSettings } from "./charges/settings.js";
import { type Charge, CHARGE_COLUMNS, getCharge } from "./charges/read.js";
import { chargeResource } from "./charges/resource.js";
import { recordEvents } from "./events.js";
import type { Scope } from "./scope.js";
import { alertTeam } from "./team-emails.js";

/** The longest reason kept on a charge. */
const MAX_REASON = 1_000;

/**
 * Inside `tx`: flags each charge of `reasons` (charge id → why) as needing review. A charge already
 * flagged for the same reason, or whose review of that very finding is done, is left as it is; a new
 * reason replaces the old one and is announced.
 */
export async function flagForReview(tx: P.TransactionClient, reasons: ReadonlyMap<string, string>, settings: ChangeSettings, now: Date): Promise<Charge[]> {
  const charges: Charge[] = [];
  for (const [id, why] of reasons) {
    const reason = why.slice(0, MAX_REASON);
    const [flagged] = await tx.$queryRaw<Charge[]>`
      UPDATE charges SET review_reason = ${reason}, review_at = ${now}, updated_at = ${now}
      WHERE id = ${id} AND review_reason IS DISTINCT FROM ${reason} AND reviewed_reason IS DISTINCT FROM ${reason} RETURNING ${CHARGE_COLUMNS}`;
    if (flagged) charges.push(flagged);
  }
  await alertTeam(
    tx,
    charges.map((c) => ({ charge: c, kind: "review" as const, reason: c.reviewReason! })),
    settings.publicUrl,
  );
  await recordEvents(
    tx,
    charges.map((c) => ({ scope: c, type: "charge.needs_review" as const, data: chargeResource(c, settings) })),
  );
  return charges;
}

/** `flagForReview` in its own transaction, announced to live views once it commits. */
export async function flagChargesForReview(
  prisma: Prisma,
  reasons: ReadonlyMap<string, string>,
  settings: ChangeSettings,
  now = new Date(),
): Promise<Charge[]> {
  if (reasons.size === 0) return [];
  const charges = await prisma.$transaction((tx) => flagForReview(tx, reasons, settings, now));
  settings.feed?.changed(charges);
  return charges;
}

/**
 * Marks a charge of `scope` reviewed: someone looked at what the reconciliation found and acted (the
 * .docs/ledger.md says how); that finding will not flag it again, a different one will. Records
 * `charge.reviewed`; a charge that needs no review is returned as it is.
 */
export async function markChargeReviewed(prisma: Prisma, scope: Scope, id: string, settings: ChangeSettings, now = new Date()): Promise<Charge> {
  await getCharge(prisma, scope, id);
  const done = await prisma.$transaction(async (tx) => {
    const [reviewed] = await tx.$queryRaw<Charge[]>`
      UPDATE charges SET reviewed_reason = review_reason, review_reason = NULL, review_at = ${now}, updated_at = ${now}
      WHERE id = ${id} AND review_reason IS NOT NULL RETURNING ${CHARGE_COLUMNS}`;
    if (!reviewed) return null;
    await recordEvents(tx, [{ scope: reviewed, type: "charge.reviewed", data: chargeResource(reviewed, settings) }]);
    return reviewed;
  });
  if (!done) return getCharge(prisma, scope, id);
  settings.feed?.changed([done]);
  return done;
}
