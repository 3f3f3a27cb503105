// The dashboard's CSV downloads: the same exports as REST's GET /v1/…/export.csv (the ledger's, the charges'),
// written by the same domain writers, opened with the session cookie instead of an API key, so that a
// plain link on the Balance and Payouts pages downloads them. A download is a read: no CSRF token is
// needed (another site cannot read the answer), but it comes from our own origin, and a `mode`
// naming the mode the page shows must be the session's (a tab left in test mode after another tab
// switched to live gets 409 `session_mode_changed`, never the other mode's data). The security
// history's download is the merchant's in both modes, for owners and admins only.
import type { FastifyInstance, FastifyRequest } from "fastify";
import type { Prisma } from "../db/client.js";
import { filterSchema as ledgerFilters } from "../domain/balance-transaction-requests.js";
import { balanceTransactionsCsv } from "../domain/balance-transactions.js";
import { chargesCsv } from "../domain/charges-csv.js";
import { filtersOnly } from "../domain/charges/requests.js";
import { authorize } from "../domain/permissions.js";
import { inScope, modeName, type Scope } from "../domain/scope.js";
import type { SessionPrincipal } from "../domain/sessions.js";
import { filterSchema as securityFilters } from "../domain/security-event-requests.js";
import { securityEventsCsv } from "../domain/security-events.js";
import { parseInput } from "../domain/validation.js";
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
  balance_transactions: (prisma: Prisma, scope: Scope, query: unknown) => balanceTransactionsCsv(prisma, scope, parseInput(ledgerFilters, query)),
  charges: (prisma: Prisma, scope: Scope, query: unknown) => chargesCsv(prisma, scope, parseInput(filtersOnly, query)),
} as const;

/**
 * Registers GET /dashboard/exports/balance_transactions.csv, /dashboard/exports/charges.csv and
 * /dashboard/security-events.csv.
 */
export function dashboardExportRoutes(app: FastifyInstance, { prisma, rateLimiter, publicUrl }: ExportDeps): void {
  /** The session; 401 `session_invalid` without a cookie. Each download spends the session's list budget. */
  const sessionOf = async (req: FastifyRequest): Promise<SessionPrincipal> => {
    const principal = await requestSession(req, { prisma, rateLimiter, publicUrl }, false);
    await rateLimiter.consume(principal.credentialId, "list");
    return principal;
  };
  /** The session's scope, in the mode the page shows. */
  const scopeOf = async (req: FastifyRequest, mode: string | undefined): Promise<Scope> => {
    const principal = await sessionOf(req);
    if (mode !== undefined && mode !== modeName(principal.livemode)) throw sessionModeChanged(principal.livemode, "mode");
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

  app.get<{ Querystring: Record<string, unknown> }>("/dashboard/security-events.csv", async (req, reply) => {
    const principal = await sessionOf(req);
    authorize(principal.role, "security");
    return sendCsv(reply, "security_events", null, securityEventsCsv(prisma, principal.merchantId, parseInput(securityFilters, req.query ?? {})));
  });
}
