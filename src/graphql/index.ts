// The GraphQL door: /graphql over HTTP (queries, mutations, SSE subscriptions) and over WebSocket,
// one yoga instance and schema for both. The domain does the work; the types read, call and shape.
import type { FastifyInstance } from "fastify";
import { sessionCredentials } from "../http/session-cookie.js";
import { apiKeyOf } from "../http/callers.js";
import { loadPersistedOperations } from "./persisted.js";
import { type WebSocketLimits, serveGraphQLOverWebSocket } from "./ws.js";
import { createGraphQL, type GraphQLDeps } from "./yoga.js";

/** Mounts /graphql on `server` (HTTP and WebSocket); returns the function that closes every socket. */
export function mountGraphQL(
  server: FastifyInstance,
  deps: GraphQLDeps & { trustProxy: number; limits: WebSocketLimits; publicUrl: string },
): () => Promise<void> {
  const persisted = loadPersistedOperations();
  const yoga = createGraphQL({ ...deps, persisted });
  server.route({
    url: "/graphql",
    method: ["GET", "POST", "OPTIONS"],
    config: { graphql: true },
    handler: async (req, reply) => {
      const response = await yoga.handleNodeRequestAndResponse(req, reply, {
        caller: { apiKey: apiKeyOf(req.headers) ?? null, session: sessionCredentials(req.headers, deps.publicUrl), address: req.clientAddress },
      });
      for (const [key, value] of response.headers) reply.header(key, value);
      reply.status(response.status);
      return reply.send(response.body);
    },
  });
  return serveGraphQLOverWebSocket(server.server, yoga, { ...deps, persisted });
}
