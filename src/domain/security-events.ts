// The security history (.docs/dashboard.md "Security history"): every sign-in and its failures, and
// every change to who may act for a merchant or where its money and events go, with who, from where
// and when. Written in the transaction of the change it records where there is one, so a change is
// never without its record; kept SECURITY_EVENT_RETENTION_DAYS and then deleted by the worker.
import type { Prisma } from "../db/client.js";
import type { Prisma as P, SecurityEvent } from "../generated/prisma/client.js";
import { csvLines, olderThan } from "./csv.js";
import { newId } from "./ids.js";
import { keysetPage, type Page, type PageEnd } from "./paging.js";
import { SECURITY_EVENT_TYPES, type SecurityEventFilters, type SecurityEventListQuery } from "./security-event-requests.js";

export type { SecurityEvent };

// Defined with the requests that filter by them; the GraphQL door finds them here with the history.
export { SECURITY_EVENT_TYPES };
export type SecurityEventType = (typeof SECURITY_EVENT_TYPES)[number];

/** How long the history is kept. */
export const SECURITY_EVENT_RETENTION_DAYS = 365;

/** Who acted and from where: a dashboard session's user and request, or the operator's CLI (all null). */
export interface Actor {
  userId: string | null;
  /** Null: the user's email is read when the event is recorded. */
  email: string | null;
  ip: string | null;
  userAgent: string | null;
}

/** The CLI's actor: the operator on the server, no user, no address. */
export const OPERATOR_ACTOR: Actor = { userId: null, email: null, ip: null, userAgent: null };

/** Records one security event of `merchantId`, in the caller's transaction when given one (with the acting user's email as it is now). */
export async function recordSecurityEvent(
  db: Prisma | P.TransactionClient,
  merchantId: string,
  type: SecurityEventType,
  actor: Actor,
  detail: P.InputJsonObject | null = null,
  now = new Date(),
): Promise<void> {
  const email = actor.email ?? (actor.userId ? ((await db.user.findUnique({ where: { id: actor.userId }, select: { email: true } }))?.email ?? null) : null);
  await db.securityEvent.create({
    data: {
      id: newId("sev"),
      merchantId,
      type,
      userId: actor.userId,
      email,
      ip: actor.ip,
      userAgent: agentOf(actor.userAgent),
      detail: detail ?? undefined,
      createdAt: now,
    },
  });
}

/** A user agent as kept: the client's to choose, so what identifies a browser, not a novel. */
function agentOf(userAgent: string | null): string | null {
  return userAgent?.slice(0, 512) ?? null;
}

/** Where a request comes from: its address and browser (a user agent), as the history records them. */
export type Client = Pick<Actor, "ip" | "userAgent">;

/** The actor of `user` acting from `client`. */
export function actorOf(user: { id: string; email: string }, client: Client): Actor {
  return { userId: user.id, email: user.email, ip: client.ip, userAgent: client.userAgent };
}

/** Why a sign-in failed, as its event's detail says. */
export type SignInFailure = "wrong_password" | "two_factor_code_missing" | "wrong_two_factor_code" | "locked";

/** A locked email's attempts are recorded once per this long (the sign-in budget's window): a flood of them costs nothing else and must not bury the history. */
const LOCKED_RECORD_MS = 15 * 60_000;

/**
 * Records a failed sign-in of `email` (normalized) when it is a user's; an email nobody has records
 * nothing, in the same one statement, so that a failure costs the same whether the email is known or not.
 * Attempts refused because the email is locked are recorded once per LOCKED_RECORD_MS.
 */
