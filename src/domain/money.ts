// USDC amounts: decimal strings at the edges, integer base units (6 decimals) everywhere else.
// Invariant: no amount is ever a JavaScript number; arithmetic is on bigint only.

export const USDC_DECIMALS = 6;
const UNIT = 10n ** BigInt(USDC_DECIMALS);
const AMOUNT = /^\d+(\.\d{1,6})?$/;

/** Parses a decimal string such as "25" or "0.000001" into base units; null if malformed. */
export function parseAmount(value: string): bigint | null {
  if (!AMOUNT.test(value) || value.length > 40) return null;
  const [whole = "0", frac = ""] = value.split(".");
  return BigInt(whole) * UNIT + BigInt(frac.padEnd(USDC_DECIMALS, "0"));
}

/** Formats base units with at least 2 and at most 6 decimals: 25000000n → "25.00". */
export function formatAmount(units: bigint): string {
  const sign = units < 0n ? "-" : "";
  const abs = units < 0n ? -units : units;
  const whole = abs / UNIT;
  const frac = (abs % UNIT).toString().padStart(USDC_DECIMALS, "0").replace(/0+$/, "").padEnd(2, "0");
  return `${sign}${whole}.${frac}`;
}

/** `formatAmount`, passing null through (amounts not known yet). */
export function formatAmountOrNull(units: bigint | null): string | null {
  return units === null ? null : formatAmount(units);
}
