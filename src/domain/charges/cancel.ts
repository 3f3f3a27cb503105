// Cancelling a charge: the merchant's cancel, and the same step inside a caller's transaction.
import type { Prisma } from "../../db/client.js";
import type { Prisma as P } from "../../generated/prisma/client.js";
import { notFound } from "../errors.js";
import { type RecordedEvent, recordEvent } from "../events.js";
import type { Scope } from "../scope.js";
import { cancelStatus } from "./lifecycle.js";
import { moneyOnItsWay } from "./money-on-its-way.js";
import { type Charge, CHARGE_COLUMNS } from "./read.js";
import { chargeResource } from "./resource.js";
import type { ChangeSettings } from "./settings.js";

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
      FROM charges WHERE id = ${id} AND merchant_id = ${scope.merchantId} AND livemode = ${scope.livemode} AND kind = 'charge' FOR UPDATE`;
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
