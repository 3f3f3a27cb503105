// The dashboard's CSV downloads: the same exports as REST's `?format=csv` (the ledger's, the charges'),
// written by the same domain writers, opened with the session cookie instead of an API key, so that a
// plain link on the Balance and Payouts pages downloads them. A download is a read: no CSRF token is
// needed (another site cannot read the answer), but it comes from our own origin, and a `mode`
// naming the mode the page shows must be the session's (a tab left in test mode after another tab
// switched to live gets 409 `session_mode_changed`, never the other mode's data).
import type { FastifyInstance, FastifyRequest } from "fastify";
import type { Prisma } from "../db/client.js";
import { balanceTransactionsCsv } from "../domain/balance-transactions.js";
import { chargesCsv } from "../domain/charges-csv.js";
import { inScope, modeName, type Scope } from "../domain/scope.js";
import { sendCsv } from "../http/csv.js";
import type { RateLimiter } from "../http/rate-limit.js";
import { sessionModeChanged } from "../http/session-cookie.js";
import { requestSession } from "./session-cookie.js";

export interface ExportDeps {
  prisma: Prisma;
  rateLimiter: RateLimiter;
  publicUrl: string;
}

/** What each download writes, from the scope and the export's query (its filters, without `mode`). */
const EXPORTS = {
  balance_transactions: balanceTransactionsCsv,
  charges: chargesCsv,
} as const;

/** Registers GET /dashboard/exports/balance_transactions.csv and /dashboard/exports/charges.csv. */
export function dashboardExportRoutes(app: FastifyInstance, { prisma, rateLimiter, publicUrl }: ExportDeps): void {
  /** The session's scope; 401 `session_invalid` without a cookie. Each download spends the session's list budget. */
  const scopeOf = async (req: FastifyRequest, mode: string | undefined): Promise<Scope> => {
    const principal = await requestSession(req, { prisma, rateLimiter, publicUrl }, false);
    if (mode !== undefined && mode !== modeName(principal.livemode)) throw sessionModeChanged(principal.livemode, "mode");
    await rateLimiter.consume(principal.credentialId, "list");
    return inScope(principal);
  };

  for (const [name, write] of Object.entries(EXPORTS)) {
    app.get<{ Querystring: Record<string, unknown> }>(`/dashboard/exports/${name}.csv`, async (req, reply) => {
      const { mode, ...filters } = req.query ?? {};
      const scope = await scopeOf(req, typeof mode === "string" ? mode : undefined);
      // The query is checked before the stream starts, so its errors are still JSON bodies.
      return sendCsv(reply, name, scope.livemode, write(prisma, scope, filters));
    });
  }
}
