// One way to list: pages of records newest first, by the keyset (createdAt, id). A cursor is a
// record's id; the page after it holds older records, the page before it newer ones, and as the
// order is total (ties broken by id) pages never overlap or skip, whatever is written meanwhile.
// REST's `startingAfter`/`endingBefore` and GraphQL's `after`/`before` are both this. (`GET
// /v1/charges` also keeps the number paging the contract gives it, when no cursor is passed.)
import { z } from "zod";
import type { Prisma } from "../db/client.js";
import { Prisma as P } from "../generated/prisma/client.js";
import { AppError, unknownReference } from "./errors.js";
import type { Scope } from "./scope.js";
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

/** A page's size when none is asked for, in every REST list and GraphQL connection. */
export const PAGE_SIZE_DEFAULT = 10;
/** The largest page any list serves: each record is read and serialized in one response. */
export const PAGE_SIZE_MAX = 100;

/** The request parameters of every keyset list (.docs/api.md "REST conventions"). */
export const pageParams = {
  limit: integerParam(1, PAGE_SIZE_MAX).default(PAGE_SIZE_DEFAULT),
  startingAfter: z.string().min(1).max(100).optional(),
  endingBefore: z.string().min(1).max(100).optional(),
};

/** A page request after validation. */
export interface PageRequest {
  limit: number;
  startingAfter?: string | undefined;
  endingBefore?: string | undefined;
  /** Rows skipped from the list's end before the page (numbered pages only: `GET /v1/charges?page=`). */
  offset?: number | undefined;
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
  /** Rows to skip first (a numbered page); absent on cursor pages. */
  skip?: number;
  /** The cursor's record and the side of it the page lies on (null: from an end), for readers in SQL. */
  cursor: { at: Position; side: "older" | "newer" } | null;
}

/**
 * `query` in SQL over a table's `created_at` and `id` columns, for lists filtered by what Prisma cannot
 * write (an expression index): the keyset condition (TRUE without a cursor), the ORDER BY, and the
 * ORDER BY … LIMIT (… OFFSET, for a numbered page).
 */
export function keysetSql(query: PageQuery): { where: P.Sql; order: P.Sql; orderLimit: P.Sql } {
  const dir = P.raw(query.orderBy[0].createdAt === "asc" ? "ASC" : "DESC");
  const c = query.cursor;
  // A row comparison: (a, b) < (x, y) is a < x OR (a = x AND b < y), the order a btree index keeps.
  const where = c === null ? P.sql`TRUE` : P.sql`(created_at, id) ${P.raw(c.side === "newer" ? ">" : "<")} (${c.at.createdAt}, ${c.at.id})`;
  const order = P.sql`ORDER BY created_at ${dir}, id ${dir}`;
  const offset = query.skip ? P.sql` OFFSET ${query.skip}` : P.empty;
  return { where, order, orderLimit: P.sql`${order} LIMIT ${query.take}${offset}` };
}

/**
 * Where a relation's rows live: the table and the column naming their parent (a customer's charges
 * are `charges` by `customer_id`). Constants of the code, never input: they are spliced into SQL.
 */
export interface Relation {
  table: "charges" | "invoices" | "subscriptions";
  parent: "customer_id" | "payment_link_id" | "subscription_id";
}

/** How a relation's rows are read for many parents at once (GraphQL's connections nested in lists): by `pagesByParent` and `countsByParent`. */
export interface RelatedRows<T> {
  /** The record kind a cursor names, for the 400 on an unknown one. */
  kind: string;
  locate: (id: string) => Promise<Position | null>;
  pages: (parentIds: readonly string[], query: PageQuery) => Promise<Map<string, T[]>>;
  counts: (parentIds: readonly string[]) => Promise<Map<string, number>>;
}

/**
 * Each parent's rows of `relation` that `query` asks for (its `take` per parent), in one read for
 * all the parents: their ids ranked within each parent, then `load` reads those rows by id.
 */
export async function pagesByParent<T extends { id: string }>(
  prisma: Prisma,
  scope: Scope,
  relation: Relation,
  parentIds: readonly string[],
  query: PageQuery,
  load: (ids: string[]) => Promise<T[]>,
): Promise<Map<string, T[]>> {
  const { where, order } = keysetSql(query);
  const [table, parent] = [P.raw(relation.table), P.raw(relation.parent)];
  const ranked = await prisma.$queryRaw<{ id: string; parent: string }[]>`
    SELECT id, parent FROM (
      SELECT id, ${parent} AS parent, row_number() OVER (PARTITION BY ${parent} ${order}) AS n FROM ${table}
      WHERE ${parent} = ANY(${[...parentIds]}) AND merchant_id = ${scope.merchantId} AND livemode = ${scope.livemode} AND ${where}
    ) ranked WHERE n <= ${query.take} ORDER BY parent, n`;
  const byId = new Map((await load(ranked.map((r) => r.id))).map((row) => [row.id, row]));
  const pages = new Map<string, T[]>();
  for (const r of ranked) {
    const row = byId.get(r.id);
    if (!row) continue;
    const page = pages.get(r.parent) ?? [];
    page.push(row);
    pages.set(r.parent, page);
  }
  return pages;
}

/** How many rows of `relation` each parent has, in one read (parents without any are absent). */
export async function countsByParent(prisma: Prisma, scope: Scope, relation: Relation, parentIds: readonly string[]): Promise<Map<string, number>> {
  const [table, parent] = [P.raw(relation.table), P.raw(relation.parent)];
  const rows = await prisma.$queryRaw<{ parent: string; count: number }[]>`
    SELECT ${parent} AS parent, count(*)::int AS count FROM ${table}
    WHERE ${parent} = ANY(${[...parentIds]}) AND merchant_id = ${scope.merchantId} AND livemode = ${scope.livemode} GROUP BY ${parent}`;
  return new Map(rows.map((r) => [r.parent, r.count]));
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
  const query = await pageQuery(kind, request, locate, end);
  return pageOf(await read(query), request, query);
}

/**
 * `keysetPage` for many parents at once (a relation's page of each, as a GraphQL list nests them):
 * `read` answers every parent's rows of the one query, its `take` counted per parent.
 */
export async function keysetPages<T extends Position>(
  kind: string,
  request: PageRequest,
  locate: (id: string) => Promise<Position | null>,
  read: (query: PageQuery) => Promise<Map<string, T[]>>,
  end: PageEnd = "newest",
): Promise<(parentId: string) => Page<T>> {
  const query = await pageQuery(kind, request, locate, end);
  const rows = await read(query);
  return (parentId) => pageOf(rows.get(parentId) ?? [], request, query);
}

/** The query a page request asks for: one row more than the page, to tell whether more lie beyond. */
async function pageQuery(kind: string, request: PageRequest, locate: (id: string) => Promise<Position | null>, end: PageEnd): Promise<PageQuery> {
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
  const dir: Direction = before || end === "oldest" ? "asc" : "desc";
  const skip = request.offset ? { skip: request.offset } : {};
  return { where, orderBy: [{ createdAt: dir }, { id: dir }], take: request.limit + 1, ...skip, cursor };
}

/** The page of `rows` read for `query`: newest first whichever way they were read. */
function pageOf<T>(rows: T[], request: PageRequest, query: PageQuery): Page<T> {
  const page = rows.slice(0, request.limit);
  const backwards = query.orderBy[0].createdAt === "asc";
  return { data: backwards ? page.reverse() : page, hasMore: rows.length > request.limit };
}
