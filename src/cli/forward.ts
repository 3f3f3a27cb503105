// One forwarded delivery of `stablegate listen`: the event signed with the run's secret and posted
// to the local URL exactly as the dispatcher posts a real delivery (the same body, the same
// Standard Webhooks headers, content type and user agent), and the line that reports it.
import { type EventResource, webhookBody } from "../domain/events.js";
import { type AttemptResult, postWebhook } from "../webhooks/send.js";
import { webhookHeaders } from "../webhooks/signature.js";
import { checkWebhookTarget, WebhookTargetError } from "../webhooks/target-guard.js";

/** Why `url` cannot be forwarded to (not an absolute http(s) URL, or credentials in it), else null; any host is allowed, as in test mode. */
export function forwardTargetProblem(url: string): string | null {
  const parsed = URL.canParse(url) ? new URL(url) : null;
  if (!parsed || !/^https?:$/.test(parsed.protocol) || !parsed.hostname) return "must be an absolute http(s) URL, such as http://localhost:3000/webhooks";
  if (parsed.username || parsed.password) return "must not hold credentials (user:password@): the signature authenticates each delivery";
  return null;
}

/** Signs `event` with `secret` and posts it to `url`; a URL that cannot be reached is a result, not an error. */
export async function forwardEvent(event: EventResource, url: string, secret: string): Promise<AttemptResult> {
  const body = webhookBody(event);
  try {
    // Test mode's rules: http and loopback addresses are what a laptop's receiver has.
    const target = await checkWebhookTarget(url, false);
    return await postWebhook(target, webhookHeaders(event.id, Math.floor(Date.now() / 1000), body, [secret]), body);
  } catch (e) {
    if (!(e instanceof WebhookTargetError)) throw e;
    return { statusCode: null, latencyMs: 0, error: e.message, succeeded: false, gone: false, responseBody: null };
  }
}

/** The line printed for one delivery: local time, event type, id, and the receiver's status (or why none came). */
export function deliveryLine(event: Pick<EventResource, "id" | "type">, url: string, result: AttemptResult, at = new Date()): string {
  const time = at.toTimeString().slice(0, 8);
  const answer = result.statusCode === null ? `[ERR] ${result.error}` : `[${result.statusCode}]`;
  return `${time}  ${event.type.padEnd(26)} ${event.id}  ${answer} POST ${url}`;
}
