// The lines the CLI prints about API keys and webhook endpoints: never a secret.
import { modeName } from "../domain/scope.js";
import type { WebhookEndpoint } from "../domain/webhook-endpoints.js";

/** One line of `merchant show` per key: never the secret, its last four characters. */
export function describeKey(k: {
  id: string;
  livemode: boolean;
  last4: string;
  ipAllowlist: string[];
  expiresAt: Date | null;
  revokedAt: Date | null;
}): string {
  const only = k.ipAllowlist.length ? `  only from ${k.ipAllowlist.join(", ")}` : "";
  const state = k.revokedAt ? ` revoked ${k.revokedAt.toISOString()}` : k.expiresAt ? ` rolled, works until ${k.expiresAt.toISOString()}` : "";
  return `    ${k.id}  sk_${modeName(k.livemode)}_…${k.last4}${only}${state}`;
}

/** One line about an endpoint (never its secret). */
export function describeEndpoint(e: Omit<WebhookEndpoint, "secret" | "previousSecret">): string {
  const types = e.eventTypes.length ? e.eventTypes.join(",") : "all events";
  const state = e.disabledAt ? `disabled (${e.disabledReason ?? "by the merchant"})` : "enabled";
  return `    ${e.id}  ${modeName(e.livemode)}  ${e.url}  ${types}  ${state}`;
}
