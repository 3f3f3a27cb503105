// The one money module (src/lib/money.js) and the domain's USDC amounts built on it. The properties
// run over amounts from a seeded generator (the same amounts on every run, so a failure reproduces):
// negative ones, zero, the largest uint256 and its negation, for every number of decimals from 0 to 18.
import { describe, expect, it } from "vitest";
import { formatAmount, parseAmount } from "../../src/domain/money.js";
import { compareUnits, formatUnits, MoneyError, parseUnits, tryParseUnits } from "../../src/lib/money.js";

const MAX_UINT256 = 2n ** 256n - 1n;
const DECIMALS = Array.from({ length: 19 }, (_, d) => d);
const RUNS = 300;

/** A seeded generator (mulberry32): the same numbers in the same order for the same seed. */
function random(seed: number) {
  let state = seed >>> 0;
  const next = (): number => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
  const int = (below: number): number => Math.floor(next() * below);
  const digits = (n: number): string => Array.from({ length: n }, () => String(int(10))).join("");
  /** An amount of up to 256 bits, either sign; edges (0, ±1, ±max uint256) come often. */
  const amount = (): bigint => {
    const edge = int(10);
    if (edge === 0) return [0n, 1n, -1n, MAX_UINT256, -MAX_UINT256][int(5)]!;
    let bits = 0n;
    for (let i = 0, words = 1 + int(8); i < words; i++) bits = (bits << 32n) | BigInt(int(2 ** 32));
    const value = bits & (MAX_UINT256 >> BigInt(int(256)));
    return int(2) === 0 ? -value : value;
  };
  return { int, digits, amount };
}

/**
 * `text` as formatUnits writes it, worked out on the text alone: no leading zeros, no trailing
 * zeros after the point, no point without decimals, no sign on zero.
 */
function normalised(text: string): string {
  const negative = text.startsWith("-");
  const [whole = "", fraction = ""] = text.replace(/^-/, "").split(".");
  const w = whole.replace(/^0+(?=\d)/, "");
  const f = fraction.replace(/0+$/, "");
  const zero = /^0*$/.test(w + f);
  return `${negative && !zero ? "-" : ""}${w}${f ? `.${f}` : ""}`;
}

describe("the money module, over random amounts", () => {
  it.each(DECIMALS)("parse(format(x)) is x with %i decimals, whatever the decimals shown", (decimals) => {
    const r = random(1000 + decimals);
    for (let i = 0; i < RUNS; i++) {
      const x = r.amount();
      const minDecimals = r.int(decimals + 1);
      const text = formatUnits(x, decimals, { minDecimals });
      expect(parseUnits(text, decimals), text).toBe(x);
      expect(text.split(".")[1]?.length ?? 0).toBeGreaterThanOrEqual(minDecimals);
    }
  });

  it.each(DECIMALS)("format(parse(s)) normalises s with %i decimals (leading and trailing zeros, -0)", (decimals) => {
    const r = random(2000 + decimals);
    for (let i = 0; i < RUNS; i++) {
      const fraction = r.digits(r.int(decimals + 1));
      const text = `${r.int(2) === 0 ? "-" : ""}${"0".repeat(r.int(3))}${r.digits(1 + r.int(78))}${fraction ? `.${fraction}` : ""}`;
      expect(formatUnits(parseUnits(text, decimals), decimals), text).toBe(normalised(text));
    }
  });

  it("compares as the amounts are ordered, negatives below zero", () => {
    const r = random(3000);
    for (let i = 0; i < RUNS; i++) {
      const [a, b] = [r.amount(), r.amount()];
      const sign = a - b < 0n ? -1 : a - b > 0n ? 1 : 0;
      expect(compareUnits(a, b)).toBe(sign);
      expect(compareUnits(b, a)).toBe(-sign || 0);
      expect(compareUnits(a, a)).toBe(0);
    }
    expect([3n, -MAX_UINT256, 0n, -1n, MAX_UINT256].sort(compareUnits)).toEqual([-MAX_UINT256, -1n, 0n, 3n, MAX_UINT256]);
  });

  it('reads and writes negatives right (the dashboard\'s old copies gave -1,500,000 and "-2.-5")', () => {
    expect(parseUnits("-2.50", 6)).toBe(-2_500_000n);
    expect(formatUnits(-2_500_000n, 6, { minDecimals: 2 })).toBe("-2.50");
    expect(formatUnits(-1n, 6)).toBe("-0.000001");
    expect(formatUnits(-MAX_UINT256, 18)).toBe(`-${MAX_UINT256.toString().slice(0, -18)}.${MAX_UINT256.toString().slice(-18)}`);
    expect(formatUnits(5n, 0, { minDecimals: 2 })).toBe("5");
  });
});

