// Dashboard users: people who sign in to a merchant's dashboard (.docs/dashboard.md "Sign-in and sessions").
// Made with `stablegate users create` (the operator) or by accepting an invitation (domain/invitations.ts).
import { z } from "zod";
import type { Prisma } from "../db/client.js";
import type { User } from "../generated/prisma/client.js";
import type { Confirmation } from "./confirmation.js";
import { AppError, notFound } from "./errors.js";
import { newId } from "./ids.js";
import { hashPassword, passwordSchema } from "./passwords.js";
import { parseRole, type Role, ROLES } from "./permissions.js";
import { type Actor, OPERATOR_ACTOR, recordSecurityEvent } from "./security-events.js";
import { securityNotice } from "./team-emails.js";
import { newTotpSecret, totpStep, totpUri } from "./totp.js";
import { issueRecoveryCodes } from "./two-factor.js";
import { parseInput } from "./validation.js";

/** What a user looks like outside the domain: never the password hash or TOTP secret. */
export interface UserView {
  id: string;
  merchantId: string;
  email: string;
  /** What they may do (domain/permissions.ts). */
  role: Role;
  totpEnabled: boolean;
  createdAt: Date;
}

const email = z
  .email({ error: "must be a valid email address" })
  .max(254)
  .transform((e) => e.toLowerCase());
const createSchema = z.strictObject(
  { email, password: passwordSchema, role: z.enum(ROLES, { error: `must be one of ${ROLES.join(", ")}` }).default("owner") },
  { error: "must be a JSON object" },
);

/** The public view of a user row. */
export function userView(user: User): UserView {
  return {
    id: user.id,
    merchantId: user.merchantId,
    email: user.email,
    // A role this release does not know (written by a later one) gets no power here.
    role: parseRole(user.role) ?? "viewer",
    totpEnabled: user.totpSecret !== null,
    createdAt: user.createdAt,
  };
}

/** Normalizes an email as users are stored (lowercase), for lookups. */
export function normalizeEmail(value: string): string {
  return value.trim().toLowerCase();
}

/**
 * Creates a user of `merchantId` with a password chosen for it: the operator's CLI and seeding only
 * (a dashboard invites instead, domain/invitations.ts), once `confirm` passes, with `input.role`
 * (owner by default: the operator's first user runs the team); 400 `parameter_invalid` naming
 * `email` when that email already has an account.
 */
export async function createUser(prisma: Prisma, merchantId: string, input: unknown, confirm: Confirmation): Promise<UserView> {
  await confirm();
  const data = parseInput(createSchema, input);
  const merchant = await prisma.merchant.findUnique({ where: { id: merchantId }, select: { id: true } });
  if (!merchant) throw notFound("merchant", merchantId, "merchantId");
  const passwordHash = await hashPassword(data.password);
  try {
    return await prisma.$transaction(async (tx) => {
      const user = await tx.user.create({ data: { id: newId("usr"), merchantId, email: data.email, passwordHash, role: data.role } });
      await recordSecurityEvent(tx, merchantId, "user_joined", OPERATOR_ACTOR, { userId: user.id, email: user.email, role: user.role });
      await securityNotice(tx, merchantId, {
        subject: "A user was added to your team",
        paragraphs: [`${user.email} was given a dashboard account by the operator.`],
        facts: [
          ["User", user.email],
          ["Role", user.role],
        ],
        relatedId: user.id,
      });
      return userView(user);
    });
  } catch (e) {
    // Emails are unique across merchants: the answer must not tell whether another merchant has this one.
    if ((e as { code?: string }).code === "P2002")
      throw new AppError("parameter_invalid", "Invalid email: it cannot be given a new account; use another.", "email");
    throw e;
  }
}

/** The user named by `idOrEmail` (a usr_ id or an email), within `merchantId` when given; 404 otherwise. */
export async function findUser(prisma: Prisma, idOrEmail: string, merchantId?: string): Promise<User> {
  const where = idOrEmail.startsWith("usr_") ? { id: idOrEmail } : { email: normalizeEmail(idOrEmail) };
  const user = await prisma.user.findFirst({ where: { ...where, ...(merchantId && { merchantId }) } });
  if (!user) throw notFound("user", idOrEmail);
  return user;
}

