// USDC amounts as the domain takes and gives them: decimal strings at the edges, integer base units
// (6 decimals) everywhere else, parsed and printed by the one money module (lib/money.js) the
// dashboard and the hosted pages use too.
// Invariant: no amount is ever a JavaScript number; arithmetic is on bigint only. Money the chain
// moved (any uint256) is stored as numeric(78,0), which Prisma hands back as a decimal.js value:
// such a value is turned into bigint with `toUnits` before anything is computed with it.
import { formatUnits, tryParseUnits, USDC_DECIMALS } from "../lib/money.js";

export { USDC_DECIMALS };

/** The longest amount text taken: past it, a request's digits are refused before any arithmetic. */
const MAX_LENGTH = 40;

/** Parses a decimal string of zero or more such as "25" or "0.000001" into base units; null if malformed. */
export function parseAmount(value: string): bigint | null {
  if (value.length > MAX_LENGTH) return null;
  return tryParseUnits(value, USDC_DECIMALS, { negative: false });
}

/** A numeric column as Prisma returns it (a decimal.js value): read with `toUnits`, never computed with. */
export interface Numeric {
  toFixed(): string;
}

/** Base units as bigint or as a stored numeric. */
export type Units = bigint | Numeric;

/** Base units as bigint, exactly (a numeric's digits, without exponent or rounding). */
export function toUnits(value: Units): bigint {
  return typeof value === "bigint" ? value : BigInt(value.toFixed());
}

/** Formats base units with at least 2 and at most 6 decimals: 25000000n → "25.00". */
export function formatAmount(value: Units): string {
  return formatUnits(toUnits(value), USDC_DECIMALS, { minDecimals: 2 });
}

/** `formatAmount`, passing null through (amounts not known yet). */
export function formatAmountOrNull(units: Units | null): string | null {
  return units === null ? null : formatAmount(units);
}
