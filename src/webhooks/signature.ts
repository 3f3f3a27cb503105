// Standard Webhooks signing (https://www.standardwebhooks.com): the receiver checks
// `webhook-signature` = "v1,<base64 HMAC-SHA256(key, "{id}.{timestamp}.{body}")>" where the key is
// the base64-decoded part of the `whsec_…` secret. During a rotation both secrets sign, space-separated,
// and any official verifier accepts the message if one of them matches.
import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";

const SECRET_PREFIX = "whsec_";

/** A new endpoint secret: `whsec_` + base64 of 32 random bytes. */
export function newWebhookSecret(): string {
  return SECRET_PREFIX + randomBytes(32).toString("base64");
}

/** The three Standard Webhooks headers of one attempt to send `body`, signed with each of `secrets`. */
export function webhookHeaders(id: string, timestampSeconds: number, body: string, secrets: readonly string[]): Record<string, string> {
  const signatures = secrets.map((s) => `v1,${signature(s, id, timestampSeconds, body)}`);
  return { "webhook-id": id, "webhook-timestamp": String(timestampSeconds), "webhook-signature": signatures.join(" ") };
}

/** Thrown by `verifyWebhook` when a request is not a genuine, fresh delivery. */
export class WebhookVerificationError extends Error {
  override name = "WebhookVerificationError";
}

/** How far a delivery's timestamp may be from now, either way, before it is refused as a replay. */
const TOLERANCE_SECONDS = 5 * 60;

/**
 * Checks that `body` with `headers` was signed with `secret` (one of the signatures matches) and
 * was sent within five minutes of `nowSeconds`; throws WebhookVerificationError otherwise.
 */
export function verifyWebhook(body: string, headers: Record<string, string | string[] | undefined>, secret: string, nowSeconds = Date.now() / 1000): void {
  const header = (name: string) => {
    const v = headers[name] ?? headers[name.toLowerCase()];
    return Array.isArray(v) ? v[0] : v;
  };
  const id = header("webhook-id");
  const timestamp = Number(header("webhook-timestamp"));
  const signatures = header("webhook-signature");
  if (!id || !Number.isInteger(timestamp) || !signatures) throw new WebhookVerificationError("missing webhook-id, webhook-timestamp or webhook-signature");
  if (Math.abs(nowSeconds - timestamp) > TOLERANCE_SECONDS) throw new WebhookVerificationError("the timestamp is too old or too new (a replay?)");
  if (!secret.startsWith(SECRET_PREFIX)) throw new WebhookVerificationError("the secret must be the endpoint's whsec_… secret");
  const expected = Buffer.from(signature(secret, id, timestamp, body));
  const matches = signatures.split(" ").some((s) => {
    const given = Buffer.from(s.startsWith("v1,") ? s.slice(3) : "");
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
  if (!matches) throw new WebhookVerificationError("no signature matches: wrong secret, or the body was changed");
}

/** base64 HMAC-SHA256 of "{id}.{timestamp}.{body}" under the secret's key. */
function signature(secret: string, id: string, timestampSeconds: number, body: string): string {
  return createHmac("sha256", Buffer.from(secret.slice(SECRET_PREFIX.length), "base64"))
    .update(`${id}.${timestampSeconds}.${body}`)
    .digest("base64");
}
