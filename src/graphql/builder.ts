// The Pothos schema builder. Types, queries and mutations live one file per type in ./types.
import SchemaBuilder from "@pothos/core";
import DataloaderPlugin from "@pothos/plugin-dataloader";
import PrismaPlugin from "@pothos/plugin-prisma";
import RelayPlugin, { resolveNodes } from "@pothos/plugin-relay";
import type { GraphQLResolveInfo } from "graphql";
import { AppError } from "../domain/errors.js";
import type { Metadata } from "../domain/metadata.js";
import type PrismaTypes from "../generated/pothos-types.js";
import { getDatamodel } from "../generated/pothos-types.js";
import { Prisma as P } from "../generated/prisma/client.js";
import type { GraphQLContext } from "./context.js";
import { typenameOfId } from "./ids.js";

/** The most ids one `nodes` query may ask for: each is a database read (a connection page holds as many). */
export const MAX_NODE_IDS = 100;

export const builder = new SchemaBuilder<{
  PrismaTypes: PrismaTypes;
  Context: GraphQLContext;
  DefaultFieldNullability: false;
  Scalars: {
    ID: { Input: string; Output: string };
    Metadata: { Input: Record<string, unknown>; Output: Metadata };
    JSON: { Input: unknown; Output: unknown };
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
    nodeQueryOptions: { resolve: (_root, { id }, ctx, info) => loadNodes(ctx, info, [id])[0] },
    nodesQueryOptions: {
      resolve: (_root, { ids }, ctx, info) => {
        if (ids.length > MAX_NODE_IDS) throw new AppError("parameter_invalid", `Ask for at most ${MAX_NODE_IDS} ids at once.`, "ids");
        return loadNodes(ctx, info, ids);
      },
    },
  },
});

/**
 * Loads the objects `ids` name, each null when the caller's merchant and mode have no such object.
 * Null, not an error, for a malformed id, an unknown one, and another merchant's or the other mode's
 * (the GraphQL convention for node lookups, as in GitHub's API): the answer is the same for all of
 * them, so it tells nothing about objects the key may not see, and one bad id in `nodes` leaves the
 * others standing. (API.md's 400 parameter_invalid for an over-long id is about REST path ids.)
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

builder.queryType({});
builder.mutationType({});
builder.subscriptionType({});
