// The dashboard's own use of the session cookie (http/session-cookie.ts reads it for every door):
// setting and clearing it, and opening the session of a /dashboard request.
import type { FastifyRequest } from "fastify";
import type { Prisma } from "../db/client.js";
import { AppError } from "../domain/errors.js";
import { authorize, type Capability } from "../domain/permissions.js";
import type { SessionPrincipal, SessionView } from "../domain/sessions.js";
import { authenticateFrom } from "../http/callers.js";
import type { RateLimiter } from "../http/rate-limit.js";
import { authenticateSessionRequest, SESSION_COOKIE, sessionCredentials } from "../http/session-cookie.js";

/**
 * The Set-Cookie value that stores `token` (Secure when the service is served over https). A browser
 * session cookie: the 12 h idle limit is the server's, which also ends a session on sign-out.
 */
export function sessionCookie(token: string, secure: boolean): string {
  return `${SESSION_COOKIE}=${token}; Path=/; HttpOnly; SameSite=Strict${secure ? "; Secure" : ""}`;
}

/** The browser's device cookie (domain/sessions.ts `openSession`): long-lived, so a sign-in from a new browser can be told apart. */
export const DEVICE_COOKIE = "sg_device";

/** The Set-Cookie value that keeps the browser's device cookie for two years (renewed at each sign-in). */
export function deviceCookie(token: string, secure: boolean): string {
  return `${DEVICE_COOKIE}=${token}; Path=/dashboard; Max-Age=63072000; HttpOnly; SameSite=Strict${secure ? "; Secure" : ""}`;
}

/** The Set-Cookie value that removes the session cookie. */
export function clearedSessionCookie(secure: boolean): string {
  return `${SESSION_COOKIE}=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0${secure ? "; Secure" : ""}`;
}

/**
 * The session a /dashboard request opens with its cookie; 401 `session_invalid` without one (every
 * visit to the sign-in page), and a cookie that is refused counts as a failed authentication of the
 * address. A request that changes something names the capability it needs (domain/permissions.ts),
 * so no route can forget the role's rule: 403 `permission_denied` when the session's role lacks it.
 */
export async function requestSession(
  req: FastifyRequest,
  deps: { prisma: Prisma; rateLimiter: RateLimiter; publicUrl: string },
  changes: Capability | false,
): Promise<SessionPrincipal & { view: SessionView }> {
  const credentials = sessionCredentials(req.headers, deps.publicUrl);
  if (!credentials) throw new AppError("session_invalid", "Sign in to the dashboard first.");
  const session = await authenticateFrom(deps.rateLimiter, req.clientAddress, () => authenticateSessionRequest(deps.prisma, credentials, changes !== false));
  if (changes !== false) authorize(session.role, changes);
  return session;
}
