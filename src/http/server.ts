// The HTTP server: request ids, JSON logs, the error body, health checks, and the doors mounted on it.
import type { IncomingMessage } from "node:http";
import type { Socket } from "node:net";
import Fastify, { type ConnectionError, type FastifyBaseLogger, type FastifyInstance, type FastifyReply, type FastifyRequest, LogController } from "fastify";
import type { Logger } from "pino";
import type { Database } from "../db/client.js";
import { ORDER_ID_MAX_LENGTH } from "../domain/charges/requests.js";
import { AppError, invalidParam } from "../domain/errors.js";
import { randomBase62 } from "../domain/ids.js";
import type { PubSub } from "../realtime/pubsub.js";
import { ConnectionDrain } from "./drain.js";
import { BODY_LIMIT_BYTES, errorBody, HttpError, toAppError } from "./errors.js";
import { installJsonBodyParser } from "./json-body.js";

/**
 * The longest value a path parameter legitimately carries: an order id. Longer is 400
 * parameter_invalid naming the parameter (.docs/api.md "Errors"), not 404: the caller sent something that
 * cannot be an id at all, and saying which parameter helps more than "no such charge".
 */
const MAX_PATH_PARAM_LENGTH = ORDER_ID_MAX_LENGTH;

/** A request id a proxy in front may hand on: short, and nothing a log line could be forged with. */
const FORWARDED_REQUEST_ID = /^[\w.:@-]{1,128}$/;

/** Servers told to stop: their /readyz fails while they still answer everything else. */
const leaving = new WeakSet<FastifyInstance>();

/** Makes `app`'s /readyz answer 503 from now on, so a load balancer takes it out of rotation before it stops listening. */
export function leaveRotation(app: FastifyInstance): void {
  leaving.add(app);
}

export interface ServerOptions {
  /** What else /readyz reports as degraded (a relayer low on gas). */
  problems?: () => Promise<string[]>;
  /** Whether an incoming X-Request-Id is kept: only behind a trusted proxy (TRUST_PROXY), which sets it. */
  trustRequestIds?: boolean;
  /** PUBLIC_URL, where /docs is served: error bodies' docUrl points there (absent: a URL relative to this server). */
  publicUrl?: string;
  /** Whether emails can be sent (SMTP_URL): /readyz says so; without it the service is still ready. */
  email?: "configured" | "not_configured";
}

/**
 * Creates the Fastify instance with the behaviour every route shares. /readyz reports the database,
 * `pubsub`, `options.problems` (degraded) and `options.email`, and fails once the server leaves rotation.
 */
export function createServer(logger: Logger, db: Database, pubsub: PubSub, options: ServerOptions = {}): FastifyInstance {
  const { problems = async () => [], trustRequestIds = false, publicUrl = "" } = options;
  const email = options.email ? { email: options.email } : {};
  // Requests whose Expect is not 100-continue: the checkExpectation listener below routes them here.
  const unmetExpectations = new WeakSet<IncomingMessage>();
  let closing = false;

  const app = Fastify({
    loggerInstance: logger as FastifyBaseLogger,
    // One line per request, written by our onResponse hook, keeps logs small.
    logController: new LogController({ disableRequestLogging: true, requestIdLogLabel: "requestId" }),
    genReqId: (req) => {
      const forwarded = req.headers["x-request-id"];
      return trustRequestIds && typeof forwarded === "string" && FORWARDED_REQUEST_ID.test(forwarded) ? forwarded : newRequestId();
    },
    bodyLimit: BODY_LIMIT_BYTES,
    onProtoPoisoning: "error",
    onConstructorPoisoning: "error",
    // Fastify's own 503 while closing is a bare body without a request id: the onRequest hook answers instead.
    return503OnClosing: false,
    // Connections are closed by the drain in preClose, without cutting a request off.
    forceCloseConnections: false,
    // The router answers a parameter over its limit with a bare 414 that cannot name the parameter;
    // the onRequest hook checks lengths instead. Node's 16 KB header limit still bounds the URL.
    routerOptions: { maxParamLength: Number.MAX_SAFE_INTEGER },
    // Node answers an HTTP/1.1 request without Host with an empty 400; the onRequest hook does it in our body.
    http: { requireHostHeader: false },
    // A URL the router cannot decode fails before any hook or the error handler runs.
    frameworkErrors: (err, req, reply) => {
      replyWithError(err, req, reply, publicUrl);
      logRequest(req, reply);
    },
    clientErrorHandler: (err, socket) => answerUnparsedRequest(logger, err, socket, publicUrl),
  });

  // JSON is the only body the API takes; anything else is refused by the error mapping.
  app.removeContentTypeParser("text/plain");
  installJsonBodyParser(app);

  // Without a listener Node answers an Expect other than 100-continue with a bare 417 and never
  // hands the request over; routing it lets the onRequest hook refuse it like any other error.
  app.server.on("checkExpectation", (req: IncomingMessage, res) => {
    unmetExpectations.add(req);
    app.routing(req, res);
  });
  const connections = new ConnectionDrain(app.server);
  app.addHook("preClose", async () => {
    closing = true;
    await connections.drain();
  });
  // While closing, every answer ends its connection: a keep-alive client moves to another process
  // instead of sending its next request to this one, and the server can finish closing.
  app.addHook("onSend", async (_req, reply) => {
    if (closing) reply.header("Connection", "close");
  });

  app.addHook("onRequest", async (req, reply) => {
    reply.header("X-Request-Id", req.id);
    if (closing) throw new HttpError(503, "internal_error", "This server is shutting down: retry the request and another one will answer it");
    if (req.raw.httpVersion === "1.1" && req.headers.host === undefined)
      throw new AppError("parameter_missing", "HTTP/1.1 requests need a Host header", "Host");
    if (unmetExpectations.has(req.raw)) throw new HttpError(417, "parameter_invalid", "The only expectation supported is 'Expect: 100-continue'", "Expect");
    // The 404 route's catch-all parameter is the whole unknown path, not an id.
    if (req.is404) return;
    for (const [name, value] of Object.entries(req.params as Record<string, string>)) {
      if (value.length > MAX_PATH_PARAM_LENGTH) throw invalidParam(name, `${name} is longer than ${MAX_PATH_PARAM_LENGTH} characters, so it names nothing`);
    }
  });
  app.addHook("onResponse", async (req, reply) => logRequest(req, reply));

  app.setErrorHandler(async (err, req, reply) => replyWithError(err, req, reply, publicUrl));
  app.setNotFoundHandler(async (req, reply) =>
    replyWithError(new AppError("resource_missing", `Unrecognized request URL (${req.method} ${pathOf(req.url)})`), req, reply, publicUrl),
  );

  app.get("/healthz", async () => ({ status: "ok" }));
  app.get("/readyz", async (_req, reply) => {
    if (leaving.has(app)) return reply.code(503).send({ status: "shutting_down" });
    // Without Redis the API still serves every request, but live updates pause: degraded, not down.
    const redis = pubsub.distributed ? { redis: pubsub.connected ? "ok" : "unreachable" } : {};
    try {
      await withTimeout(db.ping(), 2000);
    } catch {
      return reply.code(503).send({ status: "unavailable", database: "unreachable", ...redis, ...email });
    }
    const reasons: string[] = await withTimeout(problems(), 2000).catch(() => []);
    if (redis.redis === "unreachable") reasons.unshift("redis unreachable: live updates wait until it is back");
    return reasons.length > 0 ? { status: "degraded", database: "ok", ...redis, ...email, reasons } : { status: "ok", database: "ok", ...redis, ...email };
  });
  return app;
}