export async function recordSignInFailure(db: Prisma, email: string, reason: SignInFailure, client: Client, now = new Date()): Promise<void> {
  const since = new Date(now.getTime() - (reason === "locked" ? LOCKED_RECORD_MS : 0));
  await db.$executeRaw`
    INSERT INTO security_events (id, merchant_id, type, user_id, email, ip, user_agent, detail, created_at)
    SELECT ${newId("sev")}, u.merchant_id, 'sign_in_failed', u.id, ${email}, ${client.ip}, ${agentOf(client.userAgent)},
           ${JSON.stringify({ reason })}::jsonb, ${now}
    FROM users u WHERE u.email = ${email}
      AND NOT EXISTS (
        SELECT 1 FROM security_events e
        WHERE e.merchant_id = u.merchant_id AND e.created_at > ${since} AND e.user_id = u.id
          AND e.type = 'sign_in_failed' AND e.detail->>'reason' = ${reason} AND ${reason} = 'locked')`;
}

/** The where-clause of a merchant's history with `filters`. */
function historyWhere(merchantId: string, f: SecurityEventFilters): P.SecurityEventWhereInput {
  return {
    merchantId,
    ...(f.type && { type: f.type }),
    ...(f.userId && { userId: f.userId }),
    ...((f.createdGte || f.createdLt) && { createdAt: { ...(f.createdGte && { gte: f.createdGte }), ...(f.createdLt && { lt: f.createdLt }) } }),
  };
}

/** One page of a merchant's security history, newest first, with cursor paging and the filters. */
export async function listSecurityEvents(
  prisma: Prisma,
  merchantId: string,
  query: SecurityEventListQuery,
  end: PageEnd = "newest",
): Promise<Page<SecurityEvent>> {
  const { limit, startingAfter, endingBefore, ...filters } = query;
  const where = historyWhere(merchantId, filters);
  return keysetPage(
    "security event",
    { limit, startingAfter, endingBefore },
    (id) => prisma.securityEvent.findFirst({ where: { id, merchantId }, select: { id: true, createdAt: true } }),
    (q) => prisma.securityEvent.findMany({ where: { AND: [where, q.where] }, orderBy: q.orderBy, take: q.take }),
    end,
  );
}

/** How many events of a merchant's history match `filters` (GraphQL's `totalCount`). */
export function countSecurityEvents(prisma: Prisma, merchantId: string, filters: SecurityEventFilters): Promise<number> {
  return prisma.securityEvent.count({ where: historyWhere(merchantId, filters) });
}

/** The columns of the history's CSV export, in order (its header row). */
export const SECURITY_EVENT_CSV_COLUMNS = ["id", "createdAt", "type", "userId", "email", "ip", "userAgent", "detail"] as const;

/**
 * A merchant's whole history matching `filters` (the list's, no paging), newest first, as CSV lines:
 * the header, then one line per event.
 */
export function securityEventsCsv(prisma: Prisma, merchantId: string, filters: SecurityEventFilters): AsyncGenerator<string> {
  const where = historyWhere(merchantId, filters);
  return csvLines(
    SECURITY_EVENT_CSV_COLUMNS,
    (after, take) =>
      prisma.securityEvent.findMany({ where: after ? { AND: [where, olderThan(after)] } : where, orderBy: [{ createdAt: "desc" }, { id: "desc" }], take }),
    (e) => ({
      id: e.id,
      createdAt: e.createdAt.toISOString(),
      type: e.type,
      userId: e.userId,
      email: e.email,
      ip: e.ip,
      userAgent: e.userAgent,
      detail: e.detail === null ? null : JSON.stringify(e.detail),
    }),
  );
}

/**
 * Deletes up to `batchSize` events older than SECURITY_EVENT_RETENTION_DAYS before `now`; returns how
 * many. The worker calls it until a batch comes back short, so that no one statement holds many locks.
 */
export async function deleteExpiredSecurityEvents(prisma: Prisma, now: Date, batchSize: number): Promise<number> {
  const cutoff = new Date(now.getTime() - SECURITY_EVENT_RETENTION_DAYS * 86_400_000);
  // SKIP LOCKED: two workers pruning at once take different rows.
  return prisma.$executeRaw`
    DELETE FROM security_events WHERE id IN (
      SELECT id FROM security_events WHERE created_at < ${cutoff} ORDER BY created_at LIMIT ${batchSize} FOR UPDATE SKIP LOCKED)`;
}
