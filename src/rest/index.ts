// The REST door (/v1): the plumbing every route shares (keys, limits, idempotency), the OpenAPI
// document the routes describe themselves in and its reader at /docs, then each resource's routes. The domain does the work; these modules read the request, call it, shape the answer.
import type { FastifyInstance } from "fastify";
import type { Logger } from "pino";
import { every, type Periodic } from "../lib/periodic.js";
import { balanceRoutes } from "./balance.js";
import { chargeRoutes } from "./charges.js";
import { customerRoutes } from "./customers.js";
import { emailRoutes } from "./emails.js";
import { eventRoutes } from "./events.js";
import { docsRoutes } from "./docs.js";
import { IdempotencyStore } from "./idempotency.js";
import { invoiceRoutes } from "./invoices.js";
import { ApiDocument, openApiRoute } from "./openapi.js";
import { installApiPlumbing, type RestDeps } from "./plumbing.js";
import { paymentLinkRoutes } from "./payment-links.js";
import { planRoutes } from "./plans.js";
import { publicRoutes } from "./public.js";
import { refundRoutes } from "./refunds.js";
import { subscriptionRoutes } from "./subscriptions.js";
import { testHelperRoutes } from "./test-helpers.js";
import { webhookEndpointRoutes } from "./webhook-endpoints.js";
import { x402Routes } from "./x402.js";

/** Idempotency keys are kept 24 hours; an hourly sweep removes the older ones. */
const PRUNE_INTERVAL_MS = 60 * 60 * 1000;

/** Mounts /v1 on `server`; the returned task prunes expired idempotency keys until it is stopped. */
export function mountRest(server: FastifyInstance, deps: Omit<RestDeps, "idempotency"> & { logger: Logger; publicUrl: string }): Periodic {
  const idempotency = new IdempotencyStore(deps.prisma);
  const rest = { ...deps, idempotency };
  installApiPlumbing(server, rest);
  // Before the routes: it records each as it is registered.
  openApiRoute(server, new ApiDocument(server), deps.publicUrl);
  docsRoutes(server, deps.publicUrl);
  customerRoutes(server, rest);
  chargeRoutes(server, rest);
  eventRoutes(server, rest);
  webhookEndpointRoutes(server, rest);
  publicRoutes(server, rest);
  refundRoutes(server, rest);
  balanceRoutes(server, rest);
  invoiceRoutes(server, rest);
  paymentLinkRoutes(server, rest);
  planRoutes(server, rest);
  subscriptionRoutes(server, rest);
  testHelperRoutes(server, rest);
  emailRoutes(server, rest);
  x402Routes(server, rest);
  const warn = (err: unknown) => deps.logger.warn({ err }, "idempotency prune failed");
  return every(PRUNE_INTERVAL_MS, () => idempotency.prune(), warn, { firstNow: false });
}
