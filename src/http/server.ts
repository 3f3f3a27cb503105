// The HTTP server: request ids, JSON logs, the error body, health checks, and the doors mounted on it.
import Fastify, { type FastifyBaseLogger, type FastifyInstance, LogController } from "fastify";
import type { Logger } from "pino";
import type { Database } from "../db/client.js";
import { AppError } from "../domain/errors.js";
import { randomBase62 } from "../domain/ids.js";
import type { PubSub } from "../realtime/pubsub.js";
import { BODY_LIMIT_BYTES, errorBody, toAppError } from "./errors.js";

/**
 * Creates the Fastify instance with the behaviour every route shares. /readyz reports the database,
 * `pubsub` and whatever `problems` finds wrong (a relayer low on gas) as degraded.
 */
export function createServer(logger: Logger, db: Database, pubsub: PubSub, problems: () => Promise<string[]> = async () => []): FastifyInstance {
  const app = Fastify({
    loggerInstance: logger as FastifyBaseLogger,
    // One line per request, written by our onResponse hook, keeps logs small.
    logController: new LogController({ disableRequestLogging: true, requestIdLogLabel: "requestId" }),
    genReqId: () => `req_${randomBase62(20)}`,
    bodyLimit: BODY_LIMIT_BYTES,
    onProtoPoisoning: "error",
    onConstructorPoisoning: "error",
    return503OnClosing: true,
    forceCloseConnections: "idle",
  });

  // JSON is the only body the API takes; anything else is refused by the error mapping.
  app.removeContentTypeParser("text/plain");

  app.addHook("onRequest", async (req, reply) => {
    reply.header("X-Request-Id", req.id);
  });
  app.addHook("onResponse", async (req, reply) => {
    // Skip building the log object on the hot path when info lines are off (LOG_LEVEL=warn).
    if (!(req.log as unknown as Logger).isLevelEnabled("info")) return;
    req.log.info({ method: req.method, url: req.url, status: reply.statusCode, ms: Math.round(reply.elapsedTime) }, "request");
  });

  app.setErrorHandler(async (err, req, reply) => {
    const e = toAppError(err);
    if (e.status >= 500) req.log.error({ err }, "request failed");
    return reply.code(e.status).headers(e.headers).send(errorBody(e, req.id));
  });
  app.setNotFoundHandler(async (req, reply) => {
    const e = new AppError(404, "resource_missing", `Unrecognized request URL (${req.method} ${req.url.split("?")[0]})`, null);
    return reply.code(404).send(errorBody(e, req.id));
  });

  app.get("/healthz", async () => ({ status: "ok" }));
  app.get("/readyz", async (_req, reply) => {
    // Without Redis the API still serves every request, but live updates pause: degraded, not down.
    const redis = pubsub.distributed ? { redis: pubsub.connected ? "ok" : "unreachable" } : {};
    try {
      await withTimeout(db.ping(), 2000);
    } catch {
      return reply.code(503).send({ status: "unavailable", database: "unreachable", ...redis });
    }
    const reasons: string[] = await withTimeout(problems(), 2000).catch(() => []);
    if (redis.redis === "unreachable") reasons.unshift("redis unreachable: live updates wait until it is back");
    return reasons.length > 0 ? { status: "degraded", database: "ok", ...redis, reasons } : { status: "ok", database: "ok", ...redis };
  });
  return app;
}

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error("timeout")), ms);
  });
  return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
}
