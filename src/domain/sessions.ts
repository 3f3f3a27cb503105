// Dashboard sessions (.docs/dashboard.md "Sign-in and sessions"): signing in with email, password and, when the
// user turned it on, a TOTP or recovery code gives a random token for an HttpOnly cookie. Only the
// token's SHA-256 is stored, so a database leak opens no session, and signing out (everywhere)
// deletes rows: a session is checked against the database on every use, and ends at once.
import { z } from "zod";
import type { Prisma } from "../db/client.js";
import { headerText } from "../email/address.js";
import type { Prisma as P, User } from "../generated/prisma/client.js";
import { AppError } from "./errors.js";
import { hashToken, newId, randomBase62 } from "./ids.js";
import { dummyHash, verifyPassword } from "./passwords.js";
import { type Capability, capabilitiesOf, parseRole, type Role } from "./permissions.js";
import type { Principal } from "./scope.js";
import { securityNotice } from "./team-emails.js";
import { acceptSecondFactor } from "./two-factor.js";
import { normalizeEmail, type UserView, userView } from "./users.js";
import { parseInput } from "./validation.js";

/** A session unused for this long has ended. */
export const SESSION_IDLE_MS = 12 * 60 * 60 * 1000;
/** How stale `lastSeenAt` may get before a use refreshes it: one write a minute, not one per request. */
const TOUCH_AFTER_MS = 60 * 1000;

const mode = z.enum(["test", "live"], { error: "must be test or live" });
export const signInSchema = z.strictObject(
  { email: z.string().max(254), password: z.string().max(200), totpCode: z.string().max(20).optional(), mode: mode.optional() },
  { error: "must be a JSON object" },
);

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
export async function signIn(prisma: Prisma, limiter: SignInAttempts, input: unknown, device: SignInDevice, now = new Date()): Promise<OpenedSession> {
  const data = parseInput(signInSchema, input);
  const email = normalizeEmail(data.email);
  const budgetKey = signInBudgetKey(email);
  await limiter.consume(budgetKey, "signInFailures");
  const user = await prisma.user.findUnique({ where: { email } });
  const passwordOk = await verifyPassword(data.password, user?.passwordHash ?? (await dummyHash()));
  if (!user || !passwordOk) throw new AppError("sign_in_failed", "Wrong email or password.", "password");
  if (user.totpSecret) {
    if (!data.totpCode) {
      // The password was right: asking for the code is no failure.
      await limiter.reward(budgetKey, "signInFailures");
      throw new AppError(
        "totp_required",
        "This account has two-factor sign-in: send the code from its authenticator app (or a recovery code) as totpCode.",
        "totpCode",
      );
    }
    // A code is good once: one seen over a shoulder, or sent twice at once, counts as wrong.
    if (!(await acceptSecondFactor(prisma, user, data.totpCode, now)))
      throw new AppError("sign_in_failed", "Wrong or already used two-factor code.", "totpCode");
  }
  await limiter.reward(budgetKey, "signInFailures");
  // Sign-ins are rare: a good moment to forget sessions that ended by idling (their rows only).
  await prisma.dashboardSession.deleteMany({ where: { lastSeenAt: { lt: new Date(now.getTime() - SESSION_IDLE_MS) } } });
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
    const deviceToken = await recognizeDevice(tx, user, device, now);
    return {
      token,
      deviceToken,
      session: sessionView(row, user),
    };
  });
}

/** Records the browser `device` for `user` (its cookie's SHA-256) and returns its cookie; a new one after the first is notified. */
async function recognizeDevice(tx: P.TransactionClient, user: User, device: SignInDevice, now: Date): Promise<string> {
  const userAgent = device.userAgent === null ? null : headerText(device.userAgent, 300);
  const given = device.token !== null && DEVICE_TOKEN.test(device.token) ? device.token : null;
  if (given) {
    const { count } = await tx.userDevice.updateMany({ where: { userId: user.id, deviceHash: hashToken(given) }, data: { lastSeenAt: now, userAgent } });
    if (count === 1) return given;
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
  return deviceToken;
}

/** The session a cookie's token opens, refreshed as used; 401 `session_invalid` when it is unknown, ended or idle too long. */
export async function authenticateSession(prisma: Prisma, token: string, now = new Date()): Promise<SessionPrincipal & { view: SessionView }> {
  const invalid = new AppError("session_invalid", "Your dashboard session has ended: sign in again.");
  if (!/^sgs_[0-9A-Za-z]{43}$/.test(token)) throw invalid;
  const row = await prisma.dashboardSession.findUnique({ where: { tokenHash: hashToken(token) }, include: { user: true } });
  if (!row) throw invalid;
  if (now.getTime() - row.lastSeenAt.getTime() > SESSION_IDLE_MS) {
    await prisma.dashboardSession.deleteMany({ where: { id: row.id } });
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

export const switchModeSchema = z.strictObject({ mode }, { error: "must be a JSON object" });

/** Switches a session to test or live mode; returns the new mode. */
export async function switchMode(prisma: Prisma, sessionId: string, input: unknown): Promise<"test" | "live"> {
  const data = parseInput(switchModeSchema, input);
  await prisma.dashboardSession.updateMany({ where: { id: sessionId }, data: { livemode: data.mode === "live" } });
  return data.mode;
}

/** Ends one session. */
export async function signOut(prisma: Prisma, sessionId: string): Promise<void> {
  await prisma.dashboardSession.deleteMany({ where: { id: sessionId } });
}

/** Ends every session of a user; returns how many there were. */
export async function signOutEverywhere(prisma: Prisma, userId: string): Promise<number> {
  return (await prisma.dashboardSession.deleteMany({ where: { userId } })).count;
}
