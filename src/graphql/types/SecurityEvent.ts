// `SecurityEvent`: the security history (owners and admins of a dashboard session only): sign-ins and
// their failures, sign-outs, and changes to keys, wallets, the team and webhook endpoints, with who
// acted and from where. Rules live in domain/security-events.ts.
import { authorize } from "../../domain/permissions.js";
import {
  countSecurityEvents,
  listSecurityEvents,
  SECURITY_EVENT_TYPES,
  type SecurityEvent as SecurityEventRow,
  type SecurityEventType as Type,
} from "../../domain/security-events.js";
import { filterSchema, listSchema } from "../../domain/security-event-requests.js";
import { parseInput } from "../../domain/validation.js";
import { builder } from "../builder.js";
import { connectionOf, countedConnection, pageEnd, pageRequest } from "../connection.js";

const TYPE_DESCRIPTIONS: Record<Type, string> = {
  sign_in: "A user signed in to the dashboard.",
  sign_in_failed: "A sign-in of a user's email failed: a wrong password or code, or too many attempts.",
  sign_out: "A user signed out (everywhere, when the detail says so).",
  session_expired: "A session ended after being idle too long.",
  password_changed: "A user changed their password.",
  password_reset: "A user set a new password with an emailed reset link.",
  api_key_created: "An API key was created.",
  api_key_rolled: "An API key was replaced by a new one.",
  api_key_revoked: "An API key was revoked.",
  wallet_changed: "A settlement wallet was changed.",
  user_invited: "Someone was invited to the team.",
  user_joined: "An invited person joined the team.",
  user_removed: "A user was removed from the team.",
  role_changed: "A user's role was changed.",
  two_factor_enabled: "A user turned two-factor sign-in on.",
  two_factor_disabled: "A user turned two-factor sign-in off.",
  webhook_endpoint_changed: "A webhook endpoint was created, changed, paused, resumed, given a new secret or deleted.",
};

const SecurityEventType = builder.enumType("SecurityEventType", {
  description: "What a security event records: SIGN_IN, SIGN_IN_FAILED, API_KEY_CREATED, WALLET_CHANGED, …",
  values: Object.fromEntries(SECURITY_EVENT_TYPES.map((t) => [t.toUpperCase(), { description: TYPE_DESCRIPTIONS[t] }])),
});

const SecurityEvent = builder.objectRef<SecurityEventRow>("SecurityEvent").implement({
  description: "One entry of the security history: what happened, who did it, from where and when.",
  fields: (t) => ({
    id: t.exposeID("id", { description: "The event's id (sev_…)." }),
    type: t.field({ type: SecurityEventType, description: "What happened.", resolve: (e) => e.type.toUpperCase() }),
    userId: t.exposeID("userId", {
      nullable: true,
      description: "The user who acted or tried to sign in; null for the operator's command line or the service itself.",
    }),
    email: t.exposeString("email", { nullable: true, description: "The user's email then (for a failed sign-in, the email typed)." }),
    ip: t.exposeString("ip", { nullable: true, description: "The address the request came from." }),
    userAgent: t.exposeString("userAgent", { nullable: true, description: "The browser or client that sent it (its User-Agent)." }),
    detail: t.field({
      type: "JSON",
      nullable: true,
      description: "What it was about, by type: {mode, newDevice}, {reason}, {keyId, mode, last4}, {mode, from, to}, {endpointId, action, url}, …",
      resolve: (e) => e.detail,
    }),
    createdAt: t.field({ type: "DateTime", description: "ISO 8601: when it happened.", resolve: (e) => e.createdAt }),
  }),
});

builder.queryFields((t) => ({
  securityEvents: t.connection(
    {
      type: SecurityEvent,
      description: "The merchant's security history, newest first, kept one year (dashboard sessions of owners and admins only).",
      args: {
        type: t.arg({ type: SecurityEventType, description: "Only events of this type." }),
        userId: t.arg.id({ description: "Only events of this user (usr_…)." }),
        createdGte: t.arg.string({ description: "ISO 8601: events at or after this instant." }),
        createdLt: t.arg.string({ description: "ISO 8601: events before this instant." }),
      },
      resolve: async (_root, args, ctx) => {
        const session = ctx.session();
        authorize(session.role, "security");
        const filters = {
          type: args.type?.toLowerCase(),
          userId: args.userId ?? undefined,
          createdGte: args.createdGte ?? undefined,
          createdLt: args.createdLt ?? undefined,
        };
        const page = await listSecurityEvents(ctx.prisma, session.merchantId, parseInput(listSchema, { ...filters, ...pageRequest(args) }), pageEnd(args));
        return connectionOf(page, args, () => countSecurityEvents(ctx.prisma, session.merchantId, parseInput(filterSchema, filters)));
      },
    },
    countedConnection("Events matching the filters."),
  ),
}));
