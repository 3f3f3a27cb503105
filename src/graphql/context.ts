// Per-request GraphQL context: the database, the live feed and the caller, resolved once (from
// X-API-Key or the dashboard's session cookie over HTTP and SSE, from the connection's credential
// over WebSocket).

import type { AuthorizationReaders } from "../domain/authorizations.js";
import type { Prisma } from "../db/client.js";
import type { ChainSet } from "../chain/chains.js";
import type { ApiKeyAuthenticator } from "../domain/api-keys.js";
import type { ChargeSettings } from "../domain/charges/settings.js";
import type { Config } from "../config.js";
import { AppError } from "../domain/errors.js";
import { authenticateFrom } from "../http/callers.js";
import type { RateLimiter } from "../http/rate-limit.js";
import type { Role } from "../domain/permissions.js";
import type { Actor } from "../domain/security-events.js";
import type { Principal, Scope } from "../domain/scope.js";
import type { LiveCharges } from "../realtime/charges.js";
import { authenticateSessionRequest, missingCsrfToken, type SessionCredentials } from "../http/session-cookie.js";

export interface GraphQLContext {
  prisma: Prisma;
  charges: ChargeSettings;
  chains: ChainSet;
  live: LiveCharges;
  /** API key lookups: a key revoked or rolled here is forgotten at once (other processes within its cache's TTL). */
  authenticator: ApiKeyAuthenticator;
  /** The key's or session's principal, or null for an anonymous request. */
  principal: Principal | null;
  /** The client's address: the budget of an anonymous caller. */
  address: string;
  /** The client's User-Agent header, for the security history. */
  userAgent: string | null;
  /** The charge whose hosted page sent this request (a valid page token), or null. */
  pageCharge: string | null;
  /** Budgets beyond the request's own (payments without gas per address). */
  rateLimiter: RateLimiter;
  /** Each chain's USDC, as EIP-3009 authorizations are checked against it. */
  authorizations: AuthorizationReaders;
  /** Whether and from where emails are sent (SMTP_URL, EMAIL_FROM): the dashboard says when they are not. */
  email: EmailSettings;
  /** The caller's merchant and mode; throws the 401 AppError when the request has no valid key. */
  scope(): Scope;
  /**
   * The caller's scope and user when it is a dashboard session: the merchant's settings are a
   * session's alone. 403 `session_required` for an API key, the 401 without either.
   */
  session(): Scope & { userId: string; sessionId: string; role: Role };
  /** Who acts, as the security history records it: the session's user, address and browser (throws as session() does). */
  actor(): Actor;
  /** Why a key or session sent with the request was refused (thrown by scope() and session()), or null. */
  refusal: unknown;
  /** "ws" for an operation on a WebSocket connection (whose close ends its subscriptions). */
  transport: "http" | "ws";
  /** Set when a subscription over HTTP (SSE) starts: aborting it ends the subscription. */
  signal?: AbortSignal;
}

/** What the context is built from: the services, and the caller as the transport knows it. */
export interface ContextDeps {
  prisma: Prisma;
  authenticator: ApiKeyAuthenticator;
  charges: ChargeSettings;
  chains: ChainSet;
  live: LiveCharges;
  rateLimiter: RateLimiter;
  authorizations: AuthorizationReaders;
  email: EmailSettings;
}

/** What GraphQL reads of the email settings. */
export type EmailSettings = Pick<Config["email"], "smtpUrl" | "from">;

/**
 * The caller of one operation: an X-API-Key or a session cookie to check (a key wins when both come),
 * or a WebSocket connection's principal checked when it opened.
 */
export type Caller = ({ apiKey: string | null; session: SessionCredentials | null; pageCharge?: string | null } | { connection: Principal | null }) & {
  address: string;
  userAgent?: string | null;
};

