// Real subscription clients for tests: graphql-ws over a WebSocket, and GraphQL over SSE with fetch.
import { type Client, createClient } from "graphql-ws";
import WebSocket from "ws";
import { channel, type PubSub } from "../../src/realtime/pubsub.js";
import { until } from "./wait.js";

/** What a subscription received so far, and a way to wait for more. */
export interface Received<T = any> {
  values: T[];
  errors: unknown[];
  completed: boolean;
  /** Resolves once `count` values arrived (or fails after `timeoutMs`), with all of them. */
  waitFor(count: number, timeoutMs?: number): Promise<T[]>;
  /** Resolves once the subscription ended (completed or errored). */
  ended(timeoutMs?: number): Promise<void>;
  stop(): void;
}

function received<T>(stop: () => void): Received<T> & { push(v: T): void; fail(e: unknown): void; end(): void } {
  const waiters = new Set<() => void>();
  const wake = () => waiters.forEach((w) => w());
  const until = (test: () => boolean, timeoutMs: number, what: () => string) =>
    new Promise<void>((resolve, reject) => {
      if (test()) return resolve();
      const check = () => {
        if (!test()) return;
        clearTimeout(timer);
        waiters.delete(check);
        resolve();
      };
      const timer = setTimeout(() => {
        waiters.delete(check);
        reject(new Error(`timed out: ${what()}`));
      }, timeoutMs);
      waiters.add(check);
    });
  const r = {
    values: [] as T[],
    errors: [] as unknown[],
    completed: false,
    push(v: T) {
      r.values.push(v);
      wake();
    },
    fail(e: unknown) {
      r.errors.push(e);
      r.completed = true;
      wake();
    },
    end() {
      r.completed = true;
      wake();
    },
    async waitFor(count: number, timeoutMs = 10_000) {
      await until(
        () => r.values.length >= count,
        timeoutMs,
        () => `${count} values expected, got ${JSON.stringify(r.values)} errors ${JSON.stringify(r.errors)}`,
      );
      return r.values;
    },
    ended: (timeoutMs = 10_000) =>
      until(
        () => r.completed,
        timeoutMs,
        () => "subscription did not end",
      ),
    stop,
  };
  return r;
}

/** A graphql-ws client for `baseUrl`'s /graphql; `key` goes in connectionParams, `headers` on the upgrade request. Closes are recorded. */
export function wsClient(
  baseUrl: string,
  key?: string,
  headers?: Record<string, string>,
  params?: Record<string, string>,
): Client & { closes: { code: number; reason: string }[] } {
  const closes: { code: number; reason: string }[] = [];
  const client = createClient({
    url: `${baseUrl.replace(/^http/, "ws")}/graphql`,
    webSocketImpl: headers
      ? class extends WebSocket {
          constructor(url: string, protocols?: string | string[]) {
            super(url, protocols, { headers });
          }
        }
      : WebSocket,
    connectionParams: params ?? (key ? { "X-API-Key": key } : undefined),
    retryAttempts: 0,
    lazy: false,
    // Closes are recorded below and asserted by the tests; the default logs them to stderr.
    onNonLazyError: () => {},
    on: { closed: (e) => closes.push({ code: (e as { code: number }).code, reason: String((e as { reason: string }).reason) }) },
  });
  return Object.assign(client, { closes });
}

/** Starts a subscription on `client`; values are the `data` of each result (errors are recorded). */
export function subscribe<T = any>(client: Client, query: string, variables: Record<string, unknown> = {}): Received<T> {
  let dispose = () => {};
  const r = received<T>(() => dispose());
  dispose = client.subscribe<T>(
    { query, variables },
    {
      next: (result) => (result.errors ? r.fail(result.errors) : r.push(result.data as T)),
      error: (e) => r.fail(e),
      complete: () => r.end(),
    },
  );
  return r;
}

/** Subscribes over SSE (one HTTP request, "distinct connections" mode) with `key` in X-API-Key, plus `headers`. */
export function sseSubscribe<T = any>(
  baseUrl: string,
  query: string,
  variables: Record<string, unknown> = {},
  key?: string,
  headers: Record<string, string> = {},
): Received<T> & { status: Promise<number> } {
  const controller = new AbortController();
  const r = received<T>(() => controller.abort());
  const status = (async () => {
    const res = await fetch(`${baseUrl}/graphql`, {
      method: "POST",
      headers: { accept: "text/event-stream", "content-type": "application/json", ...(key ? { "x-api-key": key } : {}), ...headers },
      body: JSON.stringify({ query, variables }),
      signal: controller.signal,
    });
    void (async () => {
      const decoder = new TextDecoder();
      let buffer = "";
      try {
        for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
          buffer += decoder.decode(chunk, { stream: true });
          let end: number;
          while ((end = buffer.indexOf("\n\n")) >= 0) {
            const frame = buffer.slice(0, end);
            buffer = buffer.slice(end + 2);
            const data = frame
              .split("\n")
              .filter((l) => l.startsWith("data:"))
              .map((l) => l.slice(5).trim())
              .join("");
            if (frame.startsWith("event: complete") || /^event:\s*complete/m.test(frame)) continue;
            if (!data) continue;
            const result = JSON.parse(data);
            if (result.errors) r.fail(result.errors);
            else r.push(result.data);
          }
        }
        r.end();
      } catch (e) {
        if (!controller.signal.aborted) r.fail(e);
        else r.end();
      }
    })();
    return res.status;
  })();
  return Object.assign(r, { status });
}

/**
 * Waits until the service at `baseUrl` has `count` live connections (WebSockets and SSE streams) open
 * for `caller` ("key" or "anonymous"), as its /metrics counts them: closed ones have given their slots back.
 */
export async function liveConnections(baseUrl: string, caller: "key" | "anonymous", count: number, timeoutMs = 10_000): Promise<void> {
  const open = async () => {
    const text = await (await fetch(`${baseUrl}/metrics`)).text();
    return Number(new RegExp(`^stablegate_live_connections\\{caller="${caller}"\\} (\\d+)$`, "m").exec(text)?.[1]);
  };
  let now = NaN;
  await until(`${count} live connections (${caller}) open, not ${now}`, async () => (now = await open()) === count, timeoutMs);
}

/**
 * A fence: has every open subscription of the service reload what it follows, behind whatever the
 * service published before (in-process at once; on Redis through its resync channel, on the one
 * publisher connection, so after the earlier messages). A stream that then shows a change made
 * meanwhile in the database has been sent all that was published before it.
 */
export function resyncBehind(pubsub: PubSub): void {
  if (pubsub.distributed) pubsub.publish(channel<string>("stablegate:resync"), "");
  else pubsub.resyncAll();
}

/**
 * Waits until the service has exactly `count` subscriptions open (GraphQL and SSE), each confirmed, so
 * that a change made from now on reaches them: before the test's first ones, pass 0 (earlier tests'
 * closing subscriptions gone), then the number it opened.
 */
export async function subscribed(pubsub: { subscriptions: number; confirmed(): Promise<void> }, count: number, timeoutMs = 10_000): Promise<void> {
  await until(`${count} open subscriptions (now ${pubsub.subscriptions})`, () => pubsub.subscriptions === count, timeoutMs);
  await pubsub.confirmed();
}
