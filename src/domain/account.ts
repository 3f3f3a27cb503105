// One's own account (.docs/dashboard.md "Your account"): changing one's password from a signed-in
// session. It always takes the current password (a recent re-authentication is not enough: an open
// session alone must not be able to take the account over), and a wrong one spends the email's
// sign-in budget as a failed sign-in does. The user's other sessions end, so whoever knew the old
// password loses what it opened; the session that changed it stays signed in.
import type { Prisma } from "../db/client.js";
import { AppError } from "./errors.js";
import type { PasswordChange } from "./account-requests.js";
import { hashPassword } from "./passwords.js";
import { type ActingSession, requireRecentAuthentication } from "./reauthentication.js";
import { type Actor, recordSecurityEvent } from "./security-events.js";
import type { SignInAttempts } from "./sessions.js";
import { securityNotice } from "./team-emails.js";

/**
 * Changes the signed-in user's password: 403 `reauthentication_required` naming `currentPassword` when
 * it is wrong (or `totpCode` when two-factor sign-in is on and the code is missing or wrong), 400
 * naming `newPassword` when it is too short or the same. Ends the user's other sessions and returns
 * how many; records `password_changed` and tells the user by email.
 */
export async function changePassword(
  prisma: Prisma,
  limiter: SignInAttempts,
  session: ActingSession,
  data: PasswordChange,
  actor: Actor,
  now = new Date(),
): Promise<number> {
  await requireRecentAuthentication(prisma, limiter, session, { password: data.currentPassword, totpCode: data.totpCode }, now, {
    password: "currentPassword",
    totpCode: "totpCode",
  });
  if (data.newPassword === data.currentPassword)
    throw new AppError("parameter_invalid", "Invalid newPassword: it is your current password; choose another.", "newPassword");
  const passwordHash = await hashPassword(data.newPassword);
  return prisma.$transaction(async (tx) => {
    const user = await tx.user.update({ where: { id: session.userId }, data: { passwordHash } });
    const { count } = await tx.dashboardSession.deleteMany({ where: { userId: session.userId, id: { not: session.sessionId } } });
    // A reset link asked for with the old password must not undo the change.
    await tx.passwordReset.updateMany({ where: { userId: session.userId, usedAt: null }, data: { usedAt: now } });
    await recordSecurityEvent(tx, user.merchantId, "password_changed", actor, { userId: user.id, sessionsEnded: count }, now);
    await securityNotice(
      tx,
      user.merchantId,
      {
        subject: "Your dashboard password was changed",
        paragraphs: [`The password of ${user.email} was changed from a signed-in session. Every other session of this user was signed out.`],
        facts: [["User", user.email]],
        relatedId: user.id,
      },
      [user.email],
    );
    return count;
  });
}
