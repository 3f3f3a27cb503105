// The subscription's buyer pages: the checkout (the subscription id is the capability) with the two
// JSON calls its script makes (what to sign, the signed authorization) and the status it follows,
// and the manage page (the manageToken is the capability) with its cancel form. Rate-limited like
// the other hosted pages: reads count as "read", the posts as "create", per client address.
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { checkoutReaders } from "../chain/permits.js";
import { authorizeSubscription, cancelFromManagePage, manageView, subscriptionAuthorization, subscriptionView } from "../domain/subscription-checkout.js";
import { authorizationQuerySchema, authorizeSchema, manageCancelSchema } from "../domain/subscription-requests.js";
import { parseInput } from "../domain/validation.js";
import { errorBody, toAppError, statusOf } from "../http/errors.js";
import { buyerNotice } from "./buyer-error.js";
import { ACTING, html, type IdParams, OPEN, type PayContext } from "./context.js";
import { renderCheckoutPage, renderManagePage } from "./subscribe-page.js";

type WithToken = IdParams & { Querystring: { token?: string } };
type CancelForm = IdParams & { Body: Record<string, string> | undefined };

/** Registers the checkout and manage pages, their JSON calls and the cancel form. */
export function subscribeRoutes(scope: FastifyInstance, { options, basePath, failure }: PayContext): void {
  const { prisma, chains } = options;
  const readers = checkoutReaders(chains);
  const settings = { paymentBaseUrl: options.charges.paymentBaseUrl };
  const at = `${basePath}/subscribe/:id`;

  /** A JSON call's refusal as the API words it (the script shows the message; `param` names the field). */
  const refuse = (req: FastifyRequest, reply: FastifyReply, err: unknown) => {
    const e = toAppError(err);
    const status = statusOf(e);
    if (status >= 500) req.log.error({ err }, "subscription checkout failed");
    else req.log.info({ code: e.code, param: e.param, reason: e.message }, "subscription checkout refused a buyer");
    for (const [name, value] of Object.entries(e.headers)) reply.header(name, value);
    return reply
      .code(status)
      .header("Cache-Control", "no-store")
      .send(errorBody(e, req.id, options.publicUrl));
  };

  scope.get<IdParams>(at, OPEN, async (req, reply) => {
    try {
      return html(reply, 200, renderCheckoutPage(await subscriptionView(prisma, chains, req.params.id), basePath));
    } catch (e) {
      return failure(req, reply, e);
    }
  });

  scope.get<IdParams & { Querystring: Record<string, string> }>(`${at}/authorization`, OPEN, async (req, reply) => {
    try {
      const body = await subscriptionAuthorization(prisma, chains, readers, req.params.id, parseInput(authorizationQuerySchema, req.query));
      return reply.header("Cache-Control", "no-store").send(body);
    } catch (e) {
      return refuse(req, reply, e);
    }
  });

  scope.post<IdParams>(`${at}/authorize`, ACTING, async (req, reply) => {
    try {
      const sub = await authorizeSubscription(prisma, chains, readers, req.params.id, parseInput(authorizeSchema, req.body));
      return reply.code(202).header("Cache-Control", "no-store").send({ status: sub.status, authorized: true });
    } catch (e) {
      return refuse(req, reply, e);
    }
  });

  scope.get<IdParams>(`${at}/status`, OPEN, async (req, reply) => {
    try {
      const view = await subscriptionView(prisma, chains, req.params.id);
      const s = view.subscription;
      return reply.header("Cache-Control", "no-store").send({ status: s.status, authorized: s.permission !== null, failure: view.failure });
    } catch (e) {
      return refuse(req, reply, e);
    }
  });

  scope.get<WithToken>(`${at}/manage`, OPEN, async (req, reply) => {
    try {
      const token = String(req.query.token ?? "");
      const view = await manageView(prisma, chains, req.params.id, token);
      const done = (req.query as { done?: string }).done;
      const notice =
        done === "now"
          ? "Your subscription is canceled. Nothing more will be charged."
          : done === "period_end"
            ? "Your subscription will end at the end of this period. Nothing more will be charged after that."
            : null;
      return html(reply, 200, renderManagePage(view, token, basePath, notice));
    } catch (e) {
      return failure(req, reply, e);
    }
  });

  scope.post<CancelForm>(`${at}/manage/cancel`, ACTING, async (req, reply) => {
    const token = String(req.body?.token ?? "");
    const back = (done: string | null) =>
      `${basePath}/subscribe/${encodeURIComponent(req.params.id)}/manage?token=${encodeURIComponent(token)}${done ? `&done=${done}` : ""}`;
    try {
      const sub = await cancelFromManagePage(prisma, req.params.id, parseInput(manageCancelSchema, req.body), settings);
      // 303: a reload shows the page, it does not post again.
      return reply
        .code(303)
        .header("Cache-Control", "no-store")
        .redirect(back(sub.status === "CANCELED" ? "now" : "period_end"));
    } catch (e) {
      const err = toAppError(e);
      // Ended meanwhile (another tab, the merchant): the page, as it now is, says so.
      if (err.code !== "subscription_not_cancelable") return failure(req, reply, e);
      const view = await manageView(prisma, chains, req.params.id, token).catch(() => null);
      if (!view) return failure(req, reply, e);
      return html(reply, 409, renderManagePage(view, token, basePath, buyerNotice(err, "subscription", view.merchantName)));
    }
  });
}
