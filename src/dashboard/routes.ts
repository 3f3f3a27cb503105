// The dashboard's session endpoints: sign in (sets the cookie), read the session (the page's first
// call: who is signed in, the mode, the CSRF token), switch mode, re-authenticate, sign out.
// Everything else the dashboard does goes through /graphql with the cookie.
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { Prisma } from "../db/client.js";
import { reauthenticate } from "../domain/reauthentication.js";
import { reauthenticateSchema } from "../domain/reauthentication-requests.js";
import { signInSchema, switchModeSchema } from "../domain/session-requests.js";
import { type OpenedSession, type SignInDevice, signIn, signOut, switchMode } from "../domain/sessions.js";
import { actorOf } from "../domain/security-events.js";
import { parseInput } from "../domain/validation.js";
import { authenticateFrom, requestClient } from "../http/callers.js";
import type { Bulkhead } from "../http/bulkhead.js";
import type { RateLimiter } from "../http/rate-limit.js";
import { cookieValue, crossOrigin, fromOwnOrigin } from "../http/session-cookie.js";
import { clearedSessionCookie, DEVICE_COOKIE, deviceCookie, requestSession, sessionCookie } from "./session-cookie.js";

export interface DashboardDeps {
  prisma: Prisma;
  rateLimiter: RateLimiter;
  /** The share of the database and CPU that callers without a credential may use: sign-ins, each a 32 MiB scrypt. */
  anonymous: Bulkhead;
  publicUrl: string;
}

/** Registers /dashboard/session. */
export function dashboardSessionRoutes(app: FastifyInstance, deps: DashboardDeps): void {
  const { prisma, rateLimiter, anonymous, publicUrl } = deps;
  const secure = publicUrl.startsWith("https:");

  // Switching mode, re-authenticating and signing out are one's own session's: every role's `account`.
  const sessionOf = (req: FastifyRequest, changes: boolean) => requestSession(req, deps, changes && "account");

  app.post("/dashboard/session", async (req, reply) => {
    // Anyone may try: each attempt spends the address's public budget, each failure also its
    // failed-authentication budget and the email's sign-in budget.
    if (!fromOwnOrigin(req.headers, publicUrl)) throw crossOrigin();
    await rateLimiter.consume(`ip:${req.clientAddress}`, "public");
    const release = await anonymous.enter();
    let signedIn: Awaited<ReturnType<typeof signIn>>;
    try {
      signedIn = await authenticateFrom(rateLimiter, req.clientAddress, () =>
        signIn(prisma, rateLimiter, parseInput(signInSchema, req.body ?? {}), signInDevice(req)),
      );
    } finally {
      release();
    }
    return signedInReply(reply, signedIn, secure).code(201).send(signedIn.session);
  });

  app.get("/dashboard/session", async (req, reply) => {
    const { view } = await sessionOf(req, false);
    return noStore(reply).send(view);
  });

  app.patch("/dashboard/session", async (req, reply) => {
    const { view } = await sessionOf(req, true);
    const mode = await switchMode(prisma, view.id, parseInput(switchModeSchema, req.body ?? {}));
    return noStore(reply).send({ ...view, mode });
  });

  // Giving the password (and code) again: the dashboard's riskiest changes need it within 5 minutes.
  // Wrong answers spend the email's sign-in budget, as failed sign-ins do.
  app.post("/dashboard/session/reauthenticate", async (req, reply) => {
    const session = await sessionOf(req, true);
    // Each attempt is a 32 MiB password hash: a session gets as many as it may create things.
    await rateLimiter.consume(session.credentialId, "create");
    const until = await reauthenticate(
      prisma,
      rateLimiter,
      { sessionId: session.credentialId, userId: session.userId },
      parseInput(reauthenticateSchema, req.body ?? {}),
    );
    return noStore(reply).send({ reauthenticatedUntil: until.toISOString() });
  });

  app.delete("/dashboard/session", async (req, reply) => {
    const session = await sessionOf(req, true);
    await signOut(
      prisma,
      { sessionId: session.credentialId, merchantId: session.merchantId, userId: session.userId },
      actorOf(session.view.user, requestClient(req)),
    );
    return reply.code(204).header("Set-Cookie", clearedSessionCookie(secure)).send();
  });
}

/** The browser a sign-in comes from, as the domain remembers it. */
export function signInDevice(req: FastifyRequest): SignInDevice {
  return { token: cookieValue(req.headers.cookie, DEVICE_COOKIE), ...requestClient(req) };
}

/** Sets a just-opened session's cookie and the browser's device cookie. */
export function signedInReply(reply: FastifyReply, opened: OpenedSession, secure: boolean): FastifyReply {
  return noStore(reply).header("Set-Cookie", [sessionCookie(opened.token, secure), deviceCookie(opened.deviceToken, secure)]);
}

/** Marks an answer not to be cached (sessions, tokens). */
export function noStore(reply: FastifyReply): FastifyReply {
  return reply.header("Cache-Control", "no-store");
}
