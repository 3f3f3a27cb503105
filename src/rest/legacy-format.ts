// `?format=csv` on GET /v1/charges and GET /v1/balance_transactions: how integrations written before
// the CSV exports had operations of their own (GET …/export.csv) asked for them. Still answered as
// it was, but no longer documented: a list operation's 200 is JSON alone, so that clients generated
// from the document type its answer as a list (.docs/api.md says which way is the way now).
import { z } from "zod";
import { invalidParam } from "../domain/errors.js";
import { parseInput } from "../domain/validation.js";

const FORMAT = z.strictObject({ format: z.enum(["json", "csv"], { error: "must be json or csv" }).optional() });
/** Parameters that would pick part of a list: an export has every matching row. */
const PAGING = ["page", "startingAfter", "endingBefore"] as const;

/** A list's query without `format`, or, for `format=csv`, the filters its export takes. */
export type ListFormat = { csv: false; query: Record<string, unknown> } | { csv: true; filters: Record<string, unknown> };

/**
 * Splits a list's query into its `format` (json by default) and the rest. For csv the rest is still
 * checked as the list's query (a bad `limit` is refused, as it was), a page or a cursor is refused,
 * and `limit` is dropped: the export has every row, as it always had.
 */
export function legacyFormat(query: unknown, list: z.ZodType): ListFormat {
  const { format, ...rest } = (query ?? {}) as Record<string, unknown>;
  if (parseInput(FORMAT, format === undefined ? {} : { format }).format !== "csv") return { csv: false, query: rest };
  parseInput(list, rest);
  const paging = PAGING.find((name) => rest[name] !== undefined);
  if (paging) throw invalidParam(paging, "a CSV export has every matching row: narrow it with createdGte and createdLt, not a page or a cursor");
  const { limit: _limit, ...filters } = rest;
  return { csv: true, filters };
}
