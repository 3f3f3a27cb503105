// The urql client: queries and mutations over HTTP, subscriptions over graphql-ws, both carrying the
// session's CSRF token and the mode this page shows (the cookie goes along by itself, same origin only).
// Operations go by hash alone: in production the server runs a session's operations from the build's
// manifest only (src/graphql/persisted.ts).
import { Client, cacheExchange, fetchExchange, makeOperation, mapExchange, type PersistedDocument, subscriptionExchange } from "@urql/core";
import { createClient as createWsClient } from "graphql-ws";
import type { Session } from "./session.js";

/** Error codes after which the page must read its session again: ended, or switched to the other mode elsewhere. */
const SESSION_CHANGED = new Set(["session_invalid", "session_mode_changed"]);

/**
 * A client for one session in one mode; `onSessionChanged` runs when the server says the session
 * has ended or is now in the other mode.
 */
export function createClient(session: Session, onSessionChanged: () => void): { client: Client; close: () => void } {
  const ws = createWsClient({
    url: `${location.protocol === "https:" ? "wss" : "ws"}://${location.host}/graphql`,
    connectionParams: { "X-CSRF-Token": session.csrfToken, "X-Dashboard-Mode": session.mode },
    // A refused or signed-out session is closed with 4403: no point retrying it.
    shouldRetry: (e) => !(e && typeof e === "object" && "code" in e && (e as CloseEvent).code === 4403),
    retryAttempts: 10,
    on: { closed: (e) => (e as CloseEvent).code === 4403 && onSessionChanged() },
  });
  const client = new Client({
    url: "/graphql",
    exchanges: [
      // An ended session (signed out elsewhere, idle too long) goes back to sign-in; a mode switched
      // in another tab reloads this one in that mode.
      mapExchange({ onError: (error) => error.graphQLErrors.some((e) => SESSION_CHANGED.has(String(e.extensions?.code))) && onSessionChanged() }),
      cacheExchange,
      // The build made each of the documents a persisted one carrying its hash: send the hash
      // (extensions.persistedQuery), and urql leaves the text out.
      mapExchange({
        onOperation: (operation) => {
          const hash = (operation.query as PersistedDocument).documentId;
          if (hash)
            return makeOperation(operation.kind, { ...operation, extensions: { ...operation.extensions, persistedQuery: { version: 1, sha256Hash: hash } } });
        },
      }),
      fetchExchange,
      subscriptionExchange({
        forwardSubscription: (request) => ({
          subscribe: (sink) => ({ unsubscribe: ws.subscribe({ ...request, query: request.query ?? "" }, sink) }),
        }),
      }),
    ],
    fetchOptions: { credentials: "same-origin", headers: { "x-csrf-token": session.csrfToken, "x-dashboard-mode": session.mode } },
    requestPolicy: "cache-and-network",
  });
  return { client, close: () => void ws.dispose() };
}
