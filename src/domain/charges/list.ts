// Lists of charges: the filters (as a Prisma where-clause, or as SQL for a search, whose lookups go
// through expression indexes), keyset pages, REST's numbered pages, nested pages and counts.
import type { Prisma } from "../../db/client.js";
import { Prisma as P } from "../../generated/prisma/client.js";
import type { Charge } from "./read.js";
import { invalidParam } from "../errors.js";
import {
  countsByParent,
  keysetPage,
  keysetSql,
  type Page,
  type PageEnd,
  pagesByParent,
  type PageRequest,
  type Position,
  type RelatedRows,
  type Relation,
} from "../paging.js";
import { inScope, type Scope } from "../scope.js";
import type { ChargeFilters, ChargeListQuery, ChargePageQuery } from "./requests.js";
import { searchCondition, searchFilter } from "./search.js";

/**
 * The where-clause of a charge list: this merchant and mode, optionally one status, customer, search
 * or creation range. A search here scans what the rest selects: the lists read it through its indexes (`filterSql`).
 */
export function chargeFilter(scope: Scope, f: ChargeFilters): P.ChargeWhereInput {
  return {
    ...inScope(scope),
    kind: "charge",
    ...(f.status && { status: f.status }),
    ...(f.customerId && { customerId: f.customerId }),
    ...(f.needsReview && { reviewReason: f.needsReview === "true" ? { not: null } : null }),
    ...(f.search && searchFilter(f.search)),
    ...((f.createdGte || f.createdLt) && { createdAt: { ...(f.createdGte && { gte: f.createdGte }), ...(f.createdLt && { lt: f.createdLt }) } }),
  };
}

/** The filters in SQL over `charges`, for a list with a search: its lookups go through expression indexes, which Prisma cannot write. */
function filterSql(scope: Scope, f: ChargeFilters & { search: string }): P.Sql {
  return P.join(
    [
      P.sql`merchant_id = ${scope.merchantId} AND livemode = ${scope.livemode} AND kind = 'charge'`,
      searchCondition(scope, f.search),
      ...(f.status ? [P.sql`status = ${f.status}::"ChargeStatus"`] : []),
      ...(f.customerId ? [P.sql`customer_id = ${f.customerId}`] : []),
      ...(f.needsReview ? [f.needsReview === "true" ? P.sql`review_reason IS NOT NULL` : P.sql`review_reason IS NULL`] : []),
      ...(f.createdGte ? [P.sql`created_at >= ${f.createdGte}`] : []),
      ...(f.createdLt ? [P.sql`created_at < ${f.createdLt}`] : []),
    ],
    " AND ",
  );
}

/** A search's filters, or null without a search. */
function searched(f: ChargeFilters): (ChargeFilters & { search: string }) | null {
  return f.search ? { ...f, search: f.search } : null;
}

/** The charges with `ids`, in that order (with the relations `include` asks for). */
async function chargesInOrder(prisma: Prisma, ids: { id: string }[], include?: P.ChargeInclude): Promise<Charge[]> {
  if (ids.length === 0) return [];
  const rows = await prisma.charge.findMany({ include, where: { id: { in: ids.map((r) => r.id) } } });
  const byId = new Map(rows.map((c) => [c.id, c]));
  return ids.flatMap((r) => byId.get(r.id) ?? []);
}

/** Newest first, ties broken by id so pages never overlap or skip. */
export const CHARGE_ORDER: P.ChargeOrderByWithRelationInput[] = [{ createdAt: "desc" }, { id: "desc" }];

/** A numbered page of charges: its place and the total count besides the keyset page's fields. */
export interface NumberedPage extends Page<Charge> {
  page: number;
  limit: number;
  total: number;
}

/**
 * One page of charges for REST: by cursor when `startingAfter` or `endingBefore` is given (as every
 * other list), else by number with the total count (`page`, default 1, as the contract keeps it).
 */
