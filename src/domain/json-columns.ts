// Reading a JSON column back: what the database returns is `unknown` to the type system, and a cast
// would let a row written by an older release (or by hand) flow on as the wrong shape. Each column is
// parsed with its schema instead; a row that does not fit is our fault, never the caller's, so it is
// an internal error naming the column (the API shows internal_error and the log says which).
import { z } from "zod";

/** Stored JSON that does not fit its column's schema. */
export class StoredJsonError extends Error {
  override name = "StoredJsonError";
  constructor(
    readonly column: string,
    readonly issues: string,
  ) {
    super(`Stored ${column} is malformed: ${issues}`);
  }
}

/**
 * `value`, read from the JSON column `what` (e.g. "invoices.line_items"), parsed with `schema`; StoredJsonError when it does not fit.
 * Pass a schema built once, at module level: building one (even `z.array(x)`) costs microseconds, which a hot read pays per row.
 */
export function jsonColumn<S extends z.ZodType>(schema: S, value: unknown, what: string): z.output<S> {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  throw new StoredJsonError(what, z.prettifyError(parsed.error));
}