/** The users of a merchant, oldest first. */
export async function listUsers(prisma: Prisma, merchantId: string): Promise<UserView[]> {
  return (await prisma.user.findMany({ where: { merchantId }, orderBy: [{ createdAt: "asc" }, { id: "asc" }] })).map(userView);
}

/** Sets a new password (the operator's CLI) and signs the user out everywhere: whoever knew the old one loses the sessions it opened; recorded as a `password_reset` by the operator. */
export async function resetPassword(prisma: Prisma, userId: string, password: unknown): Promise<void> {
  const data = parseInput(z.strictObject({ password: passwordSchema }), { password });
  const passwordHash = await hashPassword(data.password);
  await prisma.$transaction(async (tx) => {
    const user = await tx.user.update({ where: { id: userId }, data: { passwordHash } });
    await tx.dashboardSession.deleteMany({ where: { userId } });
    // The emailed reset links sent before no longer apply.
    await tx.passwordReset.updateMany({ where: { userId, usedAt: null }, data: { usedAt: new Date() } });
    await recordSecurityEvent(tx, user.merchantId, "password_reset", OPERATOR_ACTOR, { userId, email: user.email, by: "operator" });
  });
}

/**
 * Starts two-factor enrollment once `confirm` passes (from the dashboard: the password, or a recent
 * re-authentication): a new secret to put in an authenticator app, active once confirmed. Turning it
 * on needs the password as turning it off does, or a stolen session could enroll its own app, keep
 * the recovery codes and lock the owner out. Refused while two-factor is on: replacing the app must
 * go through turning it off, which takes a current code.
 */
export async function startTotpEnrollment(
  prisma: Prisma,
  user: Pick<User, "id" | "email" | "totpSecret">,
  confirm: Confirmation,
): Promise<{ secret: string; uri: string }> {
  if (user.totpSecret)
    throw new AppError("parameter_invalid", "Two-factor sign-in is already on: turn it off (password and a current code) before setting up another app.");
  await confirm();
  const secret = newTotpSecret();
  await prisma.user.update({ where: { id: user.id }, data: { totpPending: secret } });
  return { secret, uri: totpUri(secret, user.email) };
}

/**
 * Turns two-factor sign-in on with a code from the enrolled app and returns the user's ten recovery
 * codes, shown this once; 400 naming `code` when it is wrong. Records `two_factor_enabled`.
 */
export async function confirmTotp(prisma: Prisma, userId: string, code: string, actor: Actor, now = new Date()): Promise<string[]> {
  const user = await prisma.user.findUniqueOrThrow({ where: { id: userId } });
  const notStarted = new AppError("parameter_invalid", "Start two-factor enrollment first.", "code");
  if (!user.totpPending) throw notStarted;
  const step = totpStep(user.totpPending, code, now.getTime());
  if (step === null) throw new AppError("parameter_invalid", "That code is not the app's current one.", "code");
  return prisma.$transaction(async (tx) => {
    // The confirming code is spent: it cannot sign in as well. Another enrollment started meanwhile wins.
    const { count } = await tx.user.updateMany({
      where: { id: userId, totpPending: user.totpPending },
      data: { totpSecret: user.totpPending, totpPending: null, totpLastStep: step },
    });
    if (count === 0) throw notStarted;
    await recordSecurityEvent(tx, user.merchantId, "two_factor_enabled", actor, { userId });
    return issueRecoveryCodes(tx, userId);
  });
}

/**
 * Turns two-factor sign-in off and drops its recovery codes, once `confirm` passes (from the
 * dashboard: the password and a current code, or a recent re-authentication). Records `two_factor_disabled`.
 */
export async function disableTotp(prisma: Prisma, userId: string, confirm: Confirmation, actor: Actor): Promise<void> {
  await confirm();
  await prisma.$transaction(async (tx) => {
    const user = await tx.user.update({ where: { id: userId }, data: { totpSecret: null, totpPending: null, totpLastStep: null } });
    await tx.recoveryCode.deleteMany({ where: { userId } });
    await recordSecurityEvent(tx, user.merchantId, "two_factor_disabled", actor, { userId });
    await securityNotice(
      tx,
      user.merchantId,
      {
        subject: "Two-factor sign-in was turned off",
        paragraphs: [`Signing in as ${user.email} now needs only the password.`],
        facts: [["User", user.email]],
        relatedId: user.id,
      },
      [user.email],
    );
  });
}
