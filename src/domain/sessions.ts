// Dashboard sessions (.docs/dashboard.md "Sign-in and sessions"): signing in with email, password and, when the
// user turned it on, a TOTP or recovery code gives a random token for an HttpOnly cookie. Only the
// token's SHA-256 is stored, so a database leak opens no session, and signing out (everywhere)
// deletes rows: a session is checked against the database on every use, and ends at once.
import type { Prisma } from "../db/client.js";
import { headerText } from "../email/address.js";
import type { Prisma as P, User } from "../generated/prisma/client.js";
import { AppError } from "./errors.js";
import { hashToken, newId, randomBase62 } from "./ids.js";
import { dummyHash, verifyPassword } from "./passwords.js";
import { type Capability, capabilitiesOf, parseRole, type Role } from "./permissions.js";
import type { Principal } from "./scope.js";
import { type Actor, actorOf, recordSecurityEvent, recordSignInFailure, type SignInFailure } from "./security-events.js";
import type { SignInRequest, SwitchModeRequest } from "./session-requests.js";
import { securityNotice } from "./team-emails.js";
import { acceptSecondFactor } from "./two-factor.js";
import { normalizeEmail, type UserView, userView } from "./users.js";

/** A session unused for this long has ended. */
export const SESSION_IDLE_MS = 12 * 60 * 60 * 1000;
/** How stale `lastSeenAt` may get before a use refreshes it: one write a minute, not one per request. */
const TOUCH_AFTER_MS = 60 * 1000;

/** Counts sign-in attempts per email and refuses a locked-out one (the RateLimiter's signInFailures budget). */
export interface SignInAttempts {
  /** Takes one attempt; 429 when the email has none left. */
  consume(key: string, budget: "signInFailures"): Promise<unknown>;
  /** Gives an attempt back (it did not fail). */
  reward(key: string, budget: "signInFailures"): Promise<void>;
}

/** The key of an email's sign-in budget, which re-authentication spends too. */
export function signInBudgetKey(email: string): string {
  return `email:${normalizeEmail(email)}`;
}

/** A signed-in session as the dashboard sees it. */
export interface SessionView {
  id: string;
  mode: "test" | "live";
  csrfToken: string;
  user: UserView;
  /** What the user's role may do (domain/permissions.ts): the page hides the rest; the server refuses it anyway. */
  capabilities: Capability[];
  createdAt: Date;
}

/** The view of a session row and its user. */
function sessionView(row: { id: string; livemode: boolean; csrfToken: string; createdAt: Date }, user: User): SessionView {
  const view = userView(user);
  return {
    id: row.id,
    mode: row.livemode ? "live" : "test",
    csrfToken: row.csrfToken,
    user: view,
    capabilities: capabilitiesOf(view.role),
    createdAt: row.createdAt,
  };
}

/** The caller behind a session cookie: a principal of the session's merchant and mode, and its user. */
export interface SessionPrincipal extends Principal {
  userId: string;
  role: Role;
  /** The token requests made with the cookie must echo in X-CSRF-Token. */
  csrfToken: string;
}

/**
 * Signs in: `token` goes in the cookie and is never shown again. Every attempt takes one of the
 * email's 5 per 15 minutes before its password is checked, and only a failed one keeps it: parallel
 * guesses cannot get past the limit. An unknown email costs the same time as a wrong password and
 * gets the same answer.
 */
