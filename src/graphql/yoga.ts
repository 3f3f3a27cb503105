// The GraphQL door: graphql-yoga over the Pothos schema, with the same auth, limits and error
// codes as REST. Only our coded errors are shown; anything else is masked as internal_error.
import { EnvelopArmorPlugin } from "@escape.tech/graphql-armor";
import { type DocumentNode, GraphQLError, getOperationAST, Kind, subscribe } from "graphql";
import { createYoga, isAsyncIterable, type Plugin } from "graphql-yoga";
import type { Logger } from "pino";
import type { AuthorizationReaders } from "../domain/authorizations.js";
import type { Prisma } from "../db/client.js";
import type { ChainSet } from "../chain/chains.js";
import type { ApiKeyAuthenticator } from "../domain/api-keys.js";
import type { ChargeSettings } from "../domain/charges/settings.js";
import { AppError } from "../domain/errors.js";
import type { Bulkhead } from "../http/bulkhead.js";
import type { HostedPages } from "../http/hosted-pages.js";
import type { ProcessMetrics } from "../lib/process-metrics.js";
import type { RateLimiter } from "../http/rate-limit.js";
import type { LiveCharges } from "../realtime/charges.js";
import type { LiveConnections } from "../realtime/connections.js";
import { type Caller, createContext, type EmailSettings, type GraphQLContext } from "./context.js";
import { graphqlError } from "./errors.js";
import { renderGraphiQL } from "./graphiql.js";
import { inputGuardPlugin } from "./input-guard.js";
import { introspectionDepthPlugin } from "./introspection.js";
import { parameterError, parameterValidationPlugin, variablesPlugin } from "./parameters.js";
import { type PersistedOperations, persistedOperationsPlugins } from "./persisted.js";
import { admissionPlugin } from "./rate-limit.js";
import { schema } from "./schema.js";

export interface GraphQLDeps {
  prisma: Prisma;
  authenticator: ApiKeyAuthenticator;
  rateLimiter: RateLimiter;
  charges: ChargeSettings;
  chains: ChainSet;
  /** Each chain's USDC, as EIP-3009 authorizations are checked against it. */
  authorizations: AuthorizationReaders;
  /** Whether and from where emails are sent (`emailSending`). */
  email: EmailSettings;
  live: LiveCharges;
  connections: LiveConnections;
  /** Live streams of callers without a key, per client address. */
  anonymousStreams: LiveConnections;
  /** The share of the database that operations without an API key may use. */
  anonymous: Bulkhead;
  /** The hosted pages' lane: their own operations (a valid page token, about its charge) wait there. */
  hostedPages: HostedPages;
  /** Where operations are counted (/metrics). */
  metrics: Pick<ProcessMetrics, "graphqlOperations">;
  logger: Logger;
  production: boolean;
}

/** Limits that keep one query from costing more than a page of work (a 100-charge page with customers and stats fits). */
export const QUERY_LIMITS = { maxDepth: 15, maxCost: 20_000, maxAliases: 15, maxTokens: 2000, maxDirectives: 10 };

/** Counts each operation that runs, by type and whether its result carries errors. */
function countingPlugin(metrics: Pick<ProcessMetrics, "graphqlOperations">): Plugin<GraphQLContext> {
  const count = (document: DocumentNode, operationName: string | null | undefined, errors: unknown) =>
    metrics.graphqlOperations.inc({ type: getOperationAST(document, operationName)?.operation ?? "unknown", outcome: errors ? "error" : "ok" });
  return {
    onExecute({ args }) {
      return { onExecuteDone: ({ result }) => count(args.document, args.operationName, isAsyncIterable(result) ? null : result.errors?.length) };
    },
    onSubscribe({ args }) {
      return { onSubscribeResult: ({ result }) => count(args.document, args.operationName, isAsyncIterable(result) ? null : result.errors?.length) };
    },
  };
}

/**
 * A subscription over SSE is a connection of its own: it counts against the key's live
 * connections (or, without a key, its address's streams) while it runs, and ends when the key is
 * revoked. (A WebSocket registers once, when it opens.)
 */
