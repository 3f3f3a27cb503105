// `Amount`: USDC as the REST API writes it, a decimal string ("25.00"). Resolvers hand over base
// units (bigint, or a stored numeric) and this scalar prints them with the domain's formatAmount, so
// no resolver formats money by hand and GraphQL cannot print an amount differently from REST. Types
// that expose a REST resource as it is (Payout, Settlement…) pass its text, already formatted by the
// domain: that text is checked to be the domain's own form, never reformatted.
import { GraphQLError, Kind } from "graphql";
import { formatAmount, parseAmount, type Units } from "../../domain/money.js";
import { tryParseUnits, USDC_DECIMALS } from "../../lib/money.js";
import { builder } from "../builder.js";

/** Base units from a decimal string such as "25" or "0.000001"; a clear error for anything else. */
function amountFromText(value: unknown): bigint {
  const units = typeof value === "string" ? parseAmount(value) : null;
  if (units === null) throw new GraphQLError(`Amount must be a USDC decimal string of at most 6 decimals, such as "25.00"; got ${JSON.stringify(value)}.`);
  return units;
}

/** Whether `value` is base units as the domain holds them (a bigint, or a numeric column's decimal value). */
function isUnits(value: unknown): value is Units {
  return typeof value === "bigint" || (typeof value === "object" && value !== null && "toFixed" in value && typeof value.toFixed === "function");
}

builder.scalarType("Amount", {
  description: 'USDC as a decimal string with at least 2 and at most 6 decimals, e.g. "25.00" (the same text as the REST API\'s amounts).',
  serialize: (value) => {
    if (isUnits(value)) return formatAmount(value);
    // Text is passed through only in the form formatAmount gives it, so "25" or a float cannot slip out.
    const units = typeof value === "string" ? tryParseUnits(value, USDC_DECIMALS, { negative: true }) : null;
    if (units === null || formatAmount(units < 0n ? -units : units) !== value.replace(/^-/, "")) {
      throw new GraphQLError(`Amount fields resolve to base units or the domain's amount text, not ${JSON.stringify(value)}.`);
    }
    return value;
  },
  parseValue: amountFromText,
  parseLiteral: (node) => amountFromText(node.kind === Kind.STRING ? node.value : undefined),
});
