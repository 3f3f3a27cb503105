// Turns zod's findings into the API's 400 errors: one code, the offending parameter, a plain message.
import { getAddress } from "ethers";
import { z } from "zod";
import { AppError } from "./errors.js";

/** Validates `input` against `schema`, throwing the first problem as a 400 AppError. */
export function parseInput<S extends z.ZodType>(schema: S, input: unknown, prefix = ""): z.output<S> {
  // `plainWords` words what a schema leaves to zod; a schema's own message still wins over it.
  const result = schema.safeParse(input, { reportInput: true, error: plainWords });
  if (result.success) return result.data;
  throw toAppError(result.error.issues[0] as z.core.$ZodIssue, prefix);
}

// One coercion rule (.docs/api.md "Types"): a JSON body is taken as typed, so an integer field takes a
// JSON integer and an amount a decimal string, each refusing the other type with a message saying
// which to send; a query parameter is text, so its integers are read from digits.

/** An integer field of a JSON body in [min, max]: a JSON integer only; a numeral string ("30") is refused, saying so. */
export function integerField(min: number, max: number) {
  const message = `must be an integer between ${min} and ${max}`;
  return z
    .number({ error: integerTypeError(message) })
    .int(message)
    .min(min, message)
    .max(max, message);
}

/** The type error of a JSON integer field: a numeral string is told to come as a number; anything else gets `message`. */
export function integerTypeError(message: string): (issue: { input?: unknown }) => string {
  return ({ input }) => (typeof input === "string" && /^-?\d+$/.test(input) ? `must be a JSON integer, not a string: send ${input}, not "${input}"` : message);
}

/** An integer query parameter in [min, max]: digits ("20"), as a query is text (a JSON number too, for the domain's other callers). */
export function integerParam(min: number, max: number) {
  // A numeral is read before the check rather than as a union's other branch, so that the schema's
  // input (what /v1/openapi.json shows) is the integer with its bounds, not "a number or digits".
  return z.preprocess((v) => (typeof v === "string" && /^-?\d+$/.test(v) ? Number(v) : v), integerField(min, max));
}

/**
 * An amount of USDC in a body: a decimal string such as `example`. A JSON number is refused with a
 * message saying to send it as a string: a float cannot carry an amount of money exactly.
 */
export function amountInput(example: string) {
  return z.string({
    error: (issue) =>
      typeof issue.input === "number"
        ? `must be a decimal string such as "${example}", not a JSON number: send "${issue.input}" (a float cannot carry money exactly)`
        : `must be a decimal string such as "${example}"`,
  });
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
export function overlapHoursField() {
  return integerField(0, 168).default(24);
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
    return new AppError("parameter_missing", param ? `Missing required param: ${param}` : "The request body is missing: send a JSON object", param);
  }
  const subject = param ? `Invalid ${param}` : "Invalid request body";
  return new AppError("parameter_invalid", `${subject}: ${describe(issue)}`, param);
}

function describe(issue: z.core.$ZodIssue): string {
  if (issue.code === "invalid_type" && issue.input === null) return "must not be null";
  // A record's key (a metadata key) is named in the path; what is wrong is the key, not the record.
  if (issue.code === "invalid_key") return keyProblem(issue.issues[0] as z.core.$ZodIssue | undefined, issue.input);
  // A schema's type message (`z.email({ error })`) also words its length checks: a length is said as one.
  if (issue.code === "too_big" && (issue.origin === "string" || issue.origin === "array")) return `must ${bound(issue.origin, "most", issue.maximum)}`;
  if (issue.code === "too_small" && (issue.origin === "string" || issue.origin === "array")) return `must ${bound(issue.origin, "least", issue.minimum)}`;
  return issue.message;
}

function keyProblem(inner: z.core.$ZodIssue | undefined, key: unknown): string {
  const length = typeof key === "string" ? key.length : 0;
  if (inner?.code === "too_big") return `this key is too long: ${length} characters, at most ${String(inner.maximum)}`;
  if (inner?.code === "too_small") return `this key is too short: ${length} characters, at least ${String(inner.minimum)}`;
  return `this key is not allowed: ${inner?.message ?? "invalid"}`;
}

/** The message of an issue whose schema gave none: what is expected, in the caller's terms. */
function plainWords(issue: z.core.$ZodRawIssue): string {
  switch (issue.code) {
    case "invalid_type":
      return `expected ${issue.expected}, received ${typeName(issue.input)}`;
    case "too_big":
      return `must ${bound(issue.origin, "most", issue.maximum, issue.inclusive)}`;
    case "too_small":
      return `must ${bound(issue.origin, "least", issue.minimum, issue.inclusive)}`;
    case "invalid_value":
      return `must be one of ${issue.values.map((v) => JSON.stringify(v)).join(", ")}`;
    case "invalid_format":
      return issue.format === "regex" ? "is not in the expected format" : `must be a valid ${issue.format}`;
    case "invalid_union":
      return `expected ${[...new Set(issue.errors.map((e) => (e[0]?.code === "invalid_type" ? e[0].expected : "another value")))].join(" or ")}, received ${typeName(issue.input)}`;
    case "not_multiple_of":
      return `must be a multiple of ${String(issue.divisor)}`;
    default:
      return "is invalid";
  }
}

/** "be at most 200 characters", "have at least 1 item", "be less than 10". */
function bound(origin: string, side: "most" | "least", limit: number | bigint, inclusive = true): string {
  if (origin === "string") return `be at ${side} ${limit} characters`;
  if (origin === "array" || origin === "set") return `have at ${side} ${limit} items`;
  if (!inclusive) return `be ${side === "most" ? "less" : "more"} than ${limit}`;
  return `be at ${side} ${limit}`;
}

function typeName(v: unknown): string {
  if (v === null) return "null";
  if (Array.isArray(v)) return "array";
  return typeof v;
}