function sseConnectionsPlugin(connections: LiveConnections, anonymousStreams: LiveConnections): Plugin<GraphQLContext> {
  return {
    onSubscribe({ args, setResultAndStopExecution }) {
      const ctx = args.contextValue as GraphQLContext;
      if (ctx.transport !== "http") return;
      const controller = new AbortController();
      let connection;
      try {
        const abort = () => controller.abort();
        connection = ctx.principal ? connections.open(ctx.principal.credentialId, abort) : anonymousStreams.open(`ip:${ctx.address}`, abort);
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

/**
 * What a client may see of `error`: our coded errors, and GraphQL's own (syntax, validation,
 * limits); anything else is logged and becomes `internal_error`, over every transport.
 */
export function maskError(error: unknown, logger: Logger): GraphQLError {
  const original = error instanceof GraphQLError ? error.originalError : error;
  if (original instanceof AppError) return graphqlError(original, error as GraphQLError);
  if (error instanceof GraphQLError) {
    // The executor's own check of a variable (coded BAD_USER_INPUT when subscribing), whose cause (a
    // scalar's TypeError) is not ours either: variablesPlugin refuses such variables first, naming the
    // path inside them too.
    const variable = error.nodes?.[0];
    const code = error.extensions.code;
    if (variable?.kind === Kind.VARIABLE_DEFINITION && !error.path && (code === undefined || code === "BAD_USER_INPUT")) {
      return parameterError(error.message, variable.variable.name.value, error);
    }
    // graphql-armor's limits and a syntax error over WebSocket come without a code: the document is at fault.
    if (!original) return error.extensions.code || error.path ? error : parameterError(error.message, "query", error);
  }
  logger.error({ err: original ?? error }, "graphql resolver failed");
  return new GraphQLError("An internal error occurred.", { extensions: { code: "internal_error", statusCode: 500 } });
}

/** Creates the yoga handler for /graphql (HTTP and SSE; ws.ts serves WebSockets through it too). */
export function createGraphQL(deps: GraphQLDeps & { persisted: PersistedOperations }) {
  return createYoga<{ caller: Caller }>({
    schema,
    graphqlEndpoint: "/graphql",
    // Its page and files are this process's (graphiql.ts): no CDN, so it works offline.
    graphiql: deps.production ? false : { title: "Stablegate GraphiQL" },
    renderGraphiQL,
    // Cross-origin rules are the server's (src/http/cors.ts): yoga's own would echo any origin.
    cors: false,
    landingPage: false,
    logging: false,
    context: ({ caller }) => createContext(deps, caller),
    plugins: [
      // graphql-js's own subscribe: yoga's executor wraps every stream in two more iterator layers
      // (for incremental delivery, which subscriptions here never use), kept alive per subscriber.
      { onSubscribe: ({ setSubscribeFn }) => setSubscribeFn(subscribe) } satisfies Plugin<GraphQLContext>,
      ...persistedOperationsPlugins(deps.persisted, deps.production),
      EnvelopArmorPlugin({
        // The standard introspection query is deeper than operations may go: its depth has a limit
        // of its own (introspection.ts). This one leaves out __schema only; __type still counts.
        maxDepth: { n: QUERY_LIMITS.maxDepth, ignoreIntrospection: true },
        costLimit: { maxCost: QUERY_LIMITS.maxCost, ignoreIntrospection: true },
        maxAliases: { n: QUERY_LIMITS.maxAliases },
        maxTokens: { n: QUERY_LIMITS.maxTokens },
        maxDirectives: { n: QUERY_LIMITS.maxDirectives },
        blockFieldSuggestion: { enabled: deps.production },
      }),
      introspectionDepthPlugin(),
      parameterValidationPlugin(),
      variablesPlugin(),
      inputGuardPlugin(),
      admissionPlugin(deps.rateLimiter, deps.anonymous, deps.hostedPages, deps.live),
      sseConnectionsPlugin(deps.connections, deps.anonymousStreams),
      countingPlugin(deps.metrics),
    ],
    maskedErrors: { maskError: (error) => maskError(error, deps.logger) },
  });
}
