// The Pothos schema builder. Types, queries and mutations live one file per type in ./types.
import SchemaBuilder from "@pothos/core";
import DataloaderPlugin from "@pothos/plugin-dataloader";
import PrismaPlugin from "@pothos/plugin-prisma";
import RelayPlugin, { resolveNodes } from "@pothos/plugin-relay";
import type { GraphQLResolveInfo } from "graphql";
import { AppError } from "../domain/errors.js";
import type { Metadata } from "../domain/metadata.js";
import type { Units } from "../domain/money.js";
import type PrismaTypes from "../generated/pothos-types.js";
import { getDatamodel } from "../generated/pothos-types.js";
import { Prisma as P } from "../generated/prisma/client.js";
import type { GraphQLContext } from "./context.js";
import type { Charge } from "../domain/charges/read.js";
import { typenameOfId } from "./ids.js";

/** The most ids one `nodes` query may ask for: each is a database read (a connection page holds as many). */
export const MAX_NODE_IDS = 100;

/**
 * The Prisma types, a charge shaped as the domain reads it (its amount int8 or numeric: the column's
 * type changes in the next release), so resolvers return the domain's charges as they are.
 */
type Models = Omit<PrismaTypes, "Charge"> & { Charge: Omit<PrismaTypes["Charge"], "Shape"> & { Shape: Charge } };

export const builder = new SchemaBuilder<{
  PrismaTypes: Models;
  Context: GraphQLContext;
  DefaultFieldNullability: false;
  Scalars: {
    ID: { Input: string; Output: string };
    Metadata: { Input: Record<string, unknown>; Output: Metadata };
    JSON: { Input: unknown; Output: unknown };
    // Money and instants go out as the REST API writes them: resolvers return base units and Dates,
    // or a REST resource's own text (types/Amount.ts, types/DateTime.ts check it).
    Amount: { Input: bigint; Output: Units | string };
    DateTime: { Input: Date; Output: Date | string };
  };
}>({
  plugins: [PrismaPlugin, RelayPlugin, DataloaderPlugin],
  defaultFieldNullability: false,
  prisma: { client: (ctx) => ctx.prisma, dmmf: getDatamodel(), exposeDescriptions: false },
  relay: {
    clientMutationId: "omit",
    cursorType: "String",
    // Our ids already name their type (cus_, chrg_…), so they serve as global ids unchanged.
    encodeGlobalID: (_typename, id) => String(id),
    // An id with no node type's shape decodes to the empty type name, which names no node.
    decodeGlobalID: (globalID) => ({ typename: typenameOfId(globalID) ?? "", id: globalID }),
    nodeTypeOptions: { description: "An object with an id of its own (cus_…, chrg_…): any of them can be read again with node(id:)." },
    idFieldOptions: { description: "The object's id, prefixed with its type (cus_, chrg_, inv_…); the same id as in REST." },
    nodeQueryOptions: {
      description: "The object an id names, whatever its type; null when the key's merchant and mode have no such object.",
      args: { id: { description: "Any object's id (cus_…, chrg_…, inv_…)." } },
      resolve: (_root, { id }, ctx, info) => loadNodes(ctx, info, [id])[0],
    },
    nodesQueryOptions: {
      description: `The objects ids name, in the same order, each null when the key's merchant and mode have no such object (at most ${MAX_NODE_IDS} ids).`,
      args: { ids: { description: "Any objects' ids, of any types." } },
      resolve: (_root, { ids }, ctx, info) => {
        if (ids.length > MAX_NODE_IDS) throw new AppError("parameter_invalid", `Ask for at most ${MAX_NODE_IDS} ids at once.`, "ids");
        return loadNodes(ctx, info, ids);
      },
    },
    pageInfoTypeOptions: { description: "Where a page sits in its list: cursors to page on from, and whether more lies either way." },
    startCursorFieldOptions: { description: "The first edge's cursor: pass it as `before` for the page before this one; null on an empty page." },
    endCursorFieldOptions: { description: "The last edge's cursor: pass it as `after` for the page after this one; null on an empty page." },
    hasNextPageFieldOptions: { description: "Whether records lie after this page (older ones: lists are newest first)." },
    hasPreviousPageFieldOptions: { description: "Whether records lie before this page (newer ones)." },
    defaultConnectionTypeOptions: { description: "One page of a list (a Relay connection): its records as edges, and where the page sits." },
    defaultEdgeTypeOptions: { description: "A record of the page, with its cursor." },
    edgesFieldOptions: { description: "The page's records, in list order." },
    pageInfoFieldOptions: { description: "Cursors and whether more records lie either way." },
    cursorFieldOptions: { description: "The record's cursor (its id): page on from it with `after` or `before`." },
    nodeFieldOptions: { description: "The record." },
    firstArgOptions: { description: "Page forward: at most this many records (1–100, default 10) after `after`, or from the start." },
    afterArgOptions: { description: "A cursor (an edge's cursor, or pageInfo.endCursor): the page starts after that record." },
    lastArgOptions: { description: "Page backward: at most this many records (1–100) before `before`, or, without it, the last ones of the list." },
    beforeArgOptions: { description: "A cursor (an edge's cursor, or pageInfo.startCursor): the page ends before that record." },
  },
});

/**
 * Loads the objects `ids` name, each null when the caller's merchant and mode have no such object.
 * Null, not an error, for a malformed id, an unknown one, and another merchant's or the other mode's
 * (the GraphQL convention for node lookups, as in GitHub's API): the answer is the same for all of
 * them, so it tells nothing about objects the key may not see, and one bad id in `nodes` leaves the
 * others standing. (.docs/api.md "Errors": 400 parameter_invalid for an over-long id is about REST path ids.)
 */
function loadNodes(ctx: GraphQLContext, info: GraphQLResolveInfo, ids: { typename: string; id: string }[]): Promise<unknown>[] {
  ctx.scope(); // Without a key every lookup is api_key_missing, whatever the ids.
  return ids.map(async (id) => {
    if (!id.typename) return null;
    try {
      const [node] = await resolveNodes(builder, ctx, info, [id]);
      return node;
    } catch (e) {
      // The node types load with findUniqueOrThrow scoped to the caller's merchant and mode.
      if (e instanceof P.PrismaClientKnownRequestError && e.code === "P2025") return null;
      throw e;
    }
  });
}

builder.queryType({ description: "Reads: the key's merchant and mode (or a dashboard session's), and the public hosted-page views." });
builder.mutationType({
  description: "Changes to the key's merchant and mode (or a dashboard session's), and the public payment steps; one that fails changes nothing.",
});
builder.subscriptionType({ description: "Live updates, over WebSocket (graphql-transport-ws) or server-sent events." });
