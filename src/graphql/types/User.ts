// `User`: the people who sign in to a merchant's dashboard, each with a role, managed by the merchant's
// other users (session-only fields), with optional two-factor sign-in and its recovery codes. Users
// join by invitation (types/Invitation.ts); nobody types another person's password (the operator's CLI
// still may). Turning two-factor on or off and changing one's password need the password. Rules live
// in domain/users.ts, domain/team.ts, domain/account.ts, domain/two-factor.ts and
// domain/reauthentication.ts; which role may call each mutation, in domain/permissions.ts.
import { changePasswordSchema } from "../../domain/account-requests.js";
import { changePassword } from "../../domain/account.js";
import { ROLE_DESCRIPTIONS, ROLES, type Role } from "../../domain/permissions.js";
import { confirmedBySession } from "../../domain/reauthentication.js";
import { signOutEverywhere } from "../../domain/sessions.js";
import { removeUser, setUserRole } from "../../domain/team.js";
import { recoveryCodesRemaining, regenerateRecoveryCodes } from "../../domain/two-factor.js";
import { confirmTotp, disableTotp, findUser, listUsers, startTotpEnrollment, type UserView, userView } from "../../domain/users.js";
import { parseInput } from "../../domain/validation.js";
import { qrSvg } from "../../lib/qr-svg.js";
import { builder } from "../builder.js";

// Upper case like every GraphQL enum; the values stay the domain's lower-case ones.
export const UserRole = builder.enumType("UserRole", {
  description: 'What a dashboard user may do (the permission table: .docs/dashboard.md "Roles").',
  values: Object.fromEntries(ROLES.map((role) => [role.toUpperCase(), { value: role, description: ROLE_DESCRIPTIONS[role] }])) as Record<
    string,
    { value: Role; description: string }
  >,
});

export const User = builder.objectRef<UserView>("User").implement({
  description: "Someone who signs in to the merchant's dashboard.",
  fields: (t) => ({
    id: t.exposeID("id", { description: "The user's id (usr_…)." }),
    email: t.exposeString("email", { description: "What they sign in with (lower case)." }),
    role: t.field({ type: UserRole, description: "What they may do in the dashboard.", resolve: (u) => u.role }),
    totpEnabled: t.exposeBoolean("totpEnabled", { description: "Whether signing in needs a code from an authenticator app." }),
    recoveryCodesRemaining: t.loadable({
      type: "Int",
      description: "How many of the user's one-time recovery codes are unused (0 while two-factor sign-in is off).",
      // Batched, not cached: a mutation of the same request may change the codes after a read.
      loaderOptions: { cache: false },
      load: async (ids: string[], ctx) => {
        const remaining = await recoveryCodesRemaining(ctx.prisma, ids);
        return ids.map((id) => remaining.get(id) ?? 0);
      },
      resolve: (u) => u.id,
    }),
    createdAt: t.field({ type: "DateTime", description: "ISO 8601.", resolve: (u) => u.createdAt }),
  }),
});

const TotpEnrollment = builder.objectRef<{ secret: string; uri: string }>("TotpEnrollment").implement({
  description: "Put the secret in an authenticator app (or open the otpauth:// URI), then confirm with a code.",
  fields: (t) => ({
    secret: t.exposeString("secret", { description: "The shared secret, base32, to type into an authenticator app." }),
    uri: t.exposeString("uri", { description: "The same as an otpauth:// URI, for a QR code." }),
    qrSvg: t.string({
      description: "The otpauth:// URI as a QR code: an SVG document (black modules on white) for an authenticator app to scan.",
      resolve: (e) => qrSvg(e.uri),
    }),
  }),
});

const RecoveryCodes = builder.objectRef<{ user: UserView; codes: string[] }>("RecoveryCodes").implement({
  description: "Two-factor sign-in's one-time recovery codes, shown this once: each stands in for an authenticator code once.",
  fields: (t) => ({
    user: t.field({ type: User, description: "The user they belong to.", resolve: (r) => r.user }),
    codes: t.exposeStringList("codes", { description: "Ten codes (xxxxx-xxxxx): store them somewhere safe now, they are never shown again." }),
  }),
});

const RoleDescription = builder.objectRef<Role>("RoleDescription").implement({
  description: "A role and what it may do, as the team page shows it.",
  fields: (t) => ({
    role: t.field({ type: UserRole, description: "The role.", resolve: (role) => role }),
    description: t.string({ description: "What it may read and do.", resolve: (role) => ROLE_DESCRIPTIONS[role] }),
  }),
});

builder.queryFields((t) => ({
  roles: t.field({
    type: [RoleDescription],
    description: "The roles a teammate can have, most powerful first, with what each may do (dashboard sessions only).",
    resolve: (_root, _args, ctx) => {
      ctx.session();
      return [...ROLES];
    },
  }),
  users: t.field({
    type: [User],
    description: "The merchant's dashboard users, oldest first (dashboard sessions only).",
    resolve: (_root, _args, ctx) => listUsers(ctx.prisma, ctx.session().merchantId),
  }),
}));

