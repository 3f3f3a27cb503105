// Persisted operations: an operation named by the sha256 of its text, sent as
// extensions.persistedQuery { version: 1, sha256Hash } (Apollo's and urql's format) instead of the
// text. The dashboard's operations are hashed when it is built (.config/build-dashboard.mjs writes
// dist/dashboard/persisted-operations.json, hash → text), and the dashboard sends only hashes.
// Anyone may run those. The text of any other operation may come from an API key or from a caller
// without a credential (integrators, the hosted payment page) always, and from a dashboard session
// outside production only: in production a session runs what the dashboard runs and nothing else, so
// a page that rides the session cannot send the operations of its choice. Hashes are not learnt from
// callers (no automatic persisted queries): the manifest is the build's.
import { readFileSync } from "node:fs";
import { usePersistedOperations } from "@graphql-yoga/plugin-persisted-operations";
import { GraphQLError } from "graphql";
import type { Plugin } from "graphql-yoga";
import type { Caller } from "./context.js";

/** Where the dashboard build writes its operations, from src/graphql (tests) and dist/graphql (the built service) alike. */
const MANIFEST = new URL("../../dist/dashboard/persisted-operations.json", import.meta.url);

/** The persisted operations: sha256 (hex, of the text) → operation text. */
export type PersistedOperations = ReadonlyMap<string, string>;

/** The dashboard build's persisted operations; none before it is built (when the dashboard is not served either). */
export function loadPersistedOperations(file: URL = MANIFEST): PersistedOperations {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return new Map();
    throw e;
  }
  return new Map(Object.entries(JSON.parse(text) as Record<string, string>));
}

/** Whether `caller` may send an operation's text rather than a persisted operation's hash: all but a dashboard session in production. */
export function maySendText(caller: Caller, production: boolean): boolean {
  if (!production) return true;
  // A key wins over a cookie when a request carries both, and a cookie without the CSRF header is
  // no session's request (context.ts): the hosted payment page sends its text with the cookie.
  const session = "connection" in caller ? caller.connection?.userId !== undefined : caller.apiKey === null && caller.session?.csrfToken !== undefined;
  return !session;
}

/** The hash in a request's extensions.persistedQuery, or null. */
export function persistedHash(extensions: unknown): string | null {
  const persisted = (extensions as { persistedQuery?: { version?: unknown; sha256Hash?: unknown } } | null | undefined)?.persistedQuery;
  return persisted?.version === 1 && typeof persisted.sha256Hash === "string" ? persisted.sha256Hash : null;
}

/**
 * A hash no persisted operation has. The message is the one urql's and Apollo's persisted-query
 * clients look for (they then send the text, which an API key may).
 */
export function persistedOperationNotFound(): GraphQLError {
  return new GraphQLError("PersistedQueryNotFound", {
    extensions: { code: "PERSISTED_QUERY_NOT_FOUND", param: "extensions.persistedQuery.sha256Hash", statusCode: 400, http: { status: 400 } },
  });
}

/** Operation text from a caller that may send only hashes (Apollo Router's code for it). */
export function persistedOperationRequired(): GraphQLError {
  return new GraphQLError(
    "A dashboard session runs the dashboard's persisted operations only: send extensions.persistedQuery.sha256Hash without the query, or use an API key.",
    { extensions: { code: "PERSISTED_QUERY_ID_REQUIRED", param: "query", statusCode: 400, http: { status: 400 } } },
  );
}

/** A request with neither an operation's text nor a persisted operation's hash. */
export function operationMissing(): GraphQLError {
  return new GraphQLError("Send the operation's text as query, or a persisted operation's hash as extensions.persistedQuery.sha256Hash.", {
    extensions: { code: "parameter_missing", param: "query", statusCode: 400, http: { status: 400 } },
  });
}

/**
 * Persisted operations over HTTP and SSE: a caller that may send only hashes is refused its text
 * first, then yoga's plugin runs a hash's operation (validated and limited like any other).
 */
export function persistedOperationsPlugins(operations: PersistedOperations, production: boolean): [Plugin<{}, { caller: Caller }>, Plugin] {
  const policy: Plugin<{}, { caller: Caller }> = {
    onParams({ params, context }) {
      if (params.query && !maySendText(context.caller, production)) throw persistedOperationRequired();
    },
  };
  return [
    policy,
    usePersistedOperations({
      // Who may send text is the caller's matter, decided above; the plugin sees only the request.
      allowArbitraryOperations: true,
      extractPersistedOperationId: (params) => persistedHash(params.extensions),
      getPersistedOperation: (hash) => operations.get(hash) ?? null,
      customErrors: { notFound: () => persistedOperationNotFound(), keyNotFound: () => operationMissing() },
    }),
  ];
}

/** The text of the operation a WebSocket subscribe message names (its query, or a hash's), or the error that refuses it, as over HTTP. */
export function operationText(operations: PersistedOperations, payload: { query: string; extensions?: unknown }, textAllowed: boolean): string | GraphQLError {
  if (payload.query) return textAllowed ? payload.query : persistedOperationRequired();
  const hash = persistedHash(payload.extensions);
  if (hash === null) return operationMissing();
  return operations.get(hash) ?? persistedOperationNotFound();
}