describe("the money module refuses bad input with a code", () => {
  it.each([
    ["", "MALFORMED"],
    ["1e3", "MALFORMED"],
    ["+1", "MALFORMED"],
    ["--1", "MALFORMED"],
    [" 1", "MALFORMED"],
    [".5", "MALFORMED"],
    ["5.", "MALFORMED"],
    ["1,5", "MALFORMED"],
    ["0x10", "MALFORMED"],
    ["NaN", "MALFORMED"],
    ["1.1234567", "TOO_PRECISE"],
    ["1.0000000", "TOO_PRECISE"],
  ])("%j: %s", (text, code) => {
    expect(() => parseUnits(text, 6)).toThrow(expect.objectContaining({ name: "MoneyError", code }));
    expect(tryParseUnits(text, 6)).toBeNull();
  });

  it("refuses a sign or a length where the caller says so, and decimals or base units of the wrong kind", () => {
    expect(() => parseUnits("-1", 6, { negative: false })).toThrow(expect.objectContaining({ code: "NEGATIVE" }));
    expect(() => parseUnits("-0", 6, { negative: false })).toThrow(expect.objectContaining({ code: "NEGATIVE" }));
    expect(() => parseUnits("1".repeat(16), 6, { maxWholeDigits: 15 })).toThrow(expect.objectContaining({ code: "TOO_LONG" }));
    expect(parseUnits("1".repeat(15), 6, { maxWholeDigits: 15 })).toBe(111_111_111_111_111_000_000n);
    for (const decimals of [-1, 19, 1.5, Number.NaN]) {
      expect(() => parseUnits("1", decimals)).toThrow(expect.objectContaining({ code: "BAD_DECIMALS" }));
      expect(() => formatUnits(1n, decimals)).toThrow(expect.objectContaining({ code: "BAD_DECIMALS" }));
      // A caller's mistake, not a person's typo: never swallowed as "not an amount".
      expect(() => tryParseUnits("1", decimals)).toThrow(MoneyError);
    }
    expect(() => formatUnits(1 as unknown as bigint, 6)).toThrow(expect.objectContaining({ code: "NOT_BIGINT" }));
    expect(() => parseUnits(1 as unknown as string, 6)).toThrow(expect.objectContaining({ code: "MALFORMED" }));
  });
});

describe("the domain's USDC amounts", () => {
  it.each([
    ["25", 25_000_000n, "25.00"],
    ["0.000001", 1n, "0.000001"],
    ["1.234567", 1_234_567n, "1.234567"],
    ["0.1", 100_000n, "0.10"],
    ["1000000", 1_000_000_000_000n, "1000000.00"],
  ])("%s ↔ %s base units", (text, units, formatted) => {
    expect(parseAmount(text)).toBe(units);
    expect(formatAmount(units)).toBe(formatted);
  });

  it.each(["", "-1", "-0", "1e3", "1.1234567", ".5", "5.", " 1", "0x10", "1,5", "1".repeat(41)])("rejects %j", (text) => {
    expect(parseAmount(text)).toBeNull();
  });

  it("prints a negative balance with its sign", () => {
    expect(formatAmount(-parseAmount("2.5")!)).toBe("-2.50");
  });
});
