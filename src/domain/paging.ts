// One way to list: pages of records newest first, by the keyset (createdAt, id). A cursor is a
// record's id; the page after it holds older records, the page before it newer ones, and as the
// order is total (ties broken by id) pages never overlap or skip, whatever is written meanwhile.
// REST's `startingAfter`/`endingBefore` and GraphQL's `after`/`before` are both this. (`GET
// /v1/charges` also keeps the number paging the contract gives it, when no cursor is passed.)
import { z } from "zod";
import { Prisma as P } from "../generated/prisma/client.js";
import { AppError, unknownReference } from "./errors.js";
import { integerParam } from "./validation.js";

/** A page of records, newest first; `hasMore` says whether more lie beyond it in the paging direction. */
export interface Page<T> {
  data: T[];
  hasMore: boolean;
}

/** Where a record sits in the newest-first order. */
export interface Position {
  createdAt: Date;
  id: string;
}

/** The request parameters of every keyset list (.docs/api.md "REST conventions"). */
export const pageParams = {
  limit: integerParam(1, 100).default(10),
  startingAfter: z.string().min(1).max(100).optional(),
  endingBefore: z.string().min(1).max(100).optional(),
};

/** A page request after validation. */
export interface PageRequest {
  limit: number;
  startingAfter?: string | undefined;
  endingBefore?: string | undefined;
}

type Direction = "asc" | "desc";
type Beyond<V> = { lt: V } | { gt: V };
/** A where-clause on (createdAt, id), which every listed model has. */
export type KeysetWhere = { OR?: ({ createdAt: Beyond<Date> } | { createdAt: Date; id: Beyond<string> })[] };

/** The records older (or newer) than `at` in the keyset order. */
export function beyond(at: Position, side: "older" | "newer"): KeysetWhere {
  const past = <V>(v: V): Beyond<V> => (side === "newer" ? { gt: v } : { lt: v });
  return { OR: [{ createdAt: past(at.createdAt) }, { createdAt: at.createdAt, id: past(at.id) }] };
}

/** What a model's reader is given: the rows beyond the cursor (if any), in which order, how many. */
export interface PageQuery {
  where: KeysetWhere;
  orderBy: [{ createdAt: Direction }, { id: Direction }];
  take: number;
  /** The cursor's record and the side of it the page lies on (null: from an end), for readers in SQL. */
  cursor: { at: Position; side: "older" | "newer" } | null;
}

/**
 * `query` in SQL over a table's `created_at` and `id` columns, for lists filtered by what Prisma cannot
 * write (an expression index): the keyset condition (TRUE without a cursor) and the ORDER BY … LIMIT.
 */
export function keysetSql(query: PageQuery): { where: P.Sql; orderLimit: P.Sql } {
  const dir = P.raw(query.orderBy[0].createdAt === "asc" ? "ASC" : "DESC");
  const c = query.cursor;
  // A row comparison: (a, b) < (x, y) is a < x OR (a = x AND b < y), the order a btree index keeps.
  const where = c === null ? P.sql`TRUE` : P.sql`(created_at, id) ${P.raw(c.side === "newer" ? ">" : "<")} (${c.at.createdAt}, ${c.at.id})`;
  return { where, orderLimit: P.sql`ORDER BY created_at ${dir}, id ${dir} LIMIT ${query.take}` };
}

/**
 * Which end of the rows a page is read from when no endingBefore says: the newest (REST, GraphQL's
 * `first`) or the oldest (GraphQL's `last` without `before`, which no REST parameter asks for).
 */
export type PageEnd = "newest" | "oldest";

/**
 * Reads one page. `locate` finds the cursor's record among those the caller may list (null: a 400
 * naming the cursor parameter); `read` runs the query on the model, adding its own filters. The page
 * holds the rows past the cursor (newer than endingBefore, older than startingAfter, or all rows)
 * nearest the cursor, or from `end` without endingBefore.
 */
export async function keysetPage<T extends Position>(
  kind: string,
  request: PageRequest,
  locate: (id: string) => Promise<Position | null>,
  read: (query: PageQuery) => Promise<T[]>,
  end: PageEnd = "newest",
): Promise<Page<T>> {
  if (request.startingAfter && request.endingBefore) {
    throw new AppError("parameter_invalid", "Pass at most one of startingAfter and endingBefore", "endingBefore");
  }
  const before = request.endingBefore !== undefined;
  const cursorId = request.endingBefore ?? request.startingAfter;
  let where: KeysetWhere = {};
  let cursor: PageQuery["cursor"] = null;
  if (cursorId !== undefined) {
    const at = await locate(cursorId);
    if (!at) throw unknownReference(kind, cursorId, before ? "endingBefore" : "startingAfter");
    cursor = { at: { createdAt: at.createdAt, id: at.id }, side: before ? "newer" : "older" };
    where = beyond(at, cursor.side);
  }
  // Backwards, the rows wanted are the oldest of the window: read them oldest first.
  const backwards = before || end === "oldest";
  const dir: Direction = backwards ? "asc" : "desc";
  const rows = await read({ where, orderBy: [{ createdAt: dir }, { id: dir }], take: request.limit + 1, cursor });
  const page = rows.slice(0, request.limit);
  return { data: backwards ? page.reverse() : page, hasMore: rows.length > request.limit };
}