/** Builds the context of one operation. */
export async function createContext(deps: ContextDeps, caller: Caller): Promise<GraphQLContext> {
  let principal: Principal | null = null;
  let failure: unknown = null;
  if ("connection" in caller) {
    // Its missing key is reported when an operation needs one (connectionWithoutKey): an idle
    // subscription holds no error and stack of its own.
    principal = caller.connection;
  } else {
    try {
      const { apiKey, session } = caller;
      if (apiKey === null && session && session.csrfToken === undefined) {
        // The cookie rides along on every same-origin request, the hosted payment page's public
        // subscription included: without the CSRF header it is no attempt to use the session (no
        // failure counted), and only operations that need a merchant are refused, as the dashboard
        // sends the header on every operation.
        failure = missingCsrfToken();
      } else {
        const attempt =
          apiKey === null && session
            ? () => authenticateSessionRequest(deps.prisma, session, true)
            : () => deps.authenticator.authenticate(apiKey ?? undefined, caller.address);
        principal = await authenticateFrom(deps.rateLimiter, caller.address, attempt);
      }
    } catch (e) {
      // Only operations that need a merchant fail; public ones still run.
      if (!(e instanceof AppError)) throw e;
      failure = e;
    }
  }
  return {
    prisma: deps.prisma,
    charges: deps.charges,
    chains: deps.chains,
    live: deps.live,
    authenticator: deps.authenticator,
    principal,
    address: caller.address,
    userAgent: caller.userAgent ?? null,
    pageCharge: ("pageCharge" in caller && caller.pageCharge) || null,
    rateLimiter: deps.rateLimiter,
    authorizations: deps.authorizations,
    email: deps.email,
    transport: "connection" in caller ? "ws" : "http",
    refusal: failure,
    scope,
    session,
    actor,
  };
}

// The context's methods, shared by every operation (they read the context they are called on): an
// idle subscription holds no closures of its own.

function scope(this: GraphQLContext): Scope {
  const { principal } = this;
  if (!principal) throw this.refusal ?? connectionWithoutKey();
  return { merchantId: principal.merchantId, livemode: principal.livemode };
}

function session(this: GraphQLContext): Scope & { userId: string; sessionId: string; role: Role } {
  const { principal } = this;
  if (!principal) throw this.refusal ?? connectionWithoutKey();
  if (principal.userId === undefined) {
    throw new AppError("session_required", "Only a dashboard session may change the merchant's settings, API keys and users: sign in to the dashboard.");
  }
  return {
    merchantId: principal.merchantId,
    livemode: principal.livemode,
    userId: principal.userId,
    sessionId: principal.credentialId,
    role: principal.role ?? "viewer",
  };
}

function actor(this: GraphQLContext): Actor {
  return { userId: this.session().userId, email: null, ip: this.address, userAgent: this.userAgent };
}

/**
 * The initial context of a WebSocket operation, with a slot for every field `createContext` adds.
 * Envelop copies the context into this object: without the slots, the copy would add more
 * properties than V8 keeps fast and turn it into a dictionary, held for as long as a subscription
 * runs (about 1 KB each).
 */
export function contextSeed(params: unknown, caller: Caller): Record<keyof GraphQLContext, undefined> & { params: unknown; caller: Caller } {
  return {
    params,
    caller,
    prisma: undefined,
    charges: undefined,
    chains: undefined,
    live: undefined,
    authenticator: undefined,
    principal: undefined,
    address: undefined,
    userAgent: undefined,
    pageCharge: undefined,
    rateLimiter: undefined,
    authorizations: undefined,
    email: undefined,
    transport: undefined,
    refusal: undefined,
    scope: undefined,
    session: undefined,
    actor: undefined,
    signal: undefined,
  };
}

/** The 401 of an operation that needs a merchant on a connection opened without a key. */
function connectionWithoutKey(): AppError {
  return new AppError("api_key_missing", 'This connection has no API key. Send { "X-API-Key": "sk_…" } as connectionParams.');
}
