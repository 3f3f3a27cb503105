// "Forgot password?" (.docs/dashboard.md "Sign-in and sessions"): a random link by email, valid one
// hour, good once. Invariants:
// - the answer is the same whether or not the email has an account (the door answers 202 either way);
// - an address gets at most RESETS_PER_HOUR emails an hour, counted in the database under the user's
//   row lock, so parallel requests and several API processes cannot get past it;
// - only the token's SHA-256 is stored; using it sets the password, spends every link of the user,
//   ends every session of the user and tells the user, in one transaction.
import type { Prisma } from "../db/client.js";
import { AppError } from "./errors.js";
import { hashToken, newId, randomBase62 } from "./ids.js";
import type { ForgotPasswordRequest, ResetPasswordRequest } from "./password-reset-requests.js";
import { hashPassword } from "./passwords.js";
import { actorOf, type Client, recordSecurityEvent } from "./security-events.js";
import { dashboardUrl, emailTeam, securityNotice } from "./team-emails.js";
import { normalizeEmail } from "./users.js";

/** How long a reset link works. */
export const RESET_TTL_MS = 60 * 60 * 1000;
/** Reset emails an address may get per hour. */
export const RESETS_PER_HOUR = 3;

/**
 * Emails a reset link to `email` when it has an account and fewer than 3 links were sent it in the
 * last hour; otherwise does nothing. Says nothing either way: the caller answers alike.
 */
export async function requestPasswordReset(prisma: Prisma, input: ForgotPasswordRequest, publicUrl: string, now = new Date()): Promise<void> {
  const email = normalizeEmail(input.email);
  await prisma.$transaction(async (tx) => {
    // The row lock orders concurrent requests for one user: the count below cannot be raced past.
    const [user] = await tx.$queryRaw<{ id: string; merchant_id: string }[]>`SELECT id, merchant_id FROM users WHERE email = ${email} FOR UPDATE`;
    if (!user) return;
    const recent = await tx.passwordReset.count({ where: { userId: user.id, createdAt: { gt: new Date(now.getTime() - 60 * 60 * 1000) } } });
    if (recent >= RESETS_PER_HOUR) return;
    const token = `pwr_${randomBase62(43)}`;
    await tx.passwordReset.create({
      data: { id: newId("pwr"), userId: user.id, tokenHash: hashToken(token), expiresAt: new Date(now.getTime() + RESET_TTL_MS), createdAt: now },
    });
    await emailTeam(
      tx,
      user.merchant_id,
      {
        type: "password_reset",
        subject: "Reset your dashboard password",
        content: {
          heading: "Reset your dashboard password",
          paragraphs: [
            `Someone asked to reset the password of ${email}. Choose a new password with this link within the hour; it works once.`,
            "If you did not ask for this, ignore this email: your password stays as it is.",
          ],
          action: { label: "Choose a new password", url: dashboardUrl(publicUrl, "/reset-password", { token }) },
        },
      },
      [email],
    );
  });
}

/** 400 `password_reset_invalid`: the link is unknown, used or expired. */
function invalidToken(): AppError {
  return new AppError("password_reset_invalid", "This password reset link is unknown, already used or expired: ask for a new one.", "token");
}

/**
 * Sets a new password with a reset link's token: the link and the user's other links are spent, every
 * session of the user ends, the user is told, and the history records it as the user's from `client`.
 * Returns the user's id.
 */
export async function resetPasswordWithToken(prisma: Prisma, data: ResetPasswordRequest, client: Client, now = new Date()): Promise<string> {
  const tokenHash = hashToken(data.token);
  const found = await prisma.passwordReset.findUnique({ where: { tokenHash }, include: { user: true } });
  if (!found || found.usedAt || found.expiresAt <= now) throw invalidToken();
  const passwordHash = await hashPassword(data.password);
  await prisma.$transaction(async (tx) => {
    // One statement compares and spends: of two uses at once, the second matches nothing.
    const { count } = await tx.passwordReset.updateMany({ where: { tokenHash, usedAt: null, expiresAt: { gt: now } }, data: { usedAt: now } });
    if (count === 0) throw invalidToken();
    await tx.passwordReset.updateMany({ where: { userId: found.userId, usedAt: null }, data: { usedAt: now } });
    await tx.user.update({ where: { id: found.userId }, data: { passwordHash } });
    await tx.dashboardSession.deleteMany({ where: { userId: found.userId } });
    await recordSecurityEvent(tx, found.user.merchantId, "password_reset", actorOf(found.user, client), null, now);
    await securityNotice(
      tx,
      found.user.merchantId,
      {
        subject: "Your dashboard password was reset",
        paragraphs: [`The password of ${found.user.email} was reset with an emailed link. Every session of this user was signed out.`],
      },
      [found.user.email],
    );
  });
  return found.userId;
}
