// How our coded errors look over GraphQL. A module of its own because yoga.ts assembles the plugins
// that raise them (input-guard.ts, rate-limit.ts): they import this, not the server that mounts them.
import { GraphQLError } from "graphql";
import type { AppError } from "../domain/errors.js";
import { statusOf } from "../http/errors.js";

/** Renders an AppError as a GraphQL error whose extensions carry the REST code. */
export function graphqlError(e: AppError, source?: GraphQLError): GraphQLError {
  return new GraphQLError(e.message, {
    ...(source && { nodes: source.nodes, path: source.path, source: source.source, positions: source.positions }),
    extensions: { code: e.code, param: e.param, statusCode: statusOf(e) },
  });
}
