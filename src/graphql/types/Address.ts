// `Address` and `AddressInput`: a customer's postal address.
import type { CustomerAddress } from "../../domain/customers.js";
import { builder } from "../builder.js";

export const Address = builder.objectRef<CustomerAddress>("Address").implement({
  fields: (t) => ({
    line1: t.exposeString("line1", { nullable: true }),
    line2: t.exposeString("line2", { nullable: true }),
    city: t.exposeString("city", { nullable: true }),
    state: t.exposeString("state", { nullable: true }),
    postalCode: t.exposeString("postalCode", { nullable: true }),
    country: t.exposeString("country", { nullable: true, description: "ISO 3166-1 alpha-2 code." }),
  }),
});

export const AddressInput = builder.inputType("AddressInput", {
  fields: (t) => ({
    line1: t.string(),
    line2: t.string(),
    city: t.string(),
    state: t.string(),
    postalCode: t.string(),
    country: t.string({ description: "ISO 3166-1 alpha-2 code." }),
  }),
});
