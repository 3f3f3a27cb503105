// USDC amounts: decimal strings at the edges, integer base units (6 decimals) everywhere else.
// Invariant: no amount is ever a JavaScript number; arithmetic is on bigint only. Money the chain
// moved (any uint256) is stored as numeric(78,0), which Prisma hands back as a decimal.js value:
// such a value is turned into bigint with `toUnits` before anything is computed with it.

export const USDC_DECIMALS = 6;
const UNIT = 10n ** BigInt(USDC_DECIMALS);
const AMOUNT = /^\d+(\.\d{1,6})?$/;

/** Parses a decimal string such as "25" or "0.000001" into base units; null if malformed. */
export function parseAmount(value: string): bigint | null {
  if (!AMOUNT.test(value) || value.length > 40) return null;
  const [whole = "0", frac = ""] = value.split(".");
  return BigInt(whole) * UNIT + BigInt(frac.padEnd(USDC_DECIMALS, "0"));
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
  const units = toUnits(value);
  const sign = units < 0n ? "-" : "";
  const abs = units < 0n ? -units : units;
  const whole = abs / UNIT;
  const frac = (abs % UNIT).toString().padStart(USDC_DECIMALS, "0").replace(/0+$/, "").padEnd(2, "0");
  return `${sign}${whole}.${frac}`;
}

/** `formatAmount`, passing null through (amounts not known yet). */
export function formatAmountOrNull(units: Units | null): string | null {
  return units === null ? null : formatAmount(units);
}
