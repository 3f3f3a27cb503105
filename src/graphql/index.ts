// The GraphQL door: /graphql over HTTP (queries, mutations, SSE subscriptions) and over WebSocket,
// one yoga instance and schema for both. The domain does the work; the types read, call and shape.
import type { FastifyInstance } from "fastify";
import type { Config } from "../config.js";
import { sessionCredentials } from "../http/session-cookie.js";
import { apiKeyOf } from "../http/callers.js";
import type { ProcessMetrics } from "../lib/process-metrics.js";
import { closeRevokedConnections, LiveConnections } from "../realtime/connections.js";
import type { PubSub } from "../realtime/pubsub.js";
import { GRAPHIQL_HEADERS, graphiqlRoutes } from "./graphiql.js";
import { loadPersistedOperations } from "./persisted.js";
import { serveGraphQLOverWebSocket } from "./ws.js";
import { createGraphQL, type GraphQLDeps } from "./yoga.js";

/** The largest message a WebSocket client may send (a subscribe message with its query). */
const WS_MAX_PAYLOAD_BYTES = 64 * 1024;

/** What the GraphQL door is built on; it keeps its own live connections' bookkeeping. */
export type GraphQLServices = Omit<GraphQLDeps, "connections" | "anonymousStreams" | "production" | "metrics" | "email"> & {
  config: Pick<Config, "env" | "live" | "authCacheTtlMs" | "trustProxy" | "publicUrl" | "email">;
  pubsub: PubSub;
  metrics: Pick<ProcessMetrics, "graphqlOperations" | "watch">;
};

/** Mounts /graphql on `server` (HTTP and WebSocket); returns the function that closes every socket. */
export function mountGraphQL(server: FastifyInstance, services: GraphQLServices): () => Promise<void> {
  const { config } = services;
  const connections = new LiveConnections(config.live.connectionsPerKey);
  const anonymousStreams = new LiveConnections(config.live.streamsPerIp, "this address without an API key");
  services.metrics.watch({ keyed: connections, anonymous: anonymousStreams, pubsub: services.pubsub });
  const persisted = loadPersistedOperations();
  const deps = {
    ...services,
    connections,
    anonymousStreams,
    production: config.env === "production",
    trustProxy: config.trustProxy,
    publicUrl: config.publicUrl,
    email: config.email,
    limits: { subscriptionsPerConnection: config.live.subscriptionsPerConnection, keepAliveMs: config.live.keepAliveMs, maxPayloadBytes: WS_MAX_PAYLOAD_BYTES },
    persisted,
  };
  const yoga = createGraphQL(deps);
  server.route({
    url: "/graphql",
    method: ["GET", "POST", "OPTIONS"],
    config: { graphql: true },
    handler: async (req, reply) => {
      const response = await yoga.handleNodeRequestAndResponse(req, reply, {
        caller: {
          apiKey: apiKeyOf(req.headers) ?? null,
          session: sessionCredentials(req.headers, config.publicUrl),
          address: req.clientAddress,
          userAgent: req.headers["user-agent"] ?? null,
          pageCharge: req.pageCharge,
        },
      });
      for (const [key, value] of response.headers) reply.header(key, value);
      // The one page yoga draws: GraphiQL, held to its policy.
      if (response.headers.get("content-type")?.startsWith("text/html")) reply.headers(GRAPHIQL_HEADERS);
      reply.status(response.status);
      return reply.send(response.body);
    },
  });
  if (!deps.production) graphiqlRoutes(server);
  const closeSockets = serveGraphQLOverWebSocket(server.server, yoga, deps);
  // A revoked key's live connections close within the time a revoked key keeps working for requests.
  const revocations = closeRevokedConnections(services.prisma, connections, Math.max(config.authCacheTtlMs, 250), services.logger);
  return async () => {
    await revocations.stop();
    await closeSockets();
  };
}