export async function listCharges(prisma: Prisma, scope: Scope, query: ChargeListQuery): Promise<NumberedPage | Page<Charge>> {
  const { page, ...params } = query;
  const cursor = params.startingAfter !== undefined ? "startingAfter" : params.endingBefore !== undefined ? "endingBefore" : null;
  if (cursor !== null && page !== undefined) throw invalidParam(cursor, `Page by number (page) or by cursor (${cursor}), not both`);
  if (cursor !== null) return pageCharges(prisma, scope, params);
  // No cursor was given, so the rest are the filters: the page is the keyset order from the newest, offset.
  const { limit, startingAfter: _after, endingBefore: _before, ...f } = params;
  const number = page ?? 1;
  const [data, total] = await Promise.all([
    readPage(prisma, scope, f, { limit, offset: (number - 1) * limit }).then((p) => p.data),
    countCharges(prisma, scope, f),
  ]);
  return { data, page: number, limit, total, hasMore: (number - 1) * limit + data.length < total };
}

/**
 * One keyset page of charges, newest first (GraphQL's connections, and REST's list given a cursor).
 * `include` loads relations in the same read (what a GraphQL selection asks for).
 */
export async function pageCharges(
  prisma: Prisma,
  scope: Scope,
  query: ChargePageQuery,
  include?: P.ChargeInclude,
  end: PageEnd = "newest",
): Promise<Page<Charge>> {
  const { limit, startingAfter, endingBefore, ...f } = query;
  return readPage(prisma, scope, f, { limit, startingAfter, endingBefore }, include, end);
}

/** The page `request` asks for among the charges matching `f`; a search reads its ids through the expression indexes first. */
function readPage(
  prisma: Prisma,
  scope: Scope,
  f: ChargeFilters,
  request: PageRequest,
  include?: P.ChargeInclude,
  end: PageEnd = "newest",
): Promise<Page<Charge>> {
  const search = searched(f);
  const where = chargeFilter(scope, f);
  return keysetPage(
    "charge",
    request,
    (id) => locateCharge(prisma, scope, id),
    search
      ? async (q) => {
          const keyset = keysetSql(q);
          const ids = await prisma.$queryRaw<{ id: string }[]>`
            SELECT id FROM charges WHERE ${filterSql(scope, search)} AND ${keyset.where} ${keyset.orderLimit}`;
          return chargesInOrder(prisma, ids, include);
        }
      : (q) => prisma.charge.findMany({ include, where: { AND: [where, q.where] }, orderBy: q.orderBy, take: q.take, skip: q.skip }),
    end,
  );
}

/** Where a cursor's charge sits in the list, if the scope has it. */
function locateCharge(prisma: Prisma, scope: Scope, id: string): Promise<Position | null> {
  return prisma.charge.findFirst({ where: { id, ...inScope(scope) }, select: { id: true, createdAt: true } });
}

/** The charges of customers or payment links (by `parent`), a page of each read for all at once (GraphQL's nested connections). */
export function relatedCharges(prisma: Prisma, scope: Scope, parent: Relation["parent"], include?: P.ChargeInclude): RelatedRows<Charge> {
  const relation: Relation = { table: "charges", parent };
  return {
    kind: "charge",
    locate: (id) => locateCharge(prisma, scope, id),
    pages: (ids, q) => pagesByParent(prisma, scope, relation, ids, q, (chargeIds) => prisma.charge.findMany({ include, where: { id: { in: chargeIds } } })),
    counts: (ids) => countsByParent(prisma, scope, relation, ids),
  };
}

/** How many charges match the list filters (GraphQL's `totalCount`). */
export async function countCharges(prisma: Prisma, scope: Scope, f: ChargeFilters): Promise<number> {
  const search = searched(f);
  if (!search) return prisma.charge.count({ where: chargeFilter(scope, f) });
  const [row] = await prisma.$queryRaw<{ count: number }[]>`SELECT count(*)::int AS count FROM charges WHERE ${filterSql(scope, search)}`;
  return row!.count;
}
