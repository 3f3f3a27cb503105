// A postal address (a customer's, the seller's on invoices): how callers give it, how it is stored,
// and how REST shows it. Stored, a part not given is null and an address with no part is null.
// Over REST every part is a string, as the specification types it: a part not given is "" (the
// `Address` schema of /v1/openapi.json says so once); GraphQL's Address keeps null for it.
import { z } from "zod";
import { isCountryCode } from "./countries.js";
import { jsonColumn } from "./json-columns.js";

const part = z.string().max(200).nullable().optional();

/** A postal address as callers give it: every part optional, "" or null for a part not given, the country checked. */
export const addressInput = z
  .strictObject(
    {
      line1: part,
      line2: part,
      city: part,
      state: part,
      postalCode: part,
      // "" is accepted as "no country" so that an address read over REST can be sent back as it is.
      country: z
        .string()
        .refine((c) => c === "" || isCountryCode(c), "must be a two-letter ISO 3166-1 country code")
        .transform((c) => c.toUpperCase())
        .nullable()
        .optional(),
    },
    { error: "must be an object" },
  )
  .nullable();

const PARTS = ["line1", "line2", "city", "state", "postalCode", "country"] as const;

/** An address as stored and as GraphQL shows it: a part not given is null. */
export type PostalAddress = Record<(typeof PARTS)[number], string | null>;

/** An address as REST shows it: every part a string, "" when not given. */
export const AddressResource = z
  .object({
    line1: z.string().describe("Street and number."),
    line2: z.string().describe("Apartment, suite, building."),
    city: z.string().describe("City or town."),
    state: z.string().describe("State, province or region."),
    postalCode: z.string().describe("ZIP or postal code."),
    country: z.string().describe("ISO 3166-1 alpha-2 code, upper case."),
  })
  .describe('A postal address. Every part is a string: "" when it was not given. An address with no part given is null instead.');
export type AddressResource = z.infer<typeof AddressResource>;

/** What to store for an address given by a caller: all six parts (blank ones null), or null when none is set. */
export function normaliseAddress(a: z.output<typeof addressInput>): PostalAddress | null {
  return a ? storedAddress(a) : null;
}

const storedPart = z.string().nullable().optional();
/** An address as a JSON column holds it: parts may be missing, null or "" (rows written before blanks were stored as null). */
const StoredAddress = z
  .object({ line1: storedPart, line2: storedPart, city: storedPart, state: storedPart, postalCode: storedPart, country: storedPart })
  .nullable();

/** A stored address read back, every part present and a blank one null (rows written before blanks were stored as null included). */
export function storedAddress(stored: unknown): PostalAddress | null {
  const parts = jsonColumn(StoredAddress, stored ?? null, "a postal address (customers.address, merchants.business_address, invoice details)");
  if (parts === null) return null;
  const full = Object.fromEntries(PARTS.map((p) => [p, parts[p] ? parts[p] : null])) as PostalAddress;
  return PARTS.some((p) => full[p] !== null) ? full : null;
}

/** The one place an address is shaped for REST: every part a string ("" for a part not given). */
export function addressResource(stored: unknown): AddressResource | null {
  const address = storedAddress(stored);
  return address && (Object.fromEntries(PARTS.map((p) => [p, address[p] ?? ""])) as AddressResource);
}
