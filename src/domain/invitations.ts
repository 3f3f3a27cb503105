// Invitations to a merchant's team (.docs/dashboard.md "Users"): a signed-in user invites an email; the
// invitee follows the emailed link (7 days, once) and chooses their own password, so nobody ever
// types another person's password. Invariants:
// - only the token's SHA-256 is stored; accepting compares and spends it in one statement, so a link
//   opens one account however often it is sent at once;
// - an email that already has an account cannot be invited (409 `user_exists`); a new invitation of
//   the same email replaces the pending one;
// - the account, the spent invitation and the notice to the team commit together;
// - only owners invite owners (domain/team.ts); the invitee gets the invitation's role.
import type { Prisma } from "../db/client.js";
import { isUniqueViolation } from "../db/errors.js";
import type { Invitation, User } from "../generated/prisma/client.js";
import type { Confirmation } from "./confirmation.js";
import { AppError, notFound } from "./errors.js";
import { hashToken, newId, randomBase62 } from "./ids.js";
import type { AcceptInvitationRequest, InviteRequest } from "./invitation-requests.js";
import { hashPassword } from "./passwords.js";
import { parseRole, type Role } from "./permissions.js";
import { type Actor, recordSecurityEvent } from "./security-events.js";
import { dashboardUrl, emailTeam, securityNotice } from "./team-emails.js";

/** How long an invitation link works. */
export const INVITATION_TTL_MS = 7 * 24 * 60 * 60 * 1000;
/** An invitation as the dashboard lists it: never its token. */
export interface InvitationView {
  id: string;
  email: string;
  role: Role;
  invitedBy: string | null;
  expiresAt: Date;
  createdAt: Date;
}

function invitationView(row: Invitation): InvitationView {
  return { id: row.id, email: row.email, role: parseRole(row.role) ?? "viewer", invitedBy: row.invitedBy, expiresAt: row.expiresAt, createdAt: row.createdAt };
}

/** 409 `user_exists`: the email already has an account. */
function userExists(): AppError {
  return new AppError("user_exists", "This email already has a dashboard account: it cannot be invited.", "email");
}

/**
 * Invites `input.email` (role `input.role`, admin by default) to `inviter`'s merchant once `confirm`
 * passes (a recent re-authentication): writes the invitation, records `user_invited` and emails the
 * link, which it also returns (the inviter passes it on where no email is sent). 403
 * `permission_denied` for an owner's invitation unless the inviter is an owner.
 */
export async function inviteUser(
  prisma: Prisma,
  inviter: { merchantId: string; userId: string; role: Role },
  data: InviteRequest,
  confirm: Confirmation,
  publicUrl: string,
  actor: Actor,
  now = new Date(),
): Promise<InvitationView & { link: string }> {
  if (data.role === "owner" && inviter.role !== "owner") throw new AppError("permission_denied", "Only owners may invite an owner.", "role");
  await confirm();
  return prisma.$transaction(async (tx) => {
    // Only a teammate already on this merchant is refused here: whether another merchant has a user
    // with this email is not the inviter's to learn (accepting tells the invitee, who owns the mailbox).
    if (await tx.user.findFirst({ where: { email: data.email, merchantId: inviter.merchantId }, select: { id: true } })) throw userExists();
    const by = await tx.user.findUnique({ where: { id: inviter.userId }, select: { email: true } });
    await tx.invitation.updateMany({
      where: { merchantId: inviter.merchantId, email: data.email, acceptedAt: null, revokedAt: null },
      data: { revokedAt: now },
    });
    const token = `invt_${randomBase62(43)}`;
    const row = await tx.invitation.create({
      data: {
        id: newId("invt"),
        merchantId: inviter.merchantId,
        email: data.email,
        role: data.role,
        tokenHash: hashToken(token),
        invitedBy: inviter.userId,
        expiresAt: new Date(now.getTime() + INVITATION_TTL_MS),
        createdAt: now,
      },
    });
    await recordSecurityEvent(tx, inviter.merchantId, "user_invited", actor, { email: data.email, role: data.role }, now);
    const merchant = await tx.merchant.findUniqueOrThrow({ where: { id: inviter.merchantId }, select: { name: true } });
    const link = dashboardUrl(publicUrl, "/invitation", { token });
    await emailTeam(
      tx,
      inviter.merchantId,
      {
        type: "invitation",
        subject: `You are invited to ${merchant.name}'s dashboard`,
        relatedId: row.id,
        content: {
          heading: `Join ${merchant.name} on Stablegate`,
          paragraphs: [
            `${by?.email ?? "A team member"} invited you to ${merchant.name}'s payments dashboard as ${data.role}.`,
            "Choose your password with this link within 7 days; it works once.",
          ],
          action: { label: "Accept the invitation", url: link },
        },
      },
      [data.email],
    );
    return { ...invitationView(row), link };
  });
}

