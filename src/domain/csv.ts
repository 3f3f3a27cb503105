// CSV exports for accountants (the ledger's, the charges'): one writer, so that every export has the
// same dialect (RFC 4180, CRLF, a header row), the same guard against spreadsheet formulas, and reads
// its rows a batch at a time, newest first by (createdAt, id), so that an export of any size takes
// little memory and no row is skipped or repeated however many share an instant.

/** A record as an export writes it: its columns' values. */
export type CsvRecord = Record<string, string | number | boolean | null>;

/** Where the last batch ended: the next one reads the rows older than it. */
export interface CsvCursor {
  createdAt: Date;
  id: string;
}

/** Rows per read of an export. */
const CSV_BATCH = 1_000;

/**
 * Every row `readBatch` gives, as CSV lines: the header of `columns`, then one line per row.
 * `readBatch(after, take)` returns up to `take` rows older than `after` (all rows without it),
 * newest first; `shape` makes each row the record its line shows.
 */
export async function* csvLines<R extends CsvCursor>(
  columns: readonly string[],
  readBatch: (after: CsvCursor | null, take: number) => Promise<R[]>,
  shape: (row: R) => CsvRecord,
): AsyncGenerator<string> {
  yield `${columns.join(",")}\r\n`;
  let last: CsvCursor | null = null;
  for (;;) {
    const rows = await readBatch(last, CSV_BATCH);
    if (rows.length === 0) return;
    yield rows.map((r) => `${csvLine(columns, shape(r))}\r\n`).join("");
    last = rows[rows.length - 1]!;
    if (rows.length < CSV_BATCH) return;
  }
}

/** The rows older than `after` in the (createdAt, id) order: the where-clause of a batch. */
export function olderThan(after: CsvCursor): { OR: ({ createdAt: { lt: Date } } | { createdAt: Date; id: { lt: string } })[] } {
  return { OR: [{ createdAt: { lt: after.createdAt } }, { createdAt: after.createdAt, id: { lt: after.id } }] };
}

/** One CSV line of a record. */
function csvLine(columns: readonly string[], record: CsvRecord): string {
  return columns.map((c) => csvField(record[c] ?? null)).join(",");
}

/**
 * One CSV field (RFC 4180: a field with a comma, quote or line break is quoted). The export is meant
 * for spreadsheets, which run a cell that starts with = + - @ (or a tab or carriage return) as a
 * formula: such a field is written as text, with a leading apostrophe, so that no value that ever
 * reaches a column can become one (OWASP "CSV injection"). Plain numbers, the negative amounts
 * included, stay numbers.
 */
export function csvField(value: string | number | boolean | null): string {
  let text = value === null ? "" : String(value);
  if (/^[=+\-@\t\r]/.test(text) && !/^-?\d+(\.\d+)?$/.test(text)) text = `'${text}`;
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}
