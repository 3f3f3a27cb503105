// The team's rules (.docs/dashboard.md "Roles"), beyond what each role may do (domain/permissions.ts):
// a merchant always keeps an owner; nobody changes their own role; only owners make an owner, or
// change or remove an owner. Each change locks the merchant's row first, so two changes at once (two
// owners demoting each other) cannot both see another owner left. The operator's CLI may do anything
// but leave the merchant's users without an owner. Invitations follow the same owner rule
// (domain/invitations.ts). Changing who is in the team and what they may do is a way in, like a new API
// key: it awaits `confirm` (the password again, from the dashboard) first, so a stolen session alone
// cannot remove the owners or promote an accomplice.
import type { Prisma } from "../db/client.js";
import type { Prisma as P, User } from "../generated/prisma/client.js";
import type { Confirmation } from "./confirmation.js";
import { AppError } from "./errors.js";
import { parseRole, ROLES, type Role } from "./permissions.js";
import { type Actor, recordSecurityEvent } from "./security-events.js";
import { securityNotice } from "./team-emails.js";
import { type UserView, userView } from "./users.js";

/** Who changes the team: a signed-in user with their role, or the operator's CLI. */
export type TeamActor = { userId: string; role: Role } | "operator";

/** 403 `permission_denied` unless `by` may touch an owner (owners and the operator). */
function requireOwner(by: TeamActor, message: string): void {
  if (by !== "operator" && by.role !== "owner") throw new AppError("permission_denied", message);
}

/** 409 `last_owner` when `target` is the only owner of its merchant (read under the merchant's lock, and once before it to refuse early). */
async function keepAnOwner(tx: Prisma | P.TransactionClient, target: User, message: string): Promise<void> {
  if (target.role !== "owner") return;
  const owners = await tx.user.count({ where: { merchantId: target.merchantId, role: "owner" } });
  if (owners <= 1) throw new AppError("last_owner", message);
}

/** Locks the merchant's row and reads `target` again under the lock: the role checked is the one changed. */
async function lockedTarget(tx: P.TransactionClient, target: Pick<User, "id" | "merchantId">): Promise<User> {
  await tx.$queryRaw`SELECT id FROM merchants WHERE id = ${target.merchantId} FOR UPDATE`;
  return tx.user.findUniqueOrThrow({ where: { id: target.id } });
}

/**
 * Gives `target` the role `role` (owner, admin, developer, support or viewer): 400 naming `role` for
 * another value, 403 `permission_denied` for one's own role or an owner's without being one, 409
 * `last_owner` when it would leave the merchant without an owner. Ends the user's sessions (they sign
 * in again under the new role) and, for a former owner, their pending owner invitations. Records `role_changed`.
 */
export async function setUserRole(
  prisma: Prisma,
  by: TeamActor,
  target: Pick<User, "id" | "merchantId">,
  role: unknown,
  confirm: Confirmation,
  actor: Actor,
): Promise<UserView> {
  const to = parseRole(role);
  if (!to) throw new AppError("parameter_invalid", `Invalid role: must be one of ${ROLES.join(", ")}.`, "role");
  if (by !== "operator" && by.userId === target.id)
    throw new AppError("permission_denied", "Nobody changes their own role: ask another owner or admin of your team.");
  /** Whether the rules let `user`'s role become `to` (false: it already is); throws their refusal. */
  const allowed = async (db: Prisma | P.TransactionClient, user: User) => {
    if (user.role === to) return false;
    if (user.role === "owner" || to === "owner") requireOwner(by, "Only owners may make an owner or change an owner's role.");
    await keepAnOwner(db, user, "This is the merchant's only owner: make another user an owner before changing this one's role.");
    return true;
  };
  // The rules first, so that a refusal is said as such rather than as a request for the password; the
  // password before the transaction (the embedded database has one connection); the rules again under
  // the lock, which is what holds.
  if (await allowed(prisma, await prisma.user.findUniqueOrThrow({ where: { id: target.id } }))) await confirm();
  return prisma.$transaction(async (tx) => {
    const user = await lockedTarget(tx, target);
    if (!(await allowed(tx, user))) return userView(user);
    const changed = await tx.user.update({ where: { id: user.id }, data: { role: to } });
    // A session (and a WebSocket opened with it) carries the role it was opened with: the user signs
    // in again under the new one. An owner no longer one: whom they invited as owners does not join.
    await tx.dashboardSession.deleteMany({ where: { userId: user.id } });
    if (user.role === "owner")
      await tx.invitation.updateMany({ where: { invitedBy: user.id, role: "owner", acceptedAt: null, revokedAt: null }, data: { revokedAt: new Date() } });
    await recordSecurityEvent(tx, user.merchantId, "role_changed", actor, { userId: user.id, from: user.role, to });
    await securityNotice(
      tx,
      user.merchantId,
      {
        subject: "Your role in the team was changed",
        paragraphs: [`${user.email} is now ${to} (was ${user.role}) in the dashboard.`],
        facts: [
          ["User", user.email],
          ["Role", to],
        ],
        relatedId: user.id,
      },
      [user.email],
    );
    return userView(changed);
  });
}

/**
 * Removes `target` from the team and ends its sessions: 403 `permission_denied` for an owner unless
 * `by` is one, 409 `last_owner` for the merchant's only owner (the operator may still remove the
 * merchant's very last user). Their pending invitations end with them. Records `user_removed`.
 */
export async function removeUser(prisma: Prisma, by: TeamActor, target: Pick<User, "id" | "merchantId">, confirm: Confirmation, actor: Actor): Promise<void> {
  /** Throws the rules' refusal to remove `user`. */
  const check = async (db: Prisma | P.TransactionClient, user: User) => {
    if (user.role === "owner") requireOwner(by, "Only owners may remove an owner.");
    const lastUser = (await db.user.count({ where: { merchantId: user.merchantId } })) <= 1;
    if (!(by === "operator" && lastUser))
      await keepAnOwner(db, user, "This is the merchant's only owner: make another user an owner before removing this one.");
  };
  // As setUserRole: the rules, the password, then the rules again under the lock.
  await check(prisma, await prisma.user.findUniqueOrThrow({ where: { id: target.id } }));
  await confirm();
  await prisma.$transaction(async (tx) => {
    const user = await lockedTarget(tx, target);
    await check(tx, user);
    // Recorded first: the acting user may be the one removed, whose email the record reads.
    await recordSecurityEvent(tx, user.merchantId, "user_removed", actor, { userId: user.id, email: user.email });
    const gone = await tx.user.delete({ where: { id: user.id } });
    // Whom a removed user invited does not join after them: their pending invitations end with them.
    await tx.invitation.updateMany({ where: { invitedBy: user.id, acceptedAt: null, revokedAt: null }, data: { revokedAt: new Date() } });
    await tx.invitation.updateMany({ where: { invitedBy: user.id }, data: { invitedBy: null } });
    const notice = {
      subject: "A user was removed from your team",
      paragraphs: [`${gone.email} can no longer sign in to the dashboard; their sessions were ended.`],
      facts: [["User", gone.email]] as [string, string][],
      relatedId: gone.id,
    };
    // The team as it is now, and the removed user, who should know too.
    await securityNotice(tx, user.merchantId, notice);
    await securityNotice(tx, user.merchantId, notice, [gone.email]);
  });
}
