// The request contract of payment links: the bodies of POST /v1/payment_links and PATCH
// /v1/payment_links/:id (GraphQL's createPaymentLink and updatePaymentLink inputs) and the query of
// GET /v1/payment_links. The doors parse a request with these (parseInput) and hand the domain the typed result.
import { z } from "zod";
import { createSchema as chargeSchema } from "./charges/requests.js";
import { metadataInput } from "./metadata.js";
import { pageParams } from "./paging.js";
import { amountInput, integerTypeError } from "./validation.js";
import { isEmailAddress } from "../email/address.js";

/** The largest quantity a link may let a buyer pick. */
export const QUANTITY_LIMIT = 1000;

const name = z
  .string()
  .max(200)
  .refine((s) => s.trim().length > 0, "must not be blank");

const optionalFields = {
  description: z.string().max(1000).nullable().optional(),
  successUrl: chargeSchema.shape.successUrl,
  cancelUrl: chargeSchema.shape.cancelUrl,
  metadata: metadataInput.optional(),
  collectEmail: z.boolean().optional(),
  quantityMax: z
    .number({ error: integerTypeError("must be a whole number from 2 to 1000, or null") })
    .int("must be a whole number from 2 to 1000, or null")
    .min(2, "must be at least 2 (or null: buyers always get one)")
    .max(QUANTITY_LIMIT, `must be at most ${QUANTITY_LIMIT}`)
    .nullable()
    .optional(),
};

/** The body of POST /v1/payment_links (and the createPaymentLink mutation's input). */
export const createSchema = z.strictObject({ name, amount: amountInput("25.00"), ...optionalFields }, { error: "must be a JSON object" });

/** The body of PATCH /v1/payment_links/:id: everything but the amount; `active: false` retires it. */
export const updateSchema = z.strictObject({ name: name.optional(), active: z.boolean().optional(), ...optionalFields }, { error: "must be a JSON object" });

/** The query of GET /v1/payment_links: a keyset page, optionally only active or inactive links. */
export const listSchema = z.strictObject({
  ...pageParams,
  active: z.union([z.boolean(), z.enum(["true", "false"]).transform((v) => v === "true")], { error: "must be true or false" }).optional(),
});

/** The buyer's email a link that asks for it takes: one plain address (nothing that could add a header), at most 254 characters. */
export const buyerEmailSchema = z.strictObject({ email: z.string().trim().refine(isEmailAddress, "must be one email address, such as you@example.com") });

/** A payment link to create, parsed (createSchema). */
export type PaymentLinkRequest = z.output<typeof createSchema>;
/** A payment link's changes, parsed (updateSchema). */
export type PaymentLinkUpdate = z.output<typeof updateSchema>;
/** The query of GET /v1/payment_links, parsed (listSchema). */
export type PaymentLinkListQuery = z.output<typeof listSchema>;
/** A list's filter alone: what the count takes. */
export type PaymentLinkFilters = Pick<PaymentLinkListQuery, "active">;
