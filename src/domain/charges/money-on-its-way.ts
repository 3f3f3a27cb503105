// Money on its way to a charge: what a cancel and an expiry wait for.
import { Prisma as P } from "../../generated/prisma/client.js";
import { type ChangeSettings, dustLimit } from "./settings.js";

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
