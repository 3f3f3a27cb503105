// Roles at the GraphQL door (.docs/dashboard.md "Roles"): every Mutation field is wrapped, once, when
// the schema is built, so no resolver can forget its rule. A dashboard session's role must have the
// capability the written table (domain/permissions.ts MUTATION_CAPABILITIES) names; an API key is the
// merchant's own and is not checked; the hosted page's public steps need no credential. A mutation the
// table does not name, or a name in the table with no mutation, stops the schema from building.
import { defaultFieldResolver, type GraphQLSchema } from "graphql";
import { authorize, MUTATION_CAPABILITIES } from "../domain/permissions.js";
import type { GraphQLContext } from "./context.js";

/** Wraps each Mutation field of `schema` with its role check; throws when the table and the mutations differ. */
export function guardMutations(schema: GraphQLSchema): GraphQLSchema {
  const fields = schema.getMutationType()?.getFields() ?? {};
  const unruled = Object.keys(fields).filter((name) => !(name in MUTATION_CAPABILITIES));
  const unknown = Object.keys(MUTATION_CAPABILITIES).filter((name) => !(name in fields));
  if (unruled.length) throw new Error(`Mutations without a rule in MUTATION_CAPABILITIES (domain/permissions.ts): ${unruled.join(", ")}.`);
  if (unknown.length) throw new Error(`MUTATION_CAPABILITIES names mutations the schema does not have: ${unknown.join(", ")}.`);
  for (const [name, field] of Object.entries(fields)) {
    const capability = MUTATION_CAPABILITIES[name]!;
    if (capability === "public") continue;
    const resolve = field.resolve ?? defaultFieldResolver;
    field.resolve = (root, args, ctx: GraphQLContext, info) => {
      const principal = ctx.principal;
      // A role this release does not know was already read as viewer (domain/sessions.ts).
      if (principal?.userId !== undefined) authorize(principal.role ?? "viewer", capability);
      return resolve(root, args, ctx, info);
    };
  }
  return schema;
}
