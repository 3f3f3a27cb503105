// Relay connections built from the domain's keyset pages (domain/paging.ts), so GraphQL lists and
// REST lists are the same reads: a cursor is the record's id, `after` is `startingAfter` and
// `before` is `endingBefore`. `totalCount` is counted only when asked for.
import { invalidParam } from "../domain/errors.js";
import type { Page, PageEnd, PageRequest } from "../domain/paging.js";
import { builder } from "./builder.js";

const DEFAULT_SIZE = 10;
const MAX_SIZE = 100;

/** Relay's paging arguments. */
export interface ConnectionArgs {
  first?: number | null | undefined;
  after?: string | null | undefined;
  last?: number | null | undefined;
  before?: string | null | undefined;
}

/** The connection object a resolver returns; `totalCount` runs when the field is selected. */
export interface Connection<T> {
  edges: { cursor: string; node: T }[];
  pageInfo: { startCursor: string | null; endCursor: string | null; hasNextPage: boolean; hasPreviousPage: boolean };
  totalCount: () => Promise<number>;
}

/** The page request Relay arguments ask for: forward with first/after, backward with last/before, the list's end with last alone. */
export function pageRequest(args: ConnectionArgs): PageRequest {
  for (const name of ["first", "last"] as const) {
    const size = args[name];
    if (size != null && (size < 1 || size > MAX_SIZE)) throw invalidParam(name, `${name} must be between 1 and ${MAX_SIZE}`);
  }
  // Relay's "first, then last of those" is no keyset page: one size, one direction.
  if (args.first != null && args.last != null) throw invalidParam("last", "Pass first (with after) or last (with before), not both");
  if (args.before != null) return { limit: args.last ?? args.first ?? DEFAULT_SIZE, endingBefore: args.before };
  return { limit: args.last ?? args.first ?? DEFAULT_SIZE, startingAfter: args.after ?? undefined };
}

/** The end a page without `before` is read from: `last` alone reads the list's last records (its oldest). */
export function pageEnd(args: ConnectionArgs): PageEnd {
  return args.last != null && args.before == null ? "oldest" : "newest";
}

/** `page` (read for `args`) as a Relay connection. */
export function connectionOf<T extends { id: string }>(page: Page<T>, args: ConnectionArgs, totalCount: () => Promise<number>): Connection<T> {
  const before = args.before != null;
  const backwards = before || pageEnd(args) === "oldest";
  return {
    edges: page.data.map((node) => ({ cursor: node.id, node })),
    pageInfo: {
      startCursor: page.data[0]?.id ?? null,
      endCursor: page.data.at(-1)?.id ?? null,
      // Reading one way tells whether more lie that way; the other way, a cursor means there was a
      // page (and a page read from the list's end has nothing after it).
      hasNextPage: backwards ? before : page.hasMore,
      hasPreviousPage: backwards ? page.hasMore || args.after != null : args.after != null,
    },
    totalCount,
  };
}

type Types = typeof builder extends PothosSchemaTypes.SchemaBuilder<infer T> ? T : never;

/** The connection type's options: a `totalCount` field, counted only when selected. */
export function countedConnection(description: string) {
  return {
    fields: (t: PothosSchemaTypes.ObjectFieldBuilder<Types, object>) => ({
      totalCount: t.int({ description, resolve: (conn) => (conn as Connection<unknown>).totalCount() }),
    }),
  };
}

/** A relation connection's options (Pothos' relatedConnection with `totalCount: true`): its `totalCount` field, described. */
export function relatedCount(description: string) {
  return {
    fields: (t: PothosSchemaTypes.ObjectFieldBuilder<Types, object>) => ({
      // Pothos reads the count with the page, when the field is selected, and sets it on the connection.
      totalCount: t.int({ description, resolve: (conn) => (conn as { totalCount: number }).totalCount }),
    }),
  };
}
