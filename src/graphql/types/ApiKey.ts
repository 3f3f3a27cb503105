// `ApiKey`: a merchant's secret keys, managed from the dashboard only (session-only fields): create
// with an optional IP allowlist, revoke, roll with an overlap. The secret is shown once, by the
// mutation that makes it, which needs a re-authentication. Rules live in domain/api-keys.ts and
// domain/reauthentication.ts.
import { apiKeyActive, createApiKey, getApiKey, listApiKeys, type NewApiKey, revokeApiKey, rollApiKey } from "../../domain/api-keys.js";
import { rollSchema } from "../../domain/api-key-requests.js";
import { AppError } from "../../domain/errors.js";
import { confirmedBySession } from "../../domain/reauthentication.js";
import { parseInput } from "../../domain/validation.js";
import { builder } from "../builder.js";
import { isLive, Mode } from "./Mode.js";

type KeyRow = Awaited<ReturnType<typeof listApiKeys>>[number];

const ApiKey = builder.objectRef<KeyRow>("ApiKey").implement({
  description: "A secret API key (sk_test_…/sk_live_…); only its last four characters are kept readable.",
  fields: (t) => ({
    id: t.exposeID("id", { description: "The key's id (key_…), not its secret." }),
    livemode: t.exposeBoolean("livemode", { description: "True for a live key (sk_live_…), false for a test key (sk_test_…)." }),
    last4: t.exposeString("last4", { description: "The secret's last four characters, to tell keys apart." }),
    name: t.exposeString("name", { nullable: true, description: "What the merchant calls it; null when unnamed." }),
    lastUsedAt: t.field({
      type: "DateTime",
      nullable: true,
      description: "ISO 8601: when it last authenticated a request, to within a minute; null if never.",
      resolve: (k) => k.lastUsedAt,
    }),
    ipAllowlist: t.exposeStringList("ipAllowlist", { description: "IPs and CIDR ranges it may be used from; empty: any." }),
    createdAt: t.field({ type: "DateTime", description: "ISO 8601.", resolve: (k) => k.createdAt }),
    revokedAt: t.field({ type: "DateTime", nullable: true, description: "ISO 8601: when it was revoked; null while it is not.", resolve: (k) => k.revokedAt }),
    expiresAt: t.field({ type: "DateTime", nullable: true, description: "Set when the key was rolled: it stops working then.", resolve: (k) => k.expiresAt }),
    active: t.boolean({ description: "Whether it works now: neither revoked nor past expiresAt.", resolve: (k) => apiKeyActive(k) }),
  }),
});

const ApiKeyWithSecret = builder.objectRef<{ key: NewApiKey; row: KeyRow }>("ApiKeyWithSecret").implement({
  description: "A new key with its secret, shown this once.",
  fields: (t) => ({
    apiKey: t.field({ type: ApiKey, description: "The new key.", resolve: (r) => r.row }),
    secret: t.string({ description: "The secret (sk_test_…/sk_live_…): store it now, it is never shown again.", resolve: (r) => r.key.secret }),
  }),
});

builder.queryFields((t) => ({
  apiKeys: t.field({
    type: [ApiKey],
    description: "The merchant's API keys in both modes, oldest first (dashboard sessions only).",
    resolve: (_root, _args, ctx) => listApiKeys(ctx.prisma, ctx.session().merchantId),
  }),
}));

builder.mutationFields((t) => ({
  createApiKey: t.field({
    type: ApiKeyWithSecret,
    description:
      "A new key (dashboard sessions only); `mode` defaults to the session's. Needs your password: as `password`, or a re-authentication in the last 5 minutes.",
    args: {
      mode: t.arg({ type: Mode, description: "The key's mode; the session's by default." }),
      ipAllowlist: t.arg.stringList({ description: "IPs and CIDR ranges; empty or absent: any address." }),
      name: t.arg.string({ description: 'What to call it (at most 100 characters), e.g. "Shop backend".' }),
      password: t.arg.string({ description: "Your password, unless you re-authenticated in the last 5 minutes." }),
      totpCode: t.arg.string({ description: "With `password`, when two-factor sign-in is on: a current code or a recovery code." }),
    },
    resolve: async (_root, { mode, ipAllowlist, name, password, totpCode }, ctx) => {
      const session = ctx.session();
      const confirm = confirmedBySession(ctx.prisma, ctx.rateLimiter, session, { password, totpCode });
      const key = await createApiKey(ctx.prisma, session.merchantId, mode ? isLive(mode) : session.livemode, ipAllowlist ?? [], confirm, ctx.actor(), name);
      return { key, row: await getApiKey(ctx.prisma, session.merchantId, key.id) };
    },
  }),
  revokeApiKey: t.field({
    type: ApiKey,
    description: "Revokes a key at once; its live connections close (dashboard sessions only).",
    args: { id: t.arg.id({ required: true, description: "The key's id (key_…)." }) },
    resolve: async (_root, { id }, ctx) => {
      const { merchantId } = ctx.session();
      if (!(await revokeApiKey(ctx.prisma, id, { actor: ctx.actor(), merchantId }))) throw new AppError("resource_missing", `No active API key '${id}'`, "id");
      ctx.authenticator.clear();
      return getApiKey(ctx.prisma, merchantId, id);
    },
  }),
  rollApiKey: t.field({
    type: ApiKeyWithSecret,
    description:
      "Replaces a key; the old one keeps working for `overlapHours` (0–168, default 24) and can be revoked sooner (dashboard sessions only). It makes a new secret, so it needs your password as createApiKey does.",
    args: {
      id: t.arg.id({ required: true, description: "The key's id (key_…)." }),
      overlapHours: t.arg.int({ description: "Hours the old key keeps working: 0–168, default 24." }),
      password: t.arg.string({ description: "Your password, unless you re-authenticated in the last 5 minutes." }),
      totpCode: t.arg.string({ description: "With `password`, when two-factor sign-in is on: a current code or a recovery code." }),
    },
    resolve: async (_root, { id, overlapHours, password, totpCode }, ctx) => {
      const session = ctx.session();
      const { merchantId } = session;
      const confirm = confirmedBySession(ctx.prisma, ctx.rateLimiter, session, { password, totpCode });
      const roll = parseInput(rollSchema, overlapHours == null ? {} : { overlapHours });
      const { key } = await rollApiKey(ctx.prisma, id, roll, confirm, { actor: ctx.actor(), merchantId });
      ctx.authenticator.clear();
      return { key, row: await getApiKey(ctx.prisma, merchantId, key.id) };
    },
  }),
}));
