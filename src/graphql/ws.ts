// GraphQL over WebSocket (graphql-transport-ws) on /graphql, through the same yoga instance, schema,
// limits and error masking as HTTP. The key is checked once, when the connection opens
// (connectionParams { "X-API-Key": "sk_…" }); a connection without one may use public operations only.
import type { Server } from "node:http";
import { GraphQLError, type ExecutionArgs } from "graphql";
import { CloseCode, type OperationResult } from "graphql-ws";
import { useServer } from "graphql-ws/use/ws";
import { WebSocketServer } from "ws";
import type { ApiKeyAuthenticator } from "../domain/api-keys.js";
import { AppError } from "../domain/errors.js";
import type { Principal } from "../domain/scope.js";
import type { LiveConnection, LiveConnections } from "../realtime/connections.js";
import type { createGraphQL } from "./yoga.js";
import { graphqlError } from "./yoga.js";

/** Close codes a client sees, besides the protocol's own (4400 bad request, 4403 forbidden…). */
export const WS_CLOSE = { keyRejected: CloseCode.Forbidden, tooManyConnections: 4429, revoked: 4403 } as const;

export interface WebSocketLimits {
  subscriptionsPerConnection: number;
  /** How often the server pings; a client that misses a pong for as long is dropped. */
  keepAliveMs: number;
  /** The largest message a client may send. */
  maxPayloadBytes: number;
}

type Extra = {
  principal?: Principal | null;
  connection?: LiveConnection;
};

type Yoga = ReturnType<typeof createGraphQL>;

/** Serves graphql-ws on `server`'s /graphql; returns the function that closes every socket. */
export function serveGraphQLOverWebSocket(
  server: Server,
  yoga: Yoga,
  deps: { authenticator: ApiKeyAuthenticator; connections: LiveConnections; limits: WebSocketLimits; production: boolean },
): () => Promise<void> {
  const { authenticator, connections, limits } = deps;
  const wss = new WebSocketServer({ noServer: true, maxPayload: limits.maxPayloadBytes });
  server.on("upgrade", (req, socket, head) => {
    if (new URL(req.url ?? "/", "http://x").pathname !== yoga.graphqlEndpoint) {
      socket.end("HTTP/1.1 404 Not Found\r\nConnection: close\r\n\r\n");
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => wss.emit("connection", ws, req));
  });

  const disposable = useServer<Record<string, unknown>, Extra>(
    {
      isProd: deps.production,
      execute: (args) => (args.rootValue as Enveloped).execute(args),
      subscribe: (args) => (args.rootValue as Enveloped).subscribe(args),
      async onConnect(ctx) {
        const params = ctx.connectionParams ?? {};
        const key = params["X-API-Key"] ?? params["x-api-key"];
        if (key === undefined || key === null) {
          ctx.extra.principal = null;
          return true;
        }
        let principal: Principal;
        try {
          principal = await authenticator.authenticate(typeof key === "string" ? key : "");
        } catch (e) {
          if (!(e instanceof AppError)) throw e;
          ctx.extra.socket.close(WS_CLOSE.keyRejected, `${e.code}: ${e.message}`.slice(0, 120));
          return false;
        }
        try {
          ctx.extra.connection = connections.open(principal.keyId, (reason) => ctx.extra.socket.close(WS_CLOSE.revoked, reason));
        } catch (e) {
          if (!(e instanceof AppError)) throw e;
          ctx.extra.socket.close(WS_CLOSE.tooManyConnections, e.message.slice(0, 120));
          return false;
        }
        ctx.extra.principal = principal;
        return true;
      },
      onClose(ctx) {
        ctx.extra.connection?.release();
      },
      async onSubscribe(ctx, _id, payload) {
        // The new operation is already listed in ctx.subscriptions.
        if (Object.keys(ctx.subscriptions).length > limits.subscriptionsPerConnection) {
          const e = new AppError(
            429,
            "rate_limited",
            `Too many subscriptions on this connection (at most ${limits.subscriptionsPerConnection}); complete one or open another connection.`,
          );
          return [graphqlError(e)];
        }
        const enveloped = yoga.getEnveloped({
          ...ctx,
          req: ctx.extra.request,
          socket: ctx.extra.socket,
          params: payload,
          caller: { connection: ctx.extra.principal ?? null },
        });
        let document;
        try {
          document = enveloped.parse(payload.query);
        } catch (e) {
          if (e instanceof GraphQLError) return [e];
          throw e;
        }
        const errors = enveloped.validate(enveloped.schema, document);
        if (errors.length > 0) return errors;
        const args: ExecutionArgs = {
          schema: enveloped.schema,
          operationName: payload.operationName ?? null,
          document,
          variableValues: payload.variables ?? null,
          contextValue: await enveloped.contextFactory(),
          rootValue: { execute: enveloped.execute, subscribe: enveloped.subscribe } as Enveloped,
        };
        return args;
      },
    },
    wss,
    limits.keepAliveMs,
  );
  return () => disposable.dispose() as Promise<void>;
}

/** The enveloped execute and subscribe, carried to graphql-ws as the operation's root value. */
interface Enveloped {
  execute: (args: ExecutionArgs) => OperationResult;
  subscribe: (args: ExecutionArgs) => OperationResult;
}
