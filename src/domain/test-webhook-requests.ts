// The request contract of mock webhooks: the body of POST /v1/webhooks/test (GraphQL's sendTestWebhook
// arguments). The doors parse a request with it (parseInput) and hand the domain the typed result.
import { z } from "zod";
import { EVENT_TYPES } from "./event-requests.js";

/** The body of POST /v1/webhooks/test. */
export const testWebhookSchema = z.strictObject({ type: z.enum(EVENT_TYPES, { error: `must be one of ${EVENT_TYPES.join(", ")}` }) });

/** A mock event to send, parsed (testWebhookSchema). */
export type TestWebhookRequest = z.output<typeof testWebhookSchema>;
