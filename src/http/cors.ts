// Cross-origin rules (.docs/api.md "CORS"). The public endpoints (/v1/public/*, and POST /v1/customers/jwt,
// which a browser calls with its customer's token) answer any origin, without credentials. The keyed
// REST routes and /graphql answer only the origins in CORS_ORIGINS: an API key belongs on a
// merchant's server or its own dashboard, never in someone else's page. Any other origin's preflight
// gets 204 without Access-Control-Allow-Origin, so the browser stops there.
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";

const METHODS = "GET, POST, PATCH, DELETE, OPTIONS";
const KEYED_HEADERS = "Content-Type, X-API-Key, Idempotency-Key, Authorization, Stablegate-Version";
// Stablegate-Page-Token: the hosted page's own requests (hosted-pages.ts), from its origin when PAYMENT_BASE_URL's is not PUBLIC_URL's.
const PUBLIC_HEADERS = "Content-Type, Authorization, Stablegate-Version, Stablegate-Page-Token";
const EXPOSED = "X-Request-Id, Retry-After, RateLimit-Limit, RateLimit-Remaining, RateLimit-Reset, Idempotent-Replayed, Stablegate-Version";
/** How long a browser may reuse a preflight's answer. */
const MAX_AGE_SECONDS = 600;

/** Answers preflights and marks responses for the cross-origin callers the rules allow. */
export function installCors(app: FastifyInstance, allowedOrigins: readonly string[]): void {
  const allowed = new Set(allowedOrigins);
  app.addHook("onRequest", async (req, reply) => {
    const origin = req.headers.origin;
    const kind = origin === undefined ? null : audience(req);
    if (kind === null) return;
    const permitted = kind === "public" || allowed.has(origin!);
    if (permitted) allow(reply, kind, origin!);
    if (req.method === "OPTIONS" && req.headers["access-control-request-method"] !== undefined) {
      if (permitted) {
        reply
          .header("Access-Control-Allow-Methods", METHODS)
          .header("Access-Control-Allow-Headers", kind === "public" ? PUBLIC_HEADERS : KEYED_HEADERS)
          .header("Access-Control-Max-Age", String(MAX_AGE_SECONDS));
      }
      return reply.code(204).send();
    }
  });
}

/** Who may call this path from a browser: anyone ("public"), the listed origins ("keyed"), or no CORS at all (null). */
function audience(req: FastifyRequest): "public" | "keyed" | null {
  const path = req.url.split("?")[0]!;
  if (path.startsWith("/v1/public/") || path === "/v1/customers/jwt") return "public";
  if (path.startsWith("/v1/") || path === "/graphql") return "keyed";
  return null;
}

function allow(reply: FastifyReply, kind: "public" | "keyed", origin: string): void {
  reply.header("Access-Control-Allow-Origin", kind === "public" ? "*" : origin).header("Access-Control-Expose-Headers", EXPOSED);
  // The answer depends on the Origin header: caches must keep one per origin.
  if (kind === "keyed") reply.header("Vary", "Origin");
}