export async function signIn(prisma: Prisma, limiter: SignInAttempts, data: SignInRequest, device: SignInDevice, now = new Date()): Promise<OpenedSession> {
  const email = normalizeEmail(data.email);
  const budgetKey = signInBudgetKey(email);
  const failed = (reason: SignInFailure) => recordSignInFailure(prisma, email, reason, device, now);
  try {
    await limiter.consume(budgetKey, "signInFailures");
  } catch (e) {
    if (e instanceof AppError && e.code === "rate_limited") await failed("locked");
    throw e;
  }
  const user = await prisma.user.findUnique({ where: { email } });
  const passwordOk = await verifyPassword(data.password, user?.passwordHash ?? (await dummyHash()));
  if (!user || !passwordOk) {
    // Recorded (or not, for an unknown email) by the same statement: the answer takes as long either way.
    await failed("wrong_password");
    throw new AppError("sign_in_failed", "Wrong email or password.", "password");
  }
  if (user.totpSecret) {
    if (!data.totpCode) {
      // The password was right: asking for the code spends no attempt, but the history shows that
      // someone knew the password.
      await limiter.reward(budgetKey, "signInFailures");
      await failed("two_factor_code_missing");
      throw new AppError(
        "totp_required",
        "This account has two-factor sign-in: send the code from its authenticator app (or a recovery code) as totpCode.",
        "totpCode",
      );
    }
    // A code is good once: one seen over a shoulder, or sent twice at once, counts as wrong.
    if (!(await acceptSecondFactor(prisma, user, data.totpCode, now))) {
      await failed("wrong_two_factor_code");
      throw new AppError("sign_in_failed", "Wrong or already used two-factor code.", "totpCode");
    }
  }
  await limiter.reward(budgetKey, "signInFailures");
  // Sign-ins are rare: a good moment to end the sessions that idled too long (their rows only).
  await endIdleSessions(prisma, now);
  return openSession(prisma, user, data.mode === "live", device, now);
}

/** The browser a sign-in comes from: its device cookie (null without one), user agent and address. */
export interface SignInDevice {
  token: string | null;
  userAgent: string | null;
  ip: string;
}

/** A session just opened: its cookie's token, the browser's device cookie to set, and the view. */
export interface OpenedSession {
  token: string;
  deviceToken: string;
  session: SessionView;
}

const DEVICE_TOKEN = /^sgd_[0-9A-Za-z]{43}$/;

/**
 * Opens a session of `user` (after a sign-in, or an accepted invitation) and remembers the browser;
 * a browser this user has not signed in from before is told to the user, unless it is their first.
 * The sign-in is recorded in the security history with the mode and whether the browser was new.
 */
export async function openSession(prisma: Prisma, user: User, livemode: boolean, device: SignInDevice, now = new Date()): Promise<OpenedSession> {
  const token = `sgs_${randomBase62(43)}`;
  return prisma.$transaction(async (tx) => {
    // The password checked may have been reset while it was checked (a reset ends every session): the
    // user's row is locked and its hash must still be the one that was verified.
    const [current] = await tx.$queryRaw<{ password_hash: string }[]>`SELECT password_hash FROM users WHERE id = ${user.id} FOR UPDATE`;
    if (current?.password_hash !== user.passwordHash) throw new AppError("sign_in_failed", "Wrong email or password.", "password");
    const row = await tx.dashboardSession.create({
      data: { id: newId("ses"), userId: user.id, tokenHash: hashToken(token), csrfToken: randomBase62(32), livemode },
    });
    const { deviceToken, newDevice } = await recognizeDevice(tx, user, device, now);
    await recordSecurityEvent(tx, user.merchantId, "sign_in", actorOf(user, device), { mode: livemode ? "live" : "test", newDevice }, now);
    return {
      token,
      deviceToken,
      session: sessionView(row, user),
    };
  });
}

/** Records the browser `device` for `user` (its cookie's SHA-256) and returns its cookie and whether it is new; a new one after the first is notified. */
async function recognizeDevice(tx: P.TransactionClient, user: User, device: SignInDevice, now: Date): Promise<{ deviceToken: string; newDevice: boolean }> {
  const userAgent = device.userAgent === null ? null : headerText(device.userAgent, 300);
  const given = device.token !== null && DEVICE_TOKEN.test(device.token) ? device.token : null;
  if (given) {
    const { count } = await tx.userDevice.updateMany({ where: { userId: user.id, deviceHash: hashToken(given) }, data: { lastSeenAt: now, userAgent } });
    if (count === 1) return { deviceToken: given, newDevice: false };
  }
  // The browser's cookie is kept when it has one (another user of it signed in): one cookie per browser.
  const deviceToken = given ?? `sgd_${randomBase62(43)}`;
  const known = await tx.userDevice.count({ where: { userId: user.id } });
  await tx.userDevice.createMany({
    data: [{ userId: user.id, deviceHash: hashToken(deviceToken), userAgent, createdAt: now, lastSeenAt: now }],
    skipDuplicates: true,
  });
  if (known > 0) {
    await securityNotice(
      tx,
      user.merchantId,
      {
        subject: "New sign-in from a browser not seen before",
        paragraphs: [`${user.email} signed in to the dashboard from a browser that had not been used with this account.`],
        facts: [
          ["User", user.email],
          ["Browser", userAgent ?? "unknown"],
          ["IP address", device.ip],
        ],
      },
      [user.email],
    );
  }
  return { deviceToken, newDevice: true };
}