/** The merchant's pending invitations (neither accepted, revoked nor expired), newest first. */
export async function listInvitations(prisma: Prisma, merchantId: string, now = new Date()): Promise<InvitationView[]> {
  const rows = await prisma.invitation.findMany({
    where: { merchantId, acceptedAt: null, revokedAt: null, expiresAt: { gt: now } },
    orderBy: [{ createdAt: "desc" }, { id: "desc" }],
  });
  return rows.map(invitationView);
}

/** Revokes a pending invitation of the merchant: its link stops working; 404 naming `id` otherwise. */
export async function revokeInvitation(prisma: Prisma, merchantId: string, id: string, now = new Date()): Promise<InvitationView> {
  const [row] = await prisma.invitation.updateManyAndReturn({ where: { id, merchantId, acceptedAt: null, revokedAt: null }, data: { revokedAt: now } });
  if (!row) throw notFound("invitation", id);
  return invitationView(row);
}

/** 400 `invitation_invalid`: the link is unknown, used, revoked or expired. */
function invalidInvitation(): AppError {
  return new AppError("invitation_invalid", "This invitation link is unknown, already used, revoked or expired: ask for a new invitation.", "token");
}

/**
 * Accepts an invitation with its token and the invitee's chosen password: creates the user in the
 * inviting merchant with the invitation's role, spends the invitation, records `user_joined` (from
 * the browser `from`) and tells the team. Returns the new user.
 */
export async function acceptInvitation(prisma: Prisma, data: AcceptInvitationRequest, from: Pick<Actor, "ip" | "userAgent">, now = new Date()): Promise<User> {
  const tokenHash = hashToken(data.token);
  const found = await prisma.invitation.findUnique({ where: { tokenHash } });
  if (!found || found.acceptedAt || found.revokedAt || found.expiresAt <= now) throw invalidInvitation();
  const passwordHash = await hashPassword(data.password);
  return prisma.$transaction(async (tx) => {
    const { count } = await tx.invitation.updateMany({
      where: { tokenHash, acceptedAt: null, revokedAt: null, expiresAt: { gt: now } },
      data: { acceptedAt: now },
    });
    if (count === 0) throw invalidInvitation();
    if (await tx.user.findUnique({ where: { email: found.email }, select: { id: true } })) throw userExists();
    // Two invitations of one address accepted at once: the second finds the email taken when it writes.
    // A role this release does not know (written by a later one) gets the least power.
    const role = parseRole(found.role) ?? "viewer";
    const user = await tx.user
      .create({ data: { id: newId("usr"), merchantId: found.merchantId, email: found.email, passwordHash, role, createdAt: now } })
      .catch((e: unknown) => {
        throw isUniqueViolation(e) ? userExists() : e;
      });
    await recordSecurityEvent(
      tx,
      found.merchantId,
      "user_joined",
      { userId: user.id, email: user.email, ...from },
      { userId: user.id, email: user.email, role },
      now,
    );
    await securityNotice(tx, found.merchantId, {
      subject: "A user was added to your team",
      paragraphs: [`${found.email} accepted an invitation and can now sign in to the dashboard.`],
      facts: [
        ["User", found.email],
        ["Role", found.role],
      ],
      relatedId: user.id,
    });
    return user;
  });
}
