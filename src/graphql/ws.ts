// GraphQL over WebSocket (graphql-transport-ws) on /graphql, through the same yoga instance, schema,
// limits and error masking as HTTP. The key is checked once, when the connection opens
// (connectionParams { "X-API-Key": "sk_…" }), or the dashboard's session cookie with connectionParams
// { "X-CSRF-Token": "…" }; a connection without either may use public operations only, and counts
// against its address's live streams.
import type { Server } from "node:http";
import { GraphQLError, type ExecutionArgs, type GraphQLFormattedError } from "graphql";
import { CloseCode, type Context, type OperationResult, type SubscribePayload } from "graphql-ws";
import { type Extra as SocketExtra, useServer } from "graphql-ws/use/ws";
import type { Logger } from "pino";
import { WebSocketServer } from "ws";
import type { Prisma } from "../db/client.js";
import type { ApiKeyAuthenticator } from "../domain/api-keys.js";
import { AppError } from "../domain/errors.js";
import type { Principal } from "../domain/scope.js";
import { authenticateFrom, clientAddress } from "../http/callers.js";
import type { Bulkhead } from "../http/bulkhead.js";
import type { RateLimiter } from "../http/rate-limit.js";
import { authenticateSessionRequest, sessionCredentials } from "../http/session-cookie.js";
import type { LiveConnection, LiveConnections } from "../realtime/connections.js";
import { contextSeed } from "./context.js";
import { graphqlError } from "./errors.js";
import { maySendText, operationText, type PersistedOperations } from "./persisted.js";
import { type createGraphQL, maskError } from "./yoga.js";

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
  /** The client's address (X-Forwarded-For only with TRUST_PROXY). */
  address?: string;
  /** The upgrade request's User-Agent, for the security history. */
  userAgent?: string | null;
};

type Yoga = ReturnType<typeof createGraphQL>;

/** What the WebSocket door uses besides yoga. */
export interface WebSocketDeps {
  prisma: Prisma;
  authenticator: ApiKeyAuthenticator;
  rateLimiter: RateLimiter;
  connections: LiveConnections;
  anonymousStreams: LiveConnections;
  anonymous: Bulkhead;
  limits: WebSocketLimits;
  trustProxy: number;
  publicUrl: string;
  production: boolean;
  logger: Logger;
  persisted: PersistedOperations;
}

type SocketContext = Context<Record<string, unknown>, SocketExtra & Extra>;

/** Serves graphql-ws on `server`'s /graphql; returns the function that closes every socket. */
export function serveGraphQLOverWebSocket(server: Server, yoga: Yoga, deps: WebSocketDeps): () => Promise<void> {
  const wss = new WebSocketServer({ noServer: true, maxPayload: deps.limits.maxPayloadBytes });
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
      onConnect: (ctx) => openConnection(ctx, deps),
      onClose(ctx) {
        ctx.extra.connection?.release();
      },
      // Errors of one operation (a stream failing midway included) are masked as over HTTP.
      onError: (_ctx, _id, _payload, errors) => errors.map((e) => formatted(maskError(e, deps.logger))),
      onNext: (_ctx, _id, _payload, _args, result) => (result.errors ? { ...result, errors: result.errors.map(formatted) } : undefined),
      async onSubscribe(ctx, _id, payload) {
        try {
          return await startOperation(yoga, deps, ctx, payload);
        } catch (e) {
          // Thrown, graphql-ws would close the whole socket (4500, with the raw message outside
          // production); returned, it fails this operation alone.
          return [maskError(e, deps.logger)];
        }
      },
    },
    wss,
    deps.limits.keepAliveMs,
  );
  return () => disposable.dispose() as Promise<void>;
}

/**
 * Admits a new socket: authenticates its key or session once (a refused one closes it, and counts
 * as a failed authentication of its address), and registers it as a live connection of the key or,
 * without one, of its address. False when the socket was closed instead.
 */
