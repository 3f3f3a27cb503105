// One webhook HTTP request: POST the event to the checked address, follow no redirect, give up
// after the timeout. Success is a 2xx; anything else (a 3xx included) is a failure to retry, and
// 410 Gone tells us to stop sending to this endpoint.
import http from "node:http";
import https from "node:https";
import type { LookupFunction } from "node:net";
import { StringDecoder } from "node:string_decoder";
import type { WebhookTarget } from "./target-guard.js";

/** How long an endpoint has to answer (.docs/webhooks.md "The request your endpoint receives"): headers and body, 15 s in all. */
export const WEBHOOK_TIMEOUT_MS = 15_000;

/** Bytes of a response body read before the rest is discarded (receivers should answer briefly). */
const MAX_RESPONSE_BYTES = 64 * 1024;

/** Bytes of a response body kept with the attempt, for the merchant to read why their endpoint refused. */
export const KEPT_RESPONSE_BYTES = 2048;

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
  /** The first 2 KB of the response body as text (a character cut at the end left out); null when no response arrived. */
  responseBody: string | null;
}

/** Keeps the first KEPT_RESPONSE_BYTES of a body as it streams in, never more in memory. */
class BodyHead {
  private readonly decoder = new StringDecoder("utf8");
  private text = "";
  private kept = 0;

  add(chunk: Buffer): void {
    if (this.kept >= KEPT_RESPONSE_BYTES) return;
    const part = chunk.subarray(0, KEPT_RESPONSE_BYTES - this.kept);
    this.kept += part.length;
    // The decoder holds back a character cut at the 2 KB edge rather than storing half of it.
    this.text += this.decoder.write(part);
  }

  /** The text kept, without NUL characters (a text column refuses them). */
  value(): string {
    return this.text.replaceAll("\u0000", "");
  }
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
        const head = new BodyHead();
        let read = 0;
        res.on("data", (chunk: Buffer) => {
          head.add(chunk);
          read += chunk.length;
          if (read > MAX_RESPONSE_BYTES) res.destroy();
        });
        const done = () => {
          const succeeded = statusCode >= 200 && statusCode < 300;
          let error: string | null = null;
          if (statusCode >= 300 && statusCode < 400) error = `redirect (${statusCode}) not followed: configure the final URL`;
          else if (!succeeded) error = `HTTP ${statusCode}`;
          finish({ statusCode, error, succeeded, gone: statusCode === 410, responseBody: head.value() });
        };
        res.on("end", done);
        // A body cut short after the status arrived still carries the receiver's answer.
        res.on("close", done);
        res.on("error", () => {});
      },
    );
    const timer = setTimeout(() => {
      finish({ statusCode: null, error: `no answer within ${timeoutMs / 1000} s`, succeeded: false, gone: false, responseBody: null });
      req.destroy();
    }, timeoutMs);
    req.on("error", (e: NodeJS.ErrnoException) =>
      finish({ statusCode: null, error: e.code ? `${e.code}: ${e.message}` : e.message, succeeded: false, gone: false, responseBody: null }),
    );
    req.end(body);
  });
}
