// Turns zod's findings into the API's 400 errors: one code, the offending parameter, a plain message.
import { getAddress } from "ethers";
import { z } from "zod";
import { AppError } from "./errors.js";

/** Validates `input` against `schema`, throwing the first problem as a 400 AppError. */
export function parseInput<S extends z.ZodType>(schema: S, input: unknown, prefix = ""): z.output<S> {
  const result = schema.safeParse(input, { reportInput: true });
  if (result.success) return result.data;
  throw toAppError(result.error.issues[0] as z.core.$ZodIssue, prefix);
}

/** An integer in [min, max], given as a JSON number or as a query-string numeral ("20"). */
export function integerParam(min: number, max: number) {
  const message = `must be an integer between ${min} and ${max}`;
  // A numeral is read before the check rather than as a union's other branch, so that the schema's
  // input (what /v1/openapi.json shows) is the integer with its bounds, not "a number or digits".
  return z.preprocess(
    (v) => (typeof v === "string" && /^\d+$/.test(v) ? Number(v) : v),
    z.number({ error: message }).int(message).min(min, message).max(max, message),
  );
}

/** An instant as ISO 8601 with its offset ("2026-11-01T00:00:00Z"), read as a Date: the createdGte/createdLt of lists and exports. */
export function instantParam() {
  // A Date is taken back as its ISO form, so that filters parsed once can be parsed again (a list
  // hands its parsed filters on); as with integerParam, the schema's input stays the string alone.
  return z.preprocess(
    (v) => (v instanceof Date ? v.toISOString() : v),
    z.iso.datetime({ offset: true, error: "must be an ISO 8601 date-time, such as 2026-11-01T00:00:00Z" }).transform((s) => new Date(s)),
  );
}

/** A checksummed EVM address, not the zero address; all-lowercase input is checksummed, a wrong checksum is refused. */
export function evmAddress() {
  return z.string().transform((value, ctx) => {
    let address: string;
    try {
      address = getAddress(value);
    } catch {
      ctx.addIssue({ code: "custom", message: `${value} is not a valid checksummed EVM address (0x followed by 40 hex digits)` });
      return z.NEVER;
    }
    if (/^0x0{40}$/.test(address)) {
      ctx.addIssue({ code: "custom", message: `${value} is the zero address: nobody holds its key, so money sent there is lost` });
      return z.NEVER;
    }
    return address;
  });
}

/**
 * Hours an old secret keeps working next to the new one that replaces it (0–168, default 24), so
 * that the new one can be deployed first: rotated webhook secrets and rolled API keys.
 */
export function overlapHoursParam() {
  return integerParam(0, 168).default(24);
}

function toAppError(issue: z.core.$ZodIssue, prefix: string): AppError {
  // Named as the text guard names them (domain/text.ts): `lineItems[0].quantity`.
  const path = [prefix, ...issue.path.map(String)]
    .filter(Boolean)
    .join(".")
    .replace(/\.(\d+)(?=\.|$)/g, "[$1]");
  if (issue.code === "unrecognized_keys") {
    const param = [path, issue.keys[0]].filter(Boolean).join(".");
    return new AppError("parameter_unknown", `Received unknown parameter: ${param}`, param);
  }
  const param = path || null;
  if ((issue.code === "invalid_type" || issue.code === "invalid_value") && issue.input === undefined) {
    return new AppError("parameter_missing", `Missing required param: ${param}`, param);
  }
  const subject = param ? `Invalid ${param}` : "Invalid request body";
  return new AppError("parameter_invalid", `${subject}: ${describe(issue)}`, param);
}

function describe(issue: z.core.$ZodIssue): string {
  switch (issue.code) {
    case "invalid_type":
      if (issue.input === null) return "must not be null";
      // A schema's own wording (e.g. amounts: "must be a decimal string") beats zod's generic one.
      return issue.message.startsWith("Invalid input") ? `expected ${issue.expected}, received ${typeName(issue.input)}` : issue.message;
    case "too_big":
      return issue.origin === "string" ? `must be at most ${issue.maximum} characters` : issue.message;
    case "too_small":
      return issue.origin === "string" ? `must be at least ${issue.minimum} characters` : issue.message;
    default:
      return issue.message;
  }
}

function typeName(v: unknown): string {
  if (Array.isArray(v)) return "array";
  return typeof v;
}
