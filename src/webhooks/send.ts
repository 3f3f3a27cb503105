// One webhook HTTP request: POST the event to the checked address, follow no redirect, give up
// after the timeout. Success is a 2xx; anything else (a 3xx included) is a failure to retry, and
// 410 Gone tells us to stop sending to this endpoint.
import http from "node:http";
import https from "node:https";
import type { LookupFunction } from "node:net";
import type { WebhookTarget } from "./target-guard.js";

/** How long an endpoint has to answer (.docs/webhooks.md "The request your endpoint receives"): headers and body, 15 s in all. */
export const WEBHOOK_TIMEOUT_MS = 15_000;

/** Bytes of a response body read before the rest is discarded (receivers should answer briefly). */
const MAX_RESPONSE_BYTES = 64 * 1024;

/** What one attempt came to. */
export interface AttemptResult {
  /** HTTP status, or null when no response arrived. */
  statusCode: number | null;
  latencyMs: number;
  /** Why it failed, in words for the merchant; null on success. */
  error: string | null;
  succeeded: boolean;
  /** 410 Gone: the receiver asks never to be sent anything again. */
  gone: boolean;
}

// Keep-alive pools: one TLS handshake per receiver, not per event.
const agents = {
  "http:": new http.Agent({ keepAlive: true, maxSockets: 64 }),
  "https:": new https.Agent({ keepAlive: true, maxSockets: 64 }),
};

/** POSTs `body` with `headers` to `target`, connecting only to `target.address`. */
export function postWebhook(target: WebhookTarget, headers: Record<string, string>, body: string, timeoutMs = WEBHOOK_TIMEOUT_MS): Promise<AttemptResult> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  const pinned: LookupFunction = (_hostname, options, callback) => {
    if (options.all) callback(null, [{ address: target.address, family: target.family }]);
    else callback(null, target.address, target.family);
  };
  const { url } = target;
  const transport = url.protocol === "https:" ? https : http;
  return new Promise((resolve) => {
    let settled = false;
    const finish = (result: Omit<AttemptResult, "latencyMs">) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve({ ...result, latencyMs: elapsed() });
    };
    const req = transport.request(
      url,
      {
        method: "POST",
        agent: agents[url.protocol as "http:" | "https:"],
        lookup: pinned,
        headers: { ...headers, "content-type": "application/json", "content-length": Buffer.byteLength(body), "user-agent": "Stablegate-Webhooks/1" },
      },
      (res) => {
        const statusCode = res.statusCode ?? 0;
        let read = 0;
        res.on("data", (chunk: Buffer) => {
          read += chunk.length;
          if (read > MAX_RESPONSE_BYTES) res.destroy();
        });
        const done = () => {
          const succeeded = statusCode >= 200 && statusCode < 300;
          let error: string | null = null;
          if (statusCode >= 300 && statusCode < 400) error = `redirect (${statusCode}) not followed: configure the final URL`;
          else if (!succeeded) error = `HTTP ${statusCode}`;
          finish({ statusCode, error, succeeded, gone: statusCode === 410 });
        };
        res.on("end", done);
        // A body cut short after the status arrived still carries the receiver's answer.
        res.on("close", done);
        res.on("error", () => {});
      },
    );
    const timer = setTimeout(() => {
      finish({ statusCode: null, error: `no answer within ${timeoutMs / 1000} s`, succeeded: false, gone: false });
      req.destroy();
    }, timeoutMs);
    req.on("error", (e: NodeJS.ErrnoException) =>
      finish({ statusCode: null, error: e.code ? `${e.code}: ${e.message}` : e.message, succeeded: false, gone: false }),
    );
    req.end(body);
  });
}
