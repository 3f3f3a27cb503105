// Expiring charges: the sweep that moves PENDING charges past their time (by the chains' clocks) to
// EXPIRED, and the test helper that expires one now.
import type { Prisma } from "../../db/client.js";
import { Prisma as P } from "../../generated/prisma/client.js";
import { AppError } from "../errors.js";
import { EXPIRY_CAUSE, recordEvents } from "../events.js";
import { toUnits } from "../money.js";
import { inScope, type Scope } from "../scope.js";
import { nextStatus } from "./lifecycle.js";
import { moneyOnItsWay } from "./money-on-its-way.js";
import { type Charge, CHARGE_COLUMNS, getCharge } from "./read.js";
import { chargeResource } from "./resource.js";
import type { ChangeSettings } from "./settings.js";

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
