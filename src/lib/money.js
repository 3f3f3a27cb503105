// @ts-check
// Money as exact integers: a decimal string ("-2.50") at the edges, bigint base units inside, for
// any token's number of decimals. The one place amounts are parsed and printed: the server imports
// it, the dashboard's bundle includes it, and the hosted pages load this very file as a script
// module (/pay/assets/money.js). So it is plain JavaScript, typed with JSDoc (checked by tsc), and
// imports nothing.
//
// Invariants: no amount is ever a JavaScript number; parsing never rounds (more digits than the
// token has are refused, not cut); formatting then parsing gives back the same bigint.

/** The decimals of USDC, the currency every amount of this service is in. */
export const USDC_DECIMALS = 6;

/** The most decimals a token may have here (uint256 amounts of any ERC-20 in use have at most 18). */
const MAX_DECIMALS = 18;

const DECIMAL = /^(-?)(\d+)(?:\.(\d+))?$/;

/**
 * Why an amount was refused: MALFORMED (not a plain decimal such as "12" or "-0.5"), TOO_PRECISE
 * (more decimals than the token has), NEGATIVE (a sign where only amounts of zero or more are taken),
 * TOO_LONG (more whole digits than allowed), NOT_BIGINT (base units that are not a bigint) or
 * BAD_DECIMALS (a number of decimals that is not a whole number from 0 to 18).
 * @typedef {"MALFORMED" | "TOO_PRECISE" | "NEGATIVE" | "TOO_LONG" | "NOT_BIGINT" | "BAD_DECIMALS"} MoneyErrorCode
 */

/** An amount refused by parseUnits or formatUnits, with the reason as a code. */
export class MoneyError extends Error {
  /**
   * @param {MoneyErrorCode} code
   * @param {string} message
   */
  constructor(code, message) {
    super(message);
    this.name = "MoneyError";
    /** @readonly */
    this.code = code;
  }
}

/**
 * What parseUnits accepts beyond a plain decimal of at most `decimals` decimals.
 * @typedef {object} ParseOptions
 * @property {boolean} [negative] whether a leading "-" is taken (default true)
 * @property {number} [maxWholeDigits] the most digits before the point (default: no limit)
 */

/** @param {number} decimals */
function checkDecimals(decimals) {
  if (!Number.isInteger(decimals) || decimals < 0 || decimals > MAX_DECIMALS) {
    throw new MoneyError("BAD_DECIMALS", `decimals must be a whole number from 0 to ${MAX_DECIMALS}, not ${String(decimals)}`);
  }
}

/**
 * A decimal string ("2.50", "-0.000001", "007") in base units of a token with `decimals` decimals,
 * exactly; throws a MoneyError for anything else (an exponent, a comma, a bare ".5", spaces).
 * @param {string} text
 * @param {number} decimals
 * @param {ParseOptions} [options]
 * @returns {bigint}
 */
export function parseUnits(text, decimals, { negative = true, maxWholeDigits = Infinity } = {}) {
  checkDecimals(decimals);
  const match = typeof text === "string" ? DECIMAL.exec(text) : null;
  if (!match) throw new MoneyError("MALFORMED", `${JSON.stringify(String(text)).slice(0, 50)} is not a decimal amount`);
  const [, sign, whole = "", fraction = ""] = match;
  if (sign && !negative) throw new MoneyError("NEGATIVE", `${text} is negative`);
  if (whole.length > maxWholeDigits) throw new MoneyError("TOO_LONG", `${text.slice(0, 50)} has more than ${maxWholeDigits} digits before the point`);
  if (fraction.length > decimals) throw new MoneyError("TOO_PRECISE", `${text} has more than ${decimals} decimals`);
  const units = BigInt(whole + fraction.padEnd(decimals, "0"));
  return sign ? -units : units;
}

/**
 * parseUnits's answer, or null where it throws a MoneyError (for input a person typed).
 * @param {string} text
 * @param {number} decimals
 * @param {ParseOptions} [options]
 * @returns {bigint | null}
 */
export function tryParseUnits(text, decimals, options) {
  try {
    return parseUnits(text, decimals, options);
  } catch (e) {
    if (e instanceof MoneyError && e.code !== "BAD_DECIMALS") return null;
    throw e;
  }
}

/**
 * Base units of a token with `decimals` decimals as a decimal string: no leading zeros, no trailing
 * zeros beyond `minDecimals`, "-" only below zero (-2500000n, 6 → "-2.5"; with minDecimals 2, "-2.50").
 * @param {bigint} units
 * @param {number} decimals
 * @param {{ minDecimals?: number }} [options]
 * @returns {string}
 */
export function formatUnits(units, decimals, { minDecimals = 0 } = {}) {
  checkDecimals(decimals);
  if (typeof units !== "bigint") throw new MoneyError("NOT_BIGINT", `base units must be a bigint, not a ${typeof units}`);
  const digits = (units < 0n ? -units : units).toString().padStart(decimals + 1, "0");
  const whole = digits.slice(0, digits.length - decimals);
  const fraction = digits
    .slice(digits.length - decimals)
    .replace(/0+$/, "")
    .padEnd(Math.min(minDecimals, decimals), "0");
  return `${units < 0n ? "-" : ""}${whole}${fraction ? `.${fraction}` : ""}`;
}

/**
 * -1, 0 or 1 as `a` is less than, equal to or more than `b` (a sort's comparator).
 * @param {bigint} a
 * @param {bigint} b
 * @returns {-1 | 0 | 1}
 */
export function compareUnits(a, b) {
  return a < b ? -1 : a > b ? 1 : 0;
}
