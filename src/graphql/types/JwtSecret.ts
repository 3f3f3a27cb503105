// `JwtSecret`: the HS256 secrets a merchant's backend signs customer JWTs with (the `kid` is the id),
// managed from the dashboard only (session-only fields). The secret is shown once, when made.
import { AppError } from "../../domain/errors.js";
import { createJwtSecret, listJwtSecrets, type NewJwtSecret, revokeJwtSecret } from "../../domain/merchants.js";
import { builder } from "../builder.js";
import { isLive, Mode } from "./Mode.js";

type SecretRow = Awaited<ReturnType<typeof listJwtSecrets>>[number];

const JwtSecret = builder.objectRef<SecretRow>("JwtSecret").implement({
  description: "An HS256 secret your backend signs customer JWTs with (POST /v1/customers/jwt); its key material is not shown again.",
  fields: (t) => ({
    id: t.exposeID("id", { description: "The `kid` header of tokens signed with it." }),
    livemode: t.exposeBoolean("livemode", { description: "True for live-mode customers, false for test-mode ones." }),
    createdAt: t.field({ type: "DateTime", description: "ISO 8601.", resolve: (s) => s.createdAt }),
    revokedAt: t.field({ type: "DateTime", nullable: true, description: "ISO 8601: when it was revoked; null while it is not.", resolve: (s) => s.revokedAt }),
  }),
});

const JwtSecretWithSecret = builder.objectRef<NewJwtSecret>("JwtSecretWithSecret").implement({
  description: "A new JWT secret with its key material, shown this once.",
  fields: (t) => ({
    id: t.exposeID("id", { description: "The `kid` header of tokens signed with it." }),
    livemode: t.exposeBoolean("livemode", { description: "True for live-mode customers, false for test-mode ones." }),
    secret: t.exposeString("secret", { description: "The key material: store it now, it is never shown again." }),
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
    args: { mode: t.arg({ type: Mode, description: "The secret's mode; the session's by default." }) },
    resolve: (_root, { mode }, ctx) => {
      const session = ctx.session();
      return createJwtSecret(ctx.prisma, session.merchantId, mode ? isLive(mode) : session.livemode);
    },
  }),
  revokeJwtSecret: t.field({
    type: "Boolean",
    description: "Revokes a secret: tokens signed with it stop verifying at once (dashboard sessions only).",
    args: { id: t.arg.id({ required: true, description: "The secret's id (its kid)." }) },
    resolve: async (_root, { id }, ctx) => {
      await revokeJwtSecret(ctx.prisma, id, ctx.session().merchantId);
      return true;
    },
  }),
}));
