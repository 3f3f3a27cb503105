// The Pothos schema builder. Types, queries and mutations live one file per type in ./types.
import SchemaBuilder from "@pothos/core";
import DataloaderPlugin from "@pothos/plugin-dataloader";
import PrismaPlugin from "@pothos/plugin-prisma";
import RelayPlugin from "@pothos/plugin-relay";
import type { Metadata } from "../domain/metadata.js";
import type PrismaTypes from "../generated/pothos-types.js";
import { getDatamodel } from "../generated/pothos-types.js";
import type { GraphQLContext } from "./context.js";
import { typenameOfId } from "./ids.js";

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
    decodeGlobalID: (globalID) => ({ typename: typenameOfId(globalID), id: globalID }),
  },
});

builder.queryType({});
builder.mutationType({});
builder.subscriptionType({});
