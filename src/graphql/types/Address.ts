// `Address` and `AddressInput`: a customer's (or the seller's) postal address. A part not given is
// null here, as GraphQL says "absent"; REST gives it as "" (domain/postal-address.ts).
import type { PostalAddress } from "../../domain/postal-address.js";
import { builder } from "../builder.js";

export const Address = builder.objectRef<PostalAddress>("Address").implement({
  description: "A postal address; a part not given is null (never an empty string).",
  fields: (t) => ({
    line1: t.exposeString("line1", { nullable: true, description: "Street and number." }),
    line2: t.exposeString("line2", { nullable: true, description: "Apartment, suite, building." }),
    city: t.exposeString("city", { nullable: true, description: "City or town." }),
    state: t.exposeString("state", { nullable: true, description: "State, province or region." }),
    postalCode: t.exposeString("postalCode", { nullable: true, description: "ZIP or postal code." }),
    country: t.exposeString("country", { nullable: true, description: "ISO 3166-1 alpha-2 code." }),
  }),
});

export const AddressInput = builder.inputType("AddressInput", {
  description: 'A postal address; every part is optional ("" or null: not given).',
  fields: (t) => ({
    line1: t.string({ description: "Street and number." }),
    line2: t.string({ description: "Apartment, suite, building." }),
    city: t.string({ description: "City or town." }),
    state: t.string({ description: "State, province or region." }),
    postalCode: t.string({ description: "ZIP or postal code." }),
    country: t.string({ description: "ISO 3166-1 alpha-2 code (one of `countries`)." }),
  }),
});