builder.mutationFields((t) => ({
  deleteUser: t.field({
    type: "ID",
    description:
      "Removes a user from the team and ends its sessions (dashboard sessions only). Only owners remove owners; the merchant's last owner cannot be removed (409 `last_owner`). Needs your password: as `password`, or a re-authentication in the last 5 minutes.",
    args: {
      id: t.arg.id({ required: true, description: "The user's id (usr_…)." }),
      password: t.arg.string({ description: "Your password, unless you re-authenticated in the last 5 minutes." }),
      totpCode: t.arg.string({ description: "With `password`, when two-factor sign-in is on: a current code or a recovery code." }),
    },
    resolve: async (_root, { id, password, totpCode }, ctx) => {
      const session = ctx.session();
      const target = await findUser(ctx.prisma, id, session.merchantId);
      await removeUser(ctx.prisma, session, target, confirmedBySession(ctx.prisma, ctx.rateLimiter, session, { password, totpCode }), ctx.actor());
      return id;
    },
  }),
  setUserRole: t.field({
    type: User,
    description:
      "Changes a teammate's role and ends their sessions: they sign in again under it (dashboard sessions only). Nobody changes their own role; only owners make an owner or change an owner's role; the merchant's last owner keeps the role (409 `last_owner`). Needs your password: as `password`, or a re-authentication in the last 5 minutes.",
    args: {
      id: t.arg.id({ required: true, description: "The user's id (usr_…)." }),
      role: t.arg({ type: UserRole, required: true, description: "The role to give them." }),
      password: t.arg.string({ description: "Your password, unless you re-authenticated in the last 5 minutes." }),
      totpCode: t.arg.string({ description: "With `password`, when two-factor sign-in is on: a current code or a recovery code." }),
    },
    resolve: async (_root, { id, role, password, totpCode }, ctx) => {
      const session = ctx.session();
      const target = await findUser(ctx.prisma, id, session.merchantId);
      const confirm = confirmedBySession(ctx.prisma, ctx.rateLimiter, session, { password, totpCode });
      return setUserRole(ctx.prisma, session, target, role, confirm, ctx.actor());
    },
  }),
  changePassword: t.int({
    description:
      "Changes the signed-in user's password; every other session of the user ends (this one stays); returns how many ended. A wrong current password spends the email's sign-in budget.",
    args: {
      currentPassword: t.arg.string({ required: true, description: "Your current password." }),
      newPassword: t.arg.string({ required: true, description: "The new password: 10 to 200 characters." }),
      totpCode: t.arg.string({ description: "When two-factor sign-in is on: a current code or a recovery code." }),
    },
    resolve: (_root, args, ctx) => {
      const session = ctx.session();
      return changePassword(ctx.prisma, ctx.rateLimiter, session, parseInput(changePasswordSchema, args), ctx.actor());
    },
  }),
  signOutEverywhere: t.int({
    description: "Ends every session of the signed-in user, this one included; returns how many ended.",
    resolve: (_root, _args, ctx) => {
      const { sessionId, merchantId, userId } = ctx.session();
      return signOutEverywhere(ctx.prisma, { sessionId, merchantId, userId }, ctx.actor());
    },
  }),
  startTotpEnrollment: t.field({
    type: TotpEnrollment,
    description:
      "Begins two-factor sign-in for the signed-in user: it is on once confirmTotp gets a code. Needs your password: as `password`, or a re-authentication in the last 5 minutes.",
    args: { password: t.arg.string({ description: "Your password, unless you re-authenticated in the last 5 minutes." }) },
    resolve: async (_root, { password }, ctx) => {
      const session = ctx.session();
      const confirm = confirmedBySession(ctx.prisma, ctx.rateLimiter, session, { password });
      return startTotpEnrollment(ctx.prisma, await findUser(ctx.prisma, session.userId), confirm);
    },
  }),
  confirmTotp: t.field({
    type: RecoveryCodes,
    description: "Turns two-factor sign-in on for the signed-in user, with a code from the enrolled app; returns ten recovery codes, shown once.",
    args: { code: t.arg.string({ required: true, description: "The app's current six-digit code." }) },
    resolve: async (_root, { code }, ctx) => {
      const { userId } = ctx.session();
      const codes = await confirmTotp(ctx.prisma, userId, code, ctx.actor());
      return { user: userView(await findUser(ctx.prisma, userId)), codes };
    },
  }),
  disableTotp: t.field({
    type: User,
    description: "Turns two-factor sign-in off: with `password` and a current `code`, or after a re-authentication in the last 5 minutes.",
    args: {
      password: t.arg.string({ description: "Your password, unless you re-authenticated in the last 5 minutes." }),
      code: t.arg.string({ description: "With `password`: the app's current six-digit code, or a recovery code." }),
    },
    resolve: async (_root, { password, code }, ctx) => {
      const session = ctx.session();
      const params = { password: "password", totpCode: "code" };
      await disableTotp(
        ctx.prisma,
        session.userId,
        confirmedBySession(ctx.prisma, ctx.rateLimiter, session, { password, totpCode: code }, params),
        ctx.actor(),
      );
      return userView(await findUser(ctx.prisma, session.userId));
    },
  }),
  regenerateRecoveryCodes: t.field({
    type: RecoveryCodes,
    description: "Replaces the signed-in user's recovery codes with ten new ones, shown once; the old ones stop working. Needs your password and a code.",
    args: {
      password: t.arg.string({ description: "Your password, unless you re-authenticated in the last 5 minutes." }),
      totpCode: t.arg.string({ description: "With `password`: a current code or a recovery code." }),
    },
    resolve: async (_root, { password, totpCode }, ctx) => {
      const session = ctx.session();
      const codes = await regenerateRecoveryCodes(ctx.prisma, session.userId, confirmedBySession(ctx.prisma, ctx.rateLimiter, session, { password, totpCode }));
      return { user: userView(await findUser(ctx.prisma, session.userId)), codes };
    },
  }),
}));
