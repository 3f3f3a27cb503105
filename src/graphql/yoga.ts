// The GraphQL door: graphql-yoga over the Pothos schema, with the same auth, limits and error
// codes as REST. Only our coded errors are shown; anything else is masked as internal_error.
import { EnvelopArmorPlugin } from "@escape.tech/graphql-armor";
import { GraphQLError, getOperationAST } from "graphql";
import { createYoga, isAsyncIterable, type Plugin } from "graphql-yoga";
import type { Logger } from "pino";
import type { Prisma } from "../db/client.js";
import type { ChainSet } from "../chain/chains.js";
import type { ApiKeyAuthenticator } from "../domain/api-keys.js";
import type { ChargeSettings } from "../domain/charges.js";
import { AppError } from "../domain/errors.js";
import type { RateLimiter } from "../http/rate-limit.js";
import type { LiveCharges } from "../realtime/charges.js";
import type { LiveConnections } from "../realtime/connections.js";
import { type Caller, createContext, type GraphQLContext } from "./context.js";
import { schema } from "./schema.js";

export interface GraphQLDeps {
  prisma: Prisma;
  authenticator: ApiKeyAuthenticator;
  rateLimiter: RateLimiter;
  charges: ChargeSettings;
  chains: ChainSet;
  live: LiveCharges;
  connections: LiveConnections;
  logger: Logger;
  production: boolean;
}

/** Limits that keep one query from costing more than a page of work (a 100-charge page with customers and stats fits). */
export const QUERY_LIMITS = { maxDepth: 15, maxCost: 20_000, maxAliases: 15, maxTokens: 2000, maxDirectives: 10 };

/** Renders an AppError as a GraphQL error whose extensions carry the REST code. */
export function graphqlError(e: AppError, source?: GraphQLError): GraphQLError {
  return new GraphQLError(e.message, {
    ...(source && { nodes: source.nodes, path: source.path, source: source.source, positions: source.positions }),
    extensions: { code: e.code, param: e.param, statusCode: e.status },
  });
}

/** Counts each authenticated operation against the key's budget: mutations as creates, the rest (and a subscription's start) as reads. */
function rateLimitPlugin(limiter: RateLimiter): Plugin<GraphQLContext> {
  const consume = async (context: unknown, group: "create" | "read", stop: (result: { errors: GraphQLError[] }) => void) => {
    const principal = (context as GraphQLContext).principal;
    if (!principal) return;
    try {
      await limiter.consume(principal.keyId, group);
    } catch (e) {
      if (!(e instanceof AppError)) throw e;
      stop({ errors: [graphqlError(e)] });
    }
  };
  return {
    async onExecute({ args, setResultAndStopExecution }) {
      const operation = getOperationAST(args.document, args.operationName)?.operation;
      await consume(args.contextValue, operation === "mutation" ? "create" : "read", setResultAndStopExecution);
    },
    async onSubscribe({ args, setResultAndStopExecution }) {
      await consume(args.contextValue, "read", setResultAndStopExecution);
    },
  };
}

/**
 * A subscription over SSE is a connection of its own: it counts against the key's live
 * connections while it runs, and ends when the key is revoked. (A WebSocket registers once, when it opens.)
 */
function sseConnectionsPlugin(connections: LiveConnections): Plugin<GraphQLContext> {
  return {
    onSubscribe({ args, setResultAndStopExecution }) {
      const ctx = args.contextValue as GraphQLContext;
      if (ctx.transport !== "http" || !ctx.principal) return;
      const controller = new AbortController();
      let connection;
      try {
        connection = connections.open(ctx.principal.keyId, () => controller.abort());
      } catch (e) {
        if (!(e instanceof AppError)) throw e;
        setResultAndStopExecution({ errors: [graphqlError(e)] });
        return;
      }
      ctx.signal = controller.signal;
      return {
        // A subscription that failed to start (404, bad variables) returns an error, not a stream: no onEnd will come.
        onSubscribeResult: ({ result }) => (isAsyncIterable(result) ? { onEnd: () => connection.release() } : void connection.release()),
        onSubscribeError: () => connection.release(),
      };
    },
  };
}

/** Creates the yoga handler for /graphql (HTTP and SSE; ws.ts serves WebSockets through it too). */
export function createGraphQL(deps: GraphQLDeps) {
  return createYoga<{ caller: Caller }>({
    schema,
    graphqlEndpoint: "/graphql",
    graphiql: !deps.production,
    landingPage: false,
    logging: false,
    context: ({ caller }) => createContext(deps, caller),
    plugins: [
      EnvelopArmorPlugin({
        // Introspection counts too: GraphiQL's own query stays well under the limit.
        maxDepth: { n: QUERY_LIMITS.maxDepth, ignoreIntrospection: false },
        costLimit: { maxCost: QUERY_LIMITS.maxCost, ignoreIntrospection: true },
        maxAliases: { n: QUERY_LIMITS.maxAliases },
        maxTokens: { n: QUERY_LIMITS.maxTokens },
        maxDirectives: { n: QUERY_LIMITS.maxDirectives },
        blockFieldSuggestion: { enabled: deps.production },
      }),
      rateLimitPlugin(deps.rateLimiter),
      sseConnectionsPlugin(deps.connections),
    ],
    maskedErrors: {
      maskError(error) {
        const original = error instanceof GraphQLError ? error.originalError : error;
        if (original instanceof AppError) return graphqlError(original, error as GraphQLError);
        if (error instanceof GraphQLError && !original) return error; // syntax, validation, limits
        deps.logger.error({ err: original ?? error }, "graphql resolver failed");
        return new GraphQLError("An internal error occurred.", { extensions: { code: "internal_error", statusCode: 500 } });
      },
    },
  });
}
