// The security history (.docs/dashboard.md "Security history"): every sign-in and its failures, and
// every change to who may act for a merchant or where its money and events go, with who, from where
// and when. Written in the transaction of the change it records where there is one, so a change is
// never without its record; kept SECURITY_EVENT_RETENTION_DAYS and then deleted by the worker.
import type { Prisma as P } from "../generated/prisma/client.js";
import type { Prisma } from "../db/client.js";
import { newId } from "./ids.js";

/** What the history records. */
export const SECURITY_EVENT_TYPES = [
  "sign_in",
  "sign_in_failed",
  "sign_out",
  "session_expired",
  "password_changed",
  "password_reset",
  "api_key_created",
  "api_key_rolled",
  "api_key_revoked",
  "wallet_changed",
  "user_invited",
  "user_joined",
  "user_removed",
  "role_changed",
  "two_factor_enabled",
  "two_factor_disabled",
  "webhook_endpoint_changed",
] as const;
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
export const OPERATOR: Actor = { userId: null, email: null, ip: null, userAgent: null };

/** Records one security event of `merchantId`, in the caller's transaction when given one (with the acting user's email as it is now). */
export async function recordSecurityEvent(
  db: Prisma | P.TransactionClient,
  merchantId: string,
  type: SecurityEventType,
  actor: Actor,
  detail: Record<string, unknown> | null = null,
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
      // A user agent is the client's to choose: keep what identifies a browser, not a novel.
      userAgent: actor.userAgent?.slice(0, 512) ?? null,
      detail: (detail ?? undefined) as P.InputJsonValue | undefined,
      createdAt: now,
    },
  });
}
