// `Address` and `AddressInput`: a customer's (or the seller's) postal address. A part not given is
// null here, as GraphQL says "absent"; REST gives it as "" (domain/postal-address.ts).
import { describe } from "../../domain/describe.js";
import { type PostalAddress, AddressResource } from "../../domain/postal-address.js";
import { builder } from "../builder.js";

export const Address = builder.objectRef<PostalAddress>("Address").implement({
  description: "A postal address; a part not given is null (never an empty string).",
  fields: (t) => ({
    line1: t.exposeString("line1", { nullable: true, description: describe(AddressResource, "line1") }),
    line2: t.exposeString("line2", { nullable: true, description: describe(AddressResource, "line2") }),
    city: t.exposeString("city", { nullable: true, description: describe(AddressResource, "city") }),
    state: t.exposeString("state", { nullable: true, description: describe(AddressResource, "state") }),
    postalCode: t.exposeString("postalCode", { nullable: true, description: describe(AddressResource, "postalCode") }),
    country: t.exposeString("country", { nullable: true, description: describe(AddressResource, "country") }),
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