/** Listens on `host`:`port` (0 picks a free port) and returns the base URL. */
export async function listen(app: FastifyInstance, port: number, host: string): Promise<string> {
  await app.listen({ port, host });
  const address = app.server.address();
  const actual = typeof address === "object" && address ? address.port : port;
  return `http://${host.includes(":") ? `[${host}]` : host}:${actual}`;
}

/** A new request id (also for requests Node refuses before Fastify sees them). */
function newRequestId(): string {
  return `req_${randomBase62(20)}`;
}

/** `url` without its query string, which carries customer emails and searches that logs must not keep. */
function pathOf(url: string): string {
  return url.split("?", 1)[0]!;
}

/** Sends `err` as the flat error body (.docs/api.md "Errors"). */
function replyWithError(err: unknown, req: FastifyRequest, reply: FastifyReply, publicUrl: string): FastifyReply {
  const e = toAppError(err);
  // Only unexpected failures need an operator; a 503 while shutting down is expected.
  const body = errorBody(e, req.id, publicUrl);
  if (body.statusCode === 500) req.log.error({ err }, "request failed");
  // Set here too: framework errors are answered without the onRequest hook having run.
  return reply
    .code(body.statusCode)
    .headers({ ...e.headers, "X-Request-Id": req.id })
    .send(body);
}

/** Health probes: every few seconds from each orchestrator and proxy, they would drown the request log. */
const PROBES = new Set(["/healthz", "/readyz"]);

/** The one log line per request (health probes at debug). */
function logRequest(req: FastifyRequest, reply: FastifyReply): void {
  const level = PROBES.has(req.routeOptions?.url ?? "") ? "debug" : "info";
  // Skip building the log object on the hot path when the level is off (LOG_LEVEL=warn).
  if (!(req.log as unknown as Logger).isLevelEnabled(level)) return;
  req.log[level]({ method: req.method, path: pathOf(req.url), status: reply.statusCode, ms: Math.round(reply.elapsedTime) }, "request");
}

/**
 * Answers a request Node could not parse (broken framing, an unknown method, oversized headers, too
 * slow to arrive). Fastify never sees it, so its request id and error body are made here.
 */
function answerUnparsedRequest(logger: Logger, err: ConnectionError, socket: Socket, publicUrl: string): void {
  // A reset connection has nobody left to answer.
  if (err.code === "ECONNRESET" || socket.destroyed) return;
  const requestId = newRequestId();
  const e = toAppError(err);
  // Only the parser's code: the error also holds the raw bytes, query strings included.
  const answer = errorBody(e, requestId, publicUrl);
  logger.info({ requestId, status: answer.statusCode, reason: err.code }, "unparsable request");
  if (socket.writable) {
    const body = JSON.stringify(answer);
    socket.write(
      `HTTP/1.1 ${answer.statusCode} ${answer.error}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
        `X-Request-Id: ${requestId}\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy(err);
}

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error("timeout")), ms);
  });
  return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
}
