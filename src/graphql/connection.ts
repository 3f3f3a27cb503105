// Relay connections built from the domain's keyset pages (domain/paging.ts), so GraphQL lists and
// REST lists are the same reads: a cursor is the record's id, `after` is `startingAfter` and
// `before` is `endingBefore`. `totalCount` is counted only when asked for. A relation's connection
// nested in a list (each customer's charges) is read once for every parent of the list.
import { queryFromInfo } from "@pothos/plugin-prisma";
import DataLoader from "dataloader";
import type { GraphQLResolveInfo } from "graphql";
import { invalidParam } from "../domain/errors.js";
import { keysetPages, type Page, type PageEnd, type PageRequest, PAGE_SIZE_DEFAULT, PAGE_SIZE_MAX, type Position, type RelatedRows } from "../domain/paging.js";
import { builder } from "./builder.js";
import type { GraphQLContext } from "./context.js";

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

/**
 * The page request Relay arguments ask for: forward with first/after, backward with last/before, the
 * list's end with last alone. `least` is the smallest size taken (0 on a relation: its totalCount alone).
 */
export function pageRequest(args: ConnectionArgs, least = 1): PageRequest {
  for (const name of ["first", "last"] as const) {
    const size = args[name];
    if (size != null && (size < least || size > PAGE_SIZE_MAX)) throw invalidParam(name, `${name} must be between ${least} and ${PAGE_SIZE_MAX}`);
  }
  // Relay's "first, then last of those" is no keyset page: one size, one direction.
  if (args.first != null && args.last != null) throw invalidParam("last", "Pass first (with after) or last (with before), not both");
  if (args.before != null) return { limit: args.last ?? args.first ?? PAGE_SIZE_DEFAULT, endingBefore: args.before };
  return { limit: args.last ?? args.first ?? PAGE_SIZE_DEFAULT, startingAfter: args.after ?? undefined };
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

// Per request (its context), one loader per field and arguments: the parents a list holds are
// collected while GraphQL resolves it, and read together. Nothing is cached: a subscription keeps its
// context from one event to the next, and each event must read the rows as they are then.
const loaders = new WeakMap<object, Map<string, DataLoader<string, unknown>>>();

function loaderOf<V>(ctx: object, key: string, batch: (parentIds: readonly string[]) => Promise<V[]>): DataLoader<string, V> {
  const mine = loaders.get(ctx) ?? new Map<string, DataLoader<string, unknown>>();
  loaders.set(ctx, mine);
  let loader = mine.get(key) as DataLoader<string, V> | undefined;
  if (!loader) {
    loader = new DataLoader(batch, { cache: false });
    mine.set(key, loader as DataLoader<string, unknown>);
  }
  return loader;
}

/** The relations a connection's selected nodes (of Prisma type `typeName`) ask for, to read in the same query as the nodes. */
export function nodeInclude<Include>(ctx: GraphQLContext, info: GraphQLResolveInfo, typeName: string): Include | undefined {
  return (queryFromInfo({ context: ctx, info, typeName, path: ["edges", "node"] }) as { include?: Include }).include;
}

/**
 * `parentId`'s page of a relation as a connection, read with the same page of every other parent
 * resolved alongside it (its nodes' relations included, of Prisma type `typeName`).
 */
export async function relatedConnection<T extends Position & { id: string }, Include>(
  ctx: GraphQLContext,
  info: GraphQLResolveInfo,
  parentId: string,
  args: ConnectionArgs,
  typeName: string,
  rowsOf: (include: Include | undefined) => RelatedRows<T>,
): Promise<Connection<T>> {
  // A relation's connection has always taken `first: 0`, the dashboard's way to ask for its count.
  const request = pageRequest(args, 0);
  const include = nodeInclude<Include>(ctx, info, typeName);
  const rows = rowsOf(include);
  const field = `${info.parentType.name}.${info.fieldName}`;
  const pages = loaderOf(ctx, `${field} ${JSON.stringify([args, include])}`, async (ids) => {
    const pageOf = await keysetPages(rows.kind, request, rows.locate, (query) => rows.pages(ids, query), pageEnd(args));
    return ids.map(pageOf);
  });
  const counts = loaderOf(ctx, `${field} count`, async (ids) => {
    const byParent = await rows.counts(ids);
    return ids.map((id) => byParent.get(id) ?? 0);
  });
  return connectionOf(await pages.load(parentId), args, () => counts.load(parentId));
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
