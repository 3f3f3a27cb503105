// `Metadata`: a flat JSON object; its rules are checked by the domain like any other input.
import { builder } from "../builder.js";

builder.scalarType("Metadata", {
  description: "Flat key-value pairs: at most 50 keys of 1-40 characters; values are strings (≤500), numbers or booleans.",
  serialize: (value) => value,
  parseValue: (value) => {
    if (value === null || typeof value !== "object" || Array.isArray(value)) throw new TypeError("Metadata must be an object");
    return value as Record<string, unknown>;
  },
});
