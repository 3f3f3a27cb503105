// `User`: the people who sign in to a merchant's dashboard, managed by the merchant's other users
// (session-only fields), with optional two-factor sign-in and its recovery codes. Users join by
// invitation (types/Invitation.ts); nobody types another person's password (the operator's CLI still
// may). Turning two-factor off needs a re-authentication. Rules live in domain/users.ts,
// domain/two-factor.ts and domain/reauthentication.ts.
import { confirmedBySession } from "../../domain/reauthentication.js";
import { signOutEverywhere } from "../../domain/sessions.js";
import { recoveryCodesRemaining, regenerateRecoveryCodes } from "../../domain/two-factor.js";
import { confirmTotp, deleteUser, disableTotp, findUser, listUsers, startTotpEnrollment, type UserView, userView } from "../../domain/users.js";
import { qrSvg } from "../../lib/qr-svg.js";
import { builder } from "../builder.js";

export const User = builder.objectRef<UserView>("User").implement({
  description: "Someone who signs in to the merchant's dashboard.",
  fields: (t) => ({
    id: t.exposeID("id", { description: "The user's id (usr_…)." }),
    email: t.exposeString("email", { description: "What they sign in with (lower case)." }),
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
    createdAt: t.string({ description: "ISO 8601.", resolve: (u) => u.createdAt.toISOString() }),
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

builder.queryFields((t) => ({
  users: t.field({
    type: [User],
    description: "The merchant's dashboard users, oldest first (dashboard sessions only).",
    resolve: (_root, _args, ctx) => listUsers(ctx.prisma, ctx.session().merchantId),
  }),
}));

builder.mutationFields((t) => ({
  deleteUser: t.field({
    type: "ID",
    description: "Deletes a user and ends its sessions; the merchant's last user cannot be deleted (dashboard sessions only).",
    args: { id: t.arg.id({ required: true, description: "The user's id (usr_…)." }) },
    resolve: async (_root, { id }, ctx) => {
      const user = await findUser(ctx.prisma, id, ctx.session().merchantId);
      await deleteUser(ctx.prisma, user, { keepOne: true });
      return id;
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
    description: "Begins two-factor sign-in for the signed-in user: it is on once confirmTotp gets a code.",
    resolve: async (_root, _args, ctx) => startTotpEnrollment(ctx.prisma, await findUser(ctx.prisma, ctx.session().userId)),
  }),
  confirmTotp: t.field({
    type: RecoveryCodes,
    description: "Turns two-factor sign-in on for the signed-in user, with a code from the enrolled app; returns ten recovery codes, shown once.",
    args: { code: t.arg.string({ required: true, description: "The app's current six-digit code." }) },
    resolve: async (_root, { code }, ctx) => {
      const { userId } = ctx.session();
      const codes = await confirmTotp(ctx.prisma, userId, code);
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
      await disableTotp(ctx.prisma, session.userId, confirmedBySession(ctx.prisma, ctx.rateLimiter, session, { password, totpCode: code }, params));
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