/** Ends every session idle longer than SESSION_IDLE_MS, each recorded as `session_expired` of its user. */
async function endIdleSessions(prisma: Prisma, now: Date): Promise<void> {
  await prisma.$transaction(async (tx) => {
    const ended = await tx.$queryRaw<{ user_id: string; merchant_id: string; email: string }[]>`
      DELETE FROM dashboard_sessions s USING users u
      WHERE u.id = s.user_id AND s.last_seen_at < ${new Date(now.getTime() - SESSION_IDLE_MS)}
      RETURNING s.user_id, u.merchant_id, u.email`;
    for (const row of ended) {
      await recordSecurityEvent(tx, row.merchant_id, "session_expired", idleActor({ id: row.user_id, email: row.email }), IDLE, now);
    }
  });
}

/** The actor of a session ended by idling: its user, but no address or browser, as nobody acted. */
function idleActor(user: { id: string; email: string }): Actor {
  return actorOf(user, { ip: null, userAgent: null });
}
const IDLE = { reason: "idle" };

/** The session a cookie's token opens, refreshed as used; 401 `session_invalid` when it is unknown, ended or idle too long. */
export async function authenticateSession(prisma: Prisma, token: string, now = new Date()): Promise<SessionPrincipal & { view: SessionView }> {
  const invalid = new AppError("session_invalid", "Your dashboard session has ended: sign in again.");
  if (!/^sgs_[0-9A-Za-z]{43}$/.test(token)) throw invalid;
  const row = await prisma.dashboardSession.findUnique({ where: { tokenHash: hashToken(token) }, include: { user: true } });
  if (!row) throw invalid;
  if (now.getTime() - row.lastSeenAt.getTime() > SESSION_IDLE_MS) {
    await prisma.$transaction(async (tx) => {
      // Of two requests finding it idle at once, only the one that ends it records it.
      const { count } = await tx.dashboardSession.deleteMany({ where: { id: row.id } });
      if (count === 1) await recordSecurityEvent(tx, row.user.merchantId, "session_expired", idleActor(row.user), IDLE, now);
    });
    throw invalid;
  }
  if (now.getTime() - row.lastSeenAt.getTime() > TOUCH_AFTER_MS) {
    await prisma.dashboardSession.updateMany({ where: { id: row.id }, data: { lastSeenAt: now } });
  }
  return {
    credentialId: row.id,
    merchantId: row.user.merchantId,
    livemode: row.livemode,
    userId: row.userId,
    // A role this release does not know (written by a later one) gets no power here.
    role: parseRole(row.user.role) ?? "viewer",
    csrfToken: row.csrfToken,
    view: sessionView(row, row.user),
  };
}

/** Switches a session to test or live mode; returns the new mode. */
export async function switchMode(prisma: Prisma, sessionId: string, data: SwitchModeRequest): Promise<"test" | "live"> {
  await prisma.dashboardSession.updateMany({ where: { id: sessionId }, data: { livemode: data.mode === "live" } });
  return data.mode;
}

/** The session a sign-out ends, and whose it is. */
export interface SignedInSession {
  sessionId: string;
  merchantId: string;
  userId: string;
}

/** Ends one session, recorded as `sign_out` by `actor`. */
export async function signOut(prisma: Prisma, session: SignedInSession, actor: Actor): Promise<void> {
  await prisma.$transaction(async (tx) => {
    const { count } = await tx.dashboardSession.deleteMany({ where: { id: session.sessionId } });
    if (count === 1) await recordSecurityEvent(tx, session.merchantId, "sign_out", actor);
  });
}

/** Ends every session of the session's user, recorded as one `sign_out` by `actor`; returns how many there were. */
export async function signOutEverywhere(prisma: Prisma, session: SignedInSession, actor: Actor): Promise<number> {
  return prisma.$transaction(async (tx) => {
    const { count } = await tx.dashboardSession.deleteMany({ where: { userId: session.userId } });
    await recordSecurityEvent(tx, session.merchantId, "sign_out", actor, { everywhere: true, sessions: count });
    return count;
  });
}
