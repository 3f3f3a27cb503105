// The Amount and DateTime scalars print exactly what REST prints (formatAmount, toISOString), take
// the domain's text through unchanged, and refuse anything else with a message naming the scalar.
import { GraphQLScalarType, Kind } from "graphql";
import { describe, expect, it } from "vitest";
import { schema } from "../../src/graphql/schema.js";

const scalar = (name: string) => schema.getType(name) as GraphQLScalarType;
const amount = scalar("Amount");
const dateTime = scalar("DateTime");

describe("Amount", () => {
  it("prints base units as the REST decimal string", () => {
    expect(amount.serialize(25_000_000n)).toBe("25.00");
    expect(amount.serialize(1n)).toBe("0.000001");
    expect(amount.serialize({ toFixed: () => "123456789" })).toBe("123.456789");
  });

  it("passes the domain's own text through, signed ledger amounts included, and refuses other text or numbers", () => {
    expect(amount.serialize("25.00")).toBe("25.00");
    expect(amount.serialize("-24.75")).toBe("-24.75");
    for (const bad of ["25", "25.000", "abc", 25, 0.1]) expect(() => amount.serialize(bad)).toThrow(/Amount fields resolve to base units/);
  });

  it("parses a decimal string into base units, and names the scalar for anything else", () => {
    expect(amount.parseValue("25")).toBe(25_000_000n);
    expect(amount.parseLiteral({ kind: Kind.STRING, value: "0.000001" })).toBe(1n);
    for (const bad of ["-1.00", "1.0000001", "", 25]) expect(() => amount.parseValue(bad)).toThrow(/^Amount must be a USDC decimal string/);
    expect(() => amount.parseLiteral({ kind: Kind.INT, value: "25" })).toThrow(/^Amount must be/);
  });
});

describe("DateTime", () => {
  const instant = new Date("2026-05-01T12:00:00.000Z");

  it("prints a Date as ISO 8601 UTC with milliseconds, and takes that text through", () => {
    expect(dateTime.serialize(instant)).toBe("2026-05-01T12:00:00.000Z");
    expect(dateTime.serialize("2026-05-01T12:00:00.000Z")).toBe("2026-05-01T12:00:00.000Z");
    for (const bad of [new Date(Number.NaN), "2026-05-01", "2026-05-01T14:00:00+02:00", 1_777_636_800_000]) {
      expect(() => dateTime.serialize(bad)).toThrow(/DateTime fields resolve to a valid Date/);
    }
  });

  it("parses an ISO 8601 instant with an offset, and refuses dates without one", () => {
    expect(dateTime.parseValue("2026-05-01T14:00:00+02:00")).toEqual(instant);
    expect(dateTime.parseLiteral({ kind: Kind.STRING, value: "2026-05-01T12:00Z" })).toEqual(instant);
    for (const bad of ["2026-05-01", "May 1", "2026-02-30T00:00:00Z", 0])
      expect(() => dateTime.parseValue(bad)).toThrow(/^DateTime must be an ISO 8601 instant/);
  });
});
