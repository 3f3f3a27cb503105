// The hosted pages, under PAYMENT_BASE_URL's path: the charge's payment page, the invoice and payment
// link pages, the refund claim page, and the subscription's checkout and manage pages. Each page's routes live in their own module; this one sets up
// what they share once: the buyer's error page for whatever fails, form posts parsed, the page's
// security headers on every answer, pages compressed for the browsers that take it, and the pages' assets.
import type { FastifyInstance } from "fastify";
import { compressPages } from "../http/compression.js";
import { type PagePolicy, securityHeaders } from "../http/security-headers.js";
import { assetRoutes } from "./asset-routes.js";
import { chargeRoutes } from "./charge-routes.js";
import { type PayContext, payContext, type PayOptions } from "./context.js";
import { invoiceRoutes } from "./invoice-routes.js";
import { refundRoutes } from "./refund-routes.js";
import { subscribeRoutes } from "./subscribe-routes.js";
import { unsubscribeRoutes } from "./unsubscribe-routes.js";

export type { PayOptions } from "./context.js";

/** Registers the hosted pages under the path of `PAYMENT_BASE_URL`. */
export function mountPay(app: FastifyInstance, options: PayOptions): void {
  const context = payContext(options);
  // The payment page's script follows the charge over /graphql (on PUBLIC_URL); the shop may frame it.
  const paymentPage: PagePolicy = {
    script: { connectTo: [new URL(options.publicUrl).origin] },
    frameAncestors: options.frameAncestors,
    referrer: "no-referrer",
  };
  // The subscription's pages call only their own origin (for what to sign, and to post it); never framed.
  const subscriptionPages: PagePolicy = { script: { connectTo: [] }, frameAncestors: [], referrer: "no-referrer" };
  // The other pages run no script, post only to themselves and are never framed.
  const scriptless: PagePolicy = { script: null, frameAncestors: [], referrer: "no-referrer" };
  pages(app, context, scriptless, assetRoutes);
  pages(app, context, paymentPage, chargeRoutes);
  pages(app, context, scriptless, invoiceRoutes);
  pages(app, context, scriptless, refundRoutes);
  pages(app, context, scriptless, unsubscribeRoutes);
  pages(app, context, subscriptionPages, subscribeRoutes);
}

/** Registers `routes` in a scope of their own, answering under `policy`. */
function pages(app: FastifyInstance, context: PayContext, policy: PagePolicy, routes: (scope: FastifyInstance, context: PayContext) => void): void {
  const headers = securityHeaders(policy);
  app.register(async (scope) => {
    scope.setErrorHandler((err, req, reply) => context.failure(req, reply, err));
    // The pages' forms post plain HTML form fields.
    scope.addContentTypeParser("application/x-www-form-urlencoded", { parseAs: "string" }, (_req, body, done) => {
      done(null, Object.fromEntries(new URLSearchParams(body as string)));
    });
    scope.addHook("onSend", async (_req, reply) => {
      reply.headers(headers);
    });
    compressPages(scope);
    routes(scope, context);
  });
}
