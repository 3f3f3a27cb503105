// `Country` and `countries`: the ISO 3166-1 list an address's country is checked against
// (domain/countries.ts), for pickers that show names and send codes.
import { COUNTRIES } from "../../domain/countries.js";
import { builder } from "../builder.js";

const Country = builder.objectRef<(typeof COUNTRIES)[number]>("Country").implement({
  description: "A country of ISO 3166-1.",
  fields: (t) => ({
    code: t.exposeString("code", { description: "Its ISO 3166-1 alpha-2 code: what an address's country takes." }),
    name: t.exposeString("name", { description: "Its English short name." }),
  }),
});

builder.queryFields((t) => ({
  countries: t.field({
    type: [Country],
    description: "Every country an address may name, by code (the officially assigned ISO 3166-1 alpha-2 codes).",
    resolve: () => COUNTRIES,
  }),
}));