async function openConnection(ctx: SocketContext, deps: WebSocketDeps): Promise<boolean> {
  const { request } = ctx.extra;
  const address = clientAddress(request.headers, request.socket.remoteAddress, deps.trustProxy);
  ctx.extra.address = address;
  ctx.extra.userAgent = request.headers["user-agent"] ?? null;
  // graphql-ws keeps the upgrade request (its headers, its socket's parser state) for the
  // connection's lifetime; everything later operations need of it is read above and below. Cleared,
  // not deleted: a deleted property turns the object into a slower, larger dictionary.
  (ctx.extra as { request: unknown }).request = undefined;
  const params = ctx.connectionParams ?? {};
  const key = params["X-API-Key"] ?? params["x-api-key"];
  const session = sessionCredentials(request.headers, deps.publicUrl, params);
  const attempt =
    key !== undefined && key !== null
      ? () => deps.authenticator.authenticate(typeof key === "string" ? key : "", address)
      : session && (() => authenticateSessionRequest(deps.prisma, session, true));
  let principal: Principal | null = null;
  if (attempt) {
    try {
      principal = await authenticateFrom(deps.rateLimiter, address, attempt);
    } catch (e) {
      if (!(e instanceof AppError)) throw e;
      ctx.extra.socket.close(e.code === "rate_limited" ? WS_CLOSE.tooManyConnections : WS_CLOSE.keyRejected, `${e.code}: ${e.message}`.slice(0, 120));
      return false;
    }
  }
  try {
    const close = (reason: string) => ctx.extra.socket.close(WS_CLOSE.revoked, reason);
    ctx.extra.connection = principal ? deps.connections.open(principal.credentialId, close) : deps.anonymousStreams.open(`ip:${address}`, close);
  } catch (e) {
    if (!(e instanceof AppError)) throw e;
    ctx.extra.socket.close(WS_CLOSE.tooManyConnections, e.message.slice(0, 120));
    return false;
  }
  ctx.extra.principal = principal;
  return true;
}

/**
 * The operation's execution arguments, or the errors that end it before it starts. What it throws
 * (graphql-armor's limits throw from parse and validate) fails this operation alone too.
 */
async function startOperation(
  yoga: Yoga,
  deps: WebSocketDeps,
  ctx: SocketContext,
  payload: SubscribePayload,
): Promise<ExecutionArgs | readonly GraphQLError[]> {
  const { subscriptionsPerConnection } = deps.limits;
  // The new operation is already listed in ctx.subscriptions.
  if (Object.keys(ctx.subscriptions).length > subscriptionsPerConnection) {
    const e = new AppError(
      "rate_limited",
      `Too many subscriptions on this connection (at most ${subscriptionsPerConnection}); complete one or open another connection.`,
    );
    return [graphqlError(e)];
  }
  // Without a key, a saturated process or a spent address refuses before any parsing: a flood of
  // subscribe messages must cost next to nothing.
  if (!ctx.extra.principal) {
    deps.anonymous.refuseWhenSaturated();
    await deps.rateLimiter.check(`ip:${ctx.extra.address}`, "public");
  }
  const caller = {
    connection: ctx.extra.principal ?? null,
    address: ctx.extra.address ?? "unknown",
    userAgent: ctx.extra.userAgent ?? null,
  };
  const text = operationText(deps.persisted, payload, maySendText(caller, deps.production));
  if (typeof text !== "string") return [text];
  // Only what the context factory and the plugins read: an initial context is kept, merged into
  // the operation's, for as long as a subscription runs.
  const enveloped = yoga.getEnveloped(contextSeed({ ...payload, query: text }, caller));
  const document = enveloped.parse(text);
  const errors = enveloped.validate(enveloped.schema, document);
  if (errors.length > 0) return errors;
  return {
    schema: enveloped.schema,
    operationName: payload.operationName ?? null,
    document,
    variableValues: payload.variables ?? null,
    contextValue: await enveloped.contextFactory(),
    rootValue: { execute: enveloped.execute, subscribe: enveloped.subscribe } as Enveloped,
  };
}

/** An error as the socket sends it: without extensions.http, which says how yoga makes an HTTP answer. */
function formatted(error: GraphQLError): GraphQLFormattedError {
  const { extensions, ...rest } = error.toJSON();
  const { http: _http, ...shown } = extensions ?? {};
  return Object.keys(shown).length > 0 ? { ...rest, extensions: shown } : rest;
}

/** The enveloped execute and subscribe, carried to graphql-ws as the operation's root value. */
interface Enveloped {
  execute: (args: ExecutionArgs) => OperationResult;
  subscribe: (args: ExecutionArgs) => OperationResult;
}
