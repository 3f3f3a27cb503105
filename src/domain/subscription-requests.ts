// The request contract of subscriptions: the merchant's (POST, PATCH and GET /v1/subscriptions, the
// cancel call; GraphQL's inputs and connection) and the buyer's (the checkout's two JSON calls, the
// manage page's cancel form). The doors parse a request with these (parseInput) and hand the domain
// the typed result. The statuses and the trial's bounds live here, as the requests name them;
// domain/subscriptions.ts hands them on with the rest of the subscription.
import { z } from "zod";
import { metadataInput } from "./metadata.js";
import { pageParams } from "./paging.js";
import { evmAddress, integerField } from "./validation.js";

export const SUBSCRIPTION_STATUSES = ["INCOMPLETE", "INCOMPLETE_EXPIRED", "TRIALING", "ACTIVE", "PAST_DUE", "CANCELED"] as const;

/** The longest trial a plan or subscription gives, in days (two years). */
export const MAX_TRIAL_DAYS = 730;

/** A trial's length in days (0: none). */
export const trialDaysField = integerField(0, MAX_TRIAL_DAYS);

/** The body of POST /v1/subscriptions (and the createSubscription mutation's input). */
export const createSchema = z.strictObject(
  {
    customerId: z.string().min(1).max(100),
    planId: z.string().min(1).max(100),
    trialDays: trialDaysField.optional(),
    metadata: metadataInput.optional(),
  },
  { error: "must be a JSON object" },
);

/** The query of GET /v1/subscriptions: a keyset page and its filters (GraphQL's connection). */
export const listSchema = z.strictObject({
  ...pageParams,
  status: z.enum(SUBSCRIPTION_STATUSES, { error: `must be one of ${SUBSCRIPTION_STATUSES.join(", ")}` }).optional(),
  customerId: z.string().min(1).max(100).optional(),
  planId: z.string().min(1).max(100).optional(),
});

/** The list's filters alone: GraphQL's count. */
export const filterSchema = listSchema.pick({ status: true, customerId: true, planId: true });

/** The body of POST /v1/subscriptions/:id/cancel: now unless `atPeriodEnd`. */
export const cancelSchema = z.strictObject({ atPeriodEnd: z.boolean({ error: "must be true or false" }).optional() }, { error: "must be a JSON object" });

/** The body of PATCH /v1/subscriptions/:id (and the updateSubscription mutation's input). */
export const updateSchema = z.strictObject(
  { metadata: metadataInput.optional(), cancelAtPeriodEnd: z.boolean().optional() },
  { error: "must be a JSON object" },
);

const chainIdParam = z.preprocess(
  (v) => (typeof v === "string" && /^\d{1,12}$/.test(v) ? Number(v) : v),
  z.number({ error: "must be a chain id" }).int().positive(),
);

/** The query of the checkout's "what to sign" call: the chain and the payer's wallet. */
export const authorizationQuerySchema = z.strictObject({ chainId: chainIdParam, payer: evmAddress() });

const uint = z.union([z.string().regex(/^\d{1,78}$/, "must be a non-negative integer"), z.number().int().nonnegative()]).transform((v) => BigInt(v));
const signature = z
  .string()
  .max(4000)
  .regex(/^0x([0-9a-fA-F]{2})+$/, "must be a signature in hex (0x…)");

/** The body the checkout posts: the payer's signed permission and, unless the allowance is already given, the permit. */
export const authorizeSchema = z.strictObject(
  {
    chainId: chainIdParam,
    payer: evmAddress(),
    permission: z.strictObject({
      payer: evmAddress(),
      merchant: evmAddress(),
      token: evmAddress(),
      spender: evmAddress(),
      amount: uint,
      feeBps: z.number().int().nonnegative().max(10_000),
      period: uint,
      start: uint,
      end: uint,
      salt: uint,
    }),
    signature,
    permit: z.strictObject({ value: uint, deadline: uint, signature }).nullable(),
  },
  { error: "must be a JSON object" },
);

/** The manage page's cancel form: its token, and whether to cancel now or at the period's end. */
export const manageCancelSchema = z.strictObject({ token: z.string(), at: z.enum(["now", "period_end"]) });

/** A subscription to create, parsed (createSchema). */
export type SubscriptionRequest = z.output<typeof createSchema>;
/** The query of GET /v1/subscriptions, parsed (listSchema). */
export type SubscriptionListQuery = z.output<typeof listSchema>;
/** The list's filters, parsed (filterSchema). */
export type SubscriptionFilters = z.output<typeof filterSchema>;
/** The merchant's changes to a subscription, parsed (updateSchema). */
export type SubscriptionUpdate = z.output<typeof updateSchema>;
/** The checkout's "what to sign" query, parsed (authorizationQuerySchema). */
export type AuthorizationQuery = z.output<typeof authorizationQuerySchema>;
/** The checkout's signed authorization, parsed (authorizeSchema). */
export type SignedAuthorization = z.output<typeof authorizeSchema>;
/** The manage page's cancel form, parsed (manageCancelSchema). */
export type ManageCancelForm = z.output<typeof manageCancelSchema>;
