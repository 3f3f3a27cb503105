// The receiving half of Standard Webhooks (https://www.standardwebhooks.com), as the service signs
// (src/webhooks/signature.ts): `webhook-signature` holds "v1,<base64 HMAC-SHA256(key,
// "{id}.{timestamp}.{body}")>" entries, space-separated (two during a secret's rotation), where the
// key is the base64-decoded part of the endpoint's `whsec_…` secret. It is its own copy, not an
// import of the service's module: the SDK package ships its own files and nothing of the server.
import { createHmac, timingSafeEqual } from "node:crypto";

const SECRET_PREFIX = "whsec_";

/** How far a delivery's timestamp may be from now, either way, before it is refused as a replay. */
const TOLERANCE_SECONDS = 5 * 60;

/** Thrown by `webhooks.verify` when a request is not a genuine, fresh delivery. */
export class WebhookVerificationError extends Error {
  override name = "WebhookVerificationError";
}

/**
 * Checks that `body` with `headers` was signed with `secret` (one of the signatures matches) and
 * was sent within five minutes of `nowSeconds`; throws WebhookVerificationError otherwise.
 */
export function verifySignature(body: string, headers: Record<string, string | string[] | undefined>, secret: string, nowSeconds = Date.now() / 1000): void {
  // Node gives header names in lower case; other frameworks keep the sender's case.
  const header = (name: string) => {
    const v = Object.entries(headers).find(([key]) => key.toLowerCase() === name)?.[1];
    return Array.isArray(v) ? v[0] : v;
  };
  const id = header("webhook-id");
  const timestamp = Number(header("webhook-timestamp"));
  const signatures = header("webhook-signature");
  if (!id || !Number.isInteger(timestamp) || !signatures) throw new WebhookVerificationError("missing webhook-id, webhook-timestamp or webhook-signature");
  if (Math.abs(nowSeconds - timestamp) > TOLERANCE_SECONDS) throw new WebhookVerificationError("the timestamp is too old or too new (a replay?)");
  if (!secret.startsWith(SECRET_PREFIX)) throw new WebhookVerificationError("the secret must be the endpoint's whsec_… secret");
  const expected = Buffer.from(
    createHmac("sha256", Buffer.from(secret.slice(SECRET_PREFIX.length), "base64"))
      .update(`${id}.${timestamp}.${body}`)
      .digest("base64"),
  );
  const matches = signatures.split(" ").some((s) => {
    const given = Buffer.from(s.startsWith("v1,") ? s.slice(3) : "");
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
  if (!matches) throw new WebhookVerificationError("no signature matches: wrong secret, or the body was changed");
}
