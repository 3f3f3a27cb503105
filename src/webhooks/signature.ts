// Standard Webhooks signing (https://www.standardwebhooks.com): the receiver checks
// `webhook-signature` = "v1,<base64 HMAC-SHA256(key, "{id}.{timestamp}.{body}")>" where the key is
// the base64-decoded part of the `whsec_…` secret. During a rotation both secrets sign, space-separated,
// and any official verifier accepts the message if one of them matches.
import { createHmac, randomBytes } from "node:crypto";

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

/** base64 HMAC-SHA256 of "{id}.{timestamp}.{body}" under the secret's key. */
function signature(secret: string, id: string, timestampSeconds: number, body: string): string {
  return createHmac("sha256", Buffer.from(secret.slice(SECRET_PREFIX.length), "base64"))
    .update(`${id}.${timestampSeconds}.${body}`)
    .digest("base64");
}
