// The request contract of customers: the bodies of POST /v1/customers, PATCH /v1/customers/:id and
// POST /v1/customers/jwt (GraphQL's createCustomer and updateCustomer inputs) and the query of
// GET /v1/customers. The doors parse a request with these (parseInput) and hand the domain the typed result.
import { z } from "zod";
import { metadataInput } from "./metadata.js";
import { pageParams } from "./paging.js";
import { addressInput } from "./postal-address.js";

const optionalText = (max: number) => z.string().max(max).nullable().optional();

const email = z.email({ error: "must be a valid email address" }).max(254);
const name = z
  .string()
  .min(1)
  .max(200)
  .refine((s) => s.trim().length > 0, "must not be blank");

const optionalFields = {
  phone: optionalText(50),
  address: addressInput.optional(),
  companyName: optionalText(200),
  taxId: optionalText(100),
  description: optionalText(1000),
  metadata: metadataInput.optional(),
};

/** The body of POST /v1/customers (and the createCustomer mutation's input). */
export const createSchema = z.strictObject({ email, name, ...optionalFields }, { error: "must be a JSON object" });
/** The body of PATCH /v1/customers/:id. */
export const updateSchema = z.strictObject({ email: email.optional(), name: name.optional(), ...optionalFields }, { error: "must be a JSON object" });
/** The fields a JWT-authenticated caller may send in the body (identity comes from the token). */
export const jwtBodySchema = z.strictObject(optionalFields, { error: "must be a JSON object" });
/** The identity claims of a customer JWT, checked as a new customer's fields are (named `jwt.…`). */
export const jwtClaimsSchema = z.object({ email, name: name.optional(), phone: optionalText(50) });

/** The query of GET /v1/customers: a keyset page and its filters. */
export const listSchema = z.strictObject({
  ...pageParams,
  email: z.string().min(1).max(254).optional(),
  query: z.string().min(1).max(100).optional(),
});

/** A customer to create, parsed (createSchema). */
export type CustomerRequest = z.output<typeof createSchema>;
/** A customer's changes, parsed (updateSchema). */
export type CustomerUpdate = z.output<typeof updateSchema>;
/** The body of POST /v1/customers/jwt, parsed (jwtBodySchema). */
export type CustomerJwtBody = z.output<typeof jwtBodySchema>;
/** The query of GET /v1/customers, parsed (listSchema). */
export type CustomerListQuery = z.output<typeof listSchema>;
/** A list's filters alone: what the count takes. */
export type CustomerFilters = Pick<CustomerListQuery, "email" | "query">;
