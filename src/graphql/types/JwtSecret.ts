// `JwtSecret`: the HS256 secrets a merchant's backend signs customer JWTs with (the `kid` is the id),
// managed from the dashboard only (session-only fields). The secret is shown once, when made.
import { AppError } from "../../domain/errors.js";
import { createJwtSecret, listJwtSecrets, type NewJwtSecret, revokeJwtSecret } from "../../domain/merchants.js";
import { builder } from "../builder.js";
import { isLive, Mode } from "./Mode.js";

type SecretRow = Awaited<ReturnType<typeof listJwtSecrets>>[number];

const JwtSecret = builder.objectRef<SecretRow>("JwtSecret").implement({
  fields: (t) => ({
    id: t.exposeID("id", { description: "The `kid` header of tokens signed with it." }),
    livemode: t.exposeBoolean("livemode"),
    createdAt: t.string({ resolve: (s) => s.createdAt.toISOString() }),
    revokedAt: t.string({ nullable: true, resolve: (s) => s.revokedAt?.toISOString() ?? null }),
  }),
});

const JwtSecretWithSecret = builder.objectRef<NewJwtSecret>("JwtSecretWithSecret").implement({
  description: "A new JWT secret with its key material, shown this once.",
  fields: (t) => ({
    id: t.exposeID("id"),
    livemode: t.exposeBoolean("livemode"),
    secret: t.exposeString("secret"),
  }),
});

builder.queryFields((t) => ({
  jwtSecrets: t.field({
    type: [JwtSecret],
    description: "The merchant's JWT secrets in both modes, oldest first (dashboard sessions only).",
    resolve: (_root, _args, ctx) => listJwtSecrets(ctx.prisma, ctx.session().merchantId),
  }),
}));

builder.mutationFields((t) => ({
  createJwtSecret: t.field({
    type: JwtSecretWithSecret,
    description: "A new secret for customer JWTs (dashboard sessions only); `mode` defaults to the session's.",
    args: { mode: t.arg({ type: Mode }) },
    resolve: (_root, { mode }, ctx) => {
      const session = ctx.session();
      return createJwtSecret(ctx.prisma, session.merchantId, mode ? isLive(mode) : session.livemode);
    },
  }),
  revokeJwtSecret: t.field({
    type: "Boolean",
    description: "Revokes a secret: tokens signed with it stop verifying at once (dashboard sessions only).",
    args: { id: t.arg.id({ required: true }) },
    resolve: async (_root, { id }, ctx) => {
      await revokeJwtSecret(ctx.prisma, id, ctx.session().merchantId);
      return true;
    },
  }),
}));
