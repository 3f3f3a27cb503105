import { describe, expect, it } from "vitest";
import { formatAmount, parseAmount } from "../../src/domain/money.js";

describe("money", () => {
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

  it.each(["", "-1", "1e3", "1.1234567", ".5", "5.", " 1", "0x10", "1,5"])("rejects %j", (text) => {
    expect(parseAmount(text)).toBeNull();
  });

  it("sums exactly where floats do not", () => {
    expect(formatAmount(parseAmount("0.1")! + parseAmount("0.2")!)).toBe("0.30");
  });
});
