// `User`: the people who sign in to a merchant's dashboard, managed by the merchant's other users
// (session-only fields), with optional two-factor sign-in. Rules live in domain/users.ts.
import { signOutEverywhere } from "../../domain/sessions.js";
import { confirmTotp, createUser, deleteUser, disableTotp, findUser, listUsers, startTotpEnrollment, type UserView, userView } from "../../domain/users.js";
import { builder } from "../builder.js";

export const User = builder.objectRef<UserView>("User").implement({
  description: "Someone who signs in to the merchant's dashboard.",
  fields: (t) => ({
    id: t.exposeID("id", { description: "The user's id (usr_…)." }),
    email: t.exposeString("email", { description: "What they sign in with (lower case)." }),
    totpEnabled: t.exposeBoolean("totpEnabled", { description: "Whether signing in needs a code from an authenticator app." }),
    createdAt: t.string({ description: "ISO 8601.", resolve: (u) => u.createdAt.toISOString() }),
  }),
});

const TotpEnrollment = builder.objectRef<{ secret: string; uri: string }>("TotpEnrollment").implement({
  description: "Put the secret in an authenticator app (or open the otpauth:// URI), then confirm with a code.",
  fields: (t) => ({
    secret: t.exposeString("secret", { description: "The shared secret, base32, to type into an authenticator app." }),
    uri: t.exposeString("uri", { description: "The same as an otpauth:// URI, for a QR code." }),
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
  createUser: t.field({
    type: User,
    description: "Adds a dashboard user to your merchant (dashboard sessions only); the password is at least 10 characters.",
    args: {
      email: t.arg.string({ required: true, description: "What they will sign in with." }),
      password: t.arg.string({ required: true, description: "Their first password, at least 10 characters." }),
    },
    resolve: (_root, { email, password }, ctx) => createUser(ctx.prisma, ctx.session().merchantId, { email, password }),
  }),
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
    resolve: (_root, _args, ctx) => signOutEverywhere(ctx.prisma, ctx.session().userId),
  }),
  startTotpEnrollment: t.field({
    type: TotpEnrollment,
    description: "Begins two-factor sign-in for the signed-in user: it is on once confirmTotp gets a code.",
    resolve: async (_root, _args, ctx) => startTotpEnrollment(ctx.prisma, await findUser(ctx.prisma, ctx.session().userId)),
  }),
  confirmTotp: t.field({
    type: User,
    description: "Turns two-factor sign-in on for the signed-in user, with a code from the enrolled app.",
    args: { code: t.arg.string({ required: true, description: "The app's current six-digit code." }) },
    resolve: async (_root, { code }, ctx) => {
      const { userId } = ctx.session();
      await confirmTotp(ctx.prisma, userId, code);
      return userView(await findUser(ctx.prisma, userId));
    },
  }),
  disableTotp: t.field({
    type: User,
    description: "Turns two-factor sign-in off, with a current code as proof.",
    args: { code: t.arg.string({ required: true, description: "The app's current six-digit code." }) },
    resolve: async (_root, { code }, ctx) => {
      const { userId } = ctx.session();
      await disableTotp(ctx.prisma, userId, code);
      return userView(await findUser(ctx.prisma, userId));
    },
  }),
}));
