// Real subscription clients for tests: graphql-ws over a WebSocket, and GraphQL over SSE with fetch.
import { type Client, createClient } from "graphql-ws";
import WebSocket from "ws";

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

/** Waits `ms` (to show that nothing more arrives). */
export const settle = (ms = 300) => new Promise((r) => setTimeout(r, ms));
