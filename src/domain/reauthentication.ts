// Re-authentication (.docs/dashboard.md "Safety rails"): changing a settlement wallet, making API keys or
// users, and turning two-factor sign-in off need the user's password again (and a second factor when
// two-factor sign-in is on), given with the action itself or through POST
// /dashboard/session/reauthenticate within the last 5 minutes, which the session row remembers.
// Signing in does not count: an open session alone, on a shared computer or stolen, must not be
// enough to redirect the money. Every attempt spends the email's sign-in budget as a sign-in does, so
// guessing here locks the email just the same.
import type { Prisma } from "../db/client.js";
import type { Confirmation } from "./confirmation.js";
import { AppError } from "./errors.js";
import { verifyPassword } from "./passwords.js";
import type { ReauthenticateRequest } from "./reauthentication-requests.js";
import { type SignInAttempts, signInBudgetKey } from "./sessions.js";
import { acceptSecondFactor } from "./two-factor.js";

/** How long a re-authentication counts for. */
export const REAUTHENTICATION_MS = 5 * 60 * 1000;

/** The proof an action may carry; without a password it relies on a recent re-authentication. */
export interface Proof {
  password?: string | null;
  totpCode?: string | null;
}

/** What the proof's fields are called on the action, for the error's `param` and message. */
export interface ProofParams {
  password: string;
  totpCode: string;
}

/** The session acting. */
export interface ActingSession {
  sessionId: string;
  userId: string;
}

const PARAMS: ProofParams = { password: "password", totpCode: "totpCode" };

/**
 * Checks the user's password and, with two-factor sign-in on, a TOTP or recovery code (used up
 * here). Takes one of the email's sign-in attempts first and gives it back only on success.
 */
async function checkIdentity(
  prisma: Prisma,
  limiter: SignInAttempts,
  userId: string,
  proof: { password: string; totpCode?: string | null },
  params: ProofParams,
  now: Date,
): Promise<void> {
  const user = await prisma.user.findUniqueOrThrow({ where: { id: userId } });
  const budgetKey = signInBudgetKey(user.email);
  await limiter.consume(budgetKey, "signInFailures");
  // Longer than any password can be: refused without spending a 32 MiB hash on it.
  const passwordOk = proof.password.length <= 200 && (await verifyPassword(proof.password, user.passwordHash));
  if (!passwordOk)
    throw new AppError("reauthentication_required", `That is not your password: give your current password as ${params.password}.`, params.password);
  if (user.totpSecret) {
    if (!proof.totpCode) {
      // The password was right: asking for the code is no failure.
      await limiter.reward(budgetKey, "signInFailures");
      throw new AppError(
        "reauthentication_required",
        `Your account has two-factor sign-in: give the current code from your authenticator app (or a recovery code) as ${params.totpCode} too.`,
        params.totpCode,
      );
    }
    if (!(await acceptSecondFactor(prisma, user, proof.totpCode, now))) {
      throw new AppError(
        "reauthentication_required",
        `Wrong two-factor code, or one already used: give the app's next code (or an unused recovery code) as ${params.totpCode}.`,
        params.totpCode,
      );
    }
  }
  await limiter.reward(budgetKey, "signInFailures");
}

/**
 * Re-authenticates a session with `{password, totpCode?}`: for the next 5 minutes its guarded actions
 * need no proof of their own. Returns when that ends.
 */
export async function reauthenticate(
  prisma: Prisma,
  limiter: SignInAttempts,
  session: ActingSession,
  data: ReauthenticateRequest,
  now = new Date(),
): Promise<Date> {
  await checkIdentity(prisma, limiter, session.userId, data, PARAMS, now);
  await prisma.dashboardSession.updateMany({ where: { id: session.sessionId, userId: session.userId }, data: { reauthenticatedAt: now } });
  return new Date(now.getTime() + REAUTHENTICATION_MS);
}

/**
 * Lets a guarded action go ahead: with `proof.password`, when the password (and second factor) is
 * right; without, when the session re-authenticated within the last 5 minutes. Otherwise 403
 * `reauthentication_required`, naming the password's field (`params`: the action's own names).
 */
export async function requireRecentAuthentication(
  prisma: Prisma,
  limiter: SignInAttempts,
  session: ActingSession,
  proof: Proof,
  now = new Date(),
  params: ProofParams = PARAMS,
): Promise<void> {
  if (proof.password) return checkIdentity(prisma, limiter, session.userId, { password: proof.password, totpCode: proof.totpCode }, params, now);
  const row = await prisma.dashboardSession.findUnique({ where: { id: session.sessionId }, select: { reauthenticatedAt: true } });
  const at = row?.reauthenticatedAt?.getTime();
  if (at !== undefined && now.getTime() - at <= REAUTHENTICATION_MS) return;
  throw new AppError(
    "reauthentication_required",
    `This needs your password again: give it as ${params.password} (with a current two-factor code as ${params.totpCode} when two-factor sign-in is on), or re-authenticate with POST /dashboard/session/reauthenticate, which counts for 5 minutes.`,
    params.password,
  );
}

/**
 * The confirmation a dashboard session gives a guarded action: `proof` (password and second factor)
 * sent with it, or a recent re-authentication; see requireRecentAuthentication.
 */
export function confirmedBySession(prisma: Prisma, limiter: SignInAttempts, session: ActingSession, proof: Proof, params: ProofParams = PARAMS): Confirmation {
  return () => requireRecentAuthentication(prisma, limiter, session, proof, new Date(), params);
}
