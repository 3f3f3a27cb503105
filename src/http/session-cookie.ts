// The dashboard's session as HTTP carries it: an HttpOnly, SameSite=Strict cookie, plus two checks
// every door applies before a cookie counts: the request comes from our own origin, and, when it can
// change anything, it echoes the session's CSRF token in a header that no other site's page can set
// without a preflight we refuse. On the http/ floor because the dashboard, GraphQL and REST all read
// it; only the dashboard's routes set it (dashboard/session-cookie.ts).
import type { IncomingHttpHeaders } from "node:http";
import type { Prisma } from "../db/client.js";
import { AppError } from "../domain/errors.js";
import { modeName } from "../domain/scope.js";
import { authenticateSession, type SessionPrincipal, type SessionView } from "../domain/sessions.js";

export const SESSION_COOKIE = "sg_session";
/**
 * What a request shows of a session: the cookie's token, the CSRF token, whether it came from our own
 * origin, and the mode the page believes it is in (a tab opened before another switched modes).
 */
export interface SessionCredentials {
  token: string;
  csrfToken: string | undefined;
  mode: string | undefined;
  sameOrigin: boolean;
}

/**
 * The session credentials of a request, or null when it carries no session cookie. The CSRF token
 * and mode come from the X-CSRF-Token and X-Dashboard-Mode headers, or over WebSocket from the
 * connectionParams in `params`.
 */
export function sessionCredentials(headers: IncomingHttpHeaders, publicUrl: string, params?: Record<string, unknown>): SessionCredentials | null {
  const token = cookieValue(headers.cookie, SESSION_COOKIE);
  if (token === null) return null;
  const text = (value: unknown) => (typeof value === "string" ? value : undefined);
  return {
    token,
    csrfToken: text(params ? params["X-CSRF-Token"] : headers["x-csrf-token"]),
    mode: text(params ? params["X-Dashboard-Mode"] : headers["x-dashboard-mode"]),
    sameOrigin: fromOwnOrigin(headers, publicUrl),
  };
}

/**
 * The session the credentials open. 403 `csrf_token_invalid` from another origin, or, when
 * `changes` (anything but a read the browser would not let another site see), without the session's
 * token in X-CSRF-Token; 401 `session_invalid` for an unknown or ended session.
 */
export async function authenticateSessionRequest(
  prisma: Prisma,
  credentials: SessionCredentials,
  changes: boolean,
): Promise<SessionPrincipal & { view: SessionView }> {
  if (!credentials.sameOrigin) throw crossOrigin();
  const principal = await authenticateSession(prisma, credentials.token);
  if (changes && credentials.csrfToken !== principal.csrfToken) throw missingCsrfToken();
  // A page still showing one mode must not act in the other, which another tab switched to.
  if (credentials.mode !== undefined && credentials.mode !== modeName(principal.livemode)) throw sessionModeChanged(principal.livemode, "X-Dashboard-Mode");
  return principal;
}

/** 409 `session_mode_changed`: a page of one mode used a session another tab switched to the other, named by `param`. */
export function sessionModeChanged(livemode: boolean, param: string): AppError {
  return new AppError("session_mode_changed", `This session is now in ${modeName(livemode)} mode (switched in another tab): reload the dashboard.`, param);
}

/** Whether a request carries a session cookie at all (a cheap look before anything is parsed). */
export function hasSessionCookie(headers: IncomingHttpHeaders): boolean {
  return headers.cookie !== undefined && cookieValue(headers.cookie, SESSION_COOKIE) !== null;
}

/** The value of cookie `name` in a Cookie header, or null. */
export function cookieValue(header: string | undefined, name: string): string | null {
  if (!header) return null;
  for (const pair of header.split(";")) {
    const eq = pair.indexOf("=");
    if (eq > 0 && pair.slice(0, eq).trim() === name) return pair.slice(eq + 1).trim();
  }
  return null;
}

/** The refusal of a session request without the session's token in X-CSRF-Token. */
export function missingCsrfToken(): AppError {
  return new AppError("csrf_token_invalid", "Send the session's csrfToken in the X-CSRF-Token header.", "X-CSRF-Token");
}

/** The refusal of a session request from another origin. */
export function crossOrigin(): AppError {
  return new AppError("csrf_token_invalid", "Dashboard sessions work only from the dashboard's own origin.");
}

/**
 * Whether the request comes from the service's own pages: no Origin (not a cross-origin browser
 * request), or an Origin that is PUBLIC_URL's or the request's own host.
 */
export function fromOwnOrigin(headers: IncomingHttpHeaders, publicUrl: string): boolean {
  const origin = headers.origin;
  if (origin === undefined) return true;
  if (origin === new URL(publicUrl).origin) return true;
  try {
    return new URL(origin).host === headers.host;
  } catch {
    return false;
  }
}
