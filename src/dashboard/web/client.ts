// The urql client: queries and mutations over HTTP, subscriptions over graphql-ws, both carrying the
// session's CSRF token (the cookie goes along by itself, same origin only).
import { Client, cacheExchange, fetchExchange, mapExchange, subscriptionExchange } from "@urql/core";
import { createClient as createWsClient } from "graphql-ws";

/** A client for one session; `onSignedOut` runs when the server says the session has ended. */
export function createClient(csrfToken: string, onSignedOut: () => void): { client: Client; close: () => void } {
  const ws = createWsClient({
    url: `${location.protocol === "https:" ? "wss" : "ws"}://${location.host}/graphql`,
    connectionParams: { "X-CSRF-Token": csrfToken },
    // A signed-out session is closed with 4403: no point retrying it.
    shouldRetry: (e) => !(e && typeof e === "object" && "code" in e && (e as CloseEvent).code === 4403),
    retryAttempts: 10,
    on: { closed: (e) => (e as CloseEvent).code === 4403 && onSignedOut() },
  });
  const client = new Client({
    url: "/graphql",
    exchanges: [
      // An ended session (signed out elsewhere, idle too long) sends the page back to sign-in.
      mapExchange({ onError: (error) => error.graphQLErrors.some((e) => e.extensions?.code === "session_invalid") && onSignedOut() }),
      cacheExchange,
      fetchExchange,
      subscriptionExchange({
        forwardSubscription: (request) => ({
          subscribe: (sink) => ({ unsubscribe: ws.subscribe({ ...request, query: request.query ?? "" }, sink) }),
        }),
      }),
    ],
    fetchOptions: { credentials: "same-origin", headers: { "x-csrf-token": csrfToken } },
    requestPolicy: "cache-and-network",
  });
  return { client, close: () => void ws.dispose() };
}
