// The hosted payment page's routes, under PAYMENT_BASE_URL's path: the page, the chain pick and the
// test-mode payment as plain HTML forms (they work without JavaScript), and the page's two assets.
// The charge id is the capability; no API key is ever involved or shown. Whatever fails under this
// path, the buyer gets the one error page of buyer-error.ts, never the API's JSON error body.
import { readFileSync } from "node:fs";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { ChainSet } from "../chain/chains.js";
import { type DevnetInfo, payFromTestWallet } from "../chain/devnet.js";
import type { Prisma } from "../db/client.js";
import type { AuthorizationReaders } from "../domain/authorizations.js";
import { selectChain } from "../domain/chain-selection.js";
import { gaslessOffer } from "../domain/charge-authorizations.js";
import { getPublicCharge, sellerName } from "../domain/payment-session.js";
import type { ChargeSettings } from "../domain/charges.js";
import { AppError } from "../domain/errors.js";
import { parseAmount } from "../domain/money.js";
import { publicInvoiceView, payInvoice } from "../domain/invoices.js";
import { activePaymentLink, chargeFromPaymentLink } from "../domain/payment-links.js";
import { claimRefund, claimView } from "../domain/refunds.js";
import type { RateLimiter } from "../http/rate-limit.js";
import { invoicePdf, renderInvoicePage, sendPdf, renderPaymentLinkPage } from "./invoice-page.js";
import { statusOf, toAppError } from "../http/errors.js";
import { type BuyerTopic, buyerErrorPage, buyerNotice } from "./buyer-error.js";
import { offersTestWallet, renderPaymentPage } from "./page.js";
import { type ClaimChain, renderClaimPage, renderClaimStatus } from "./refund-page.js";

export interface PayDeps {
  prisma: Prisma;
  chains: ChainSet;
  charges: ChargeSettings;
  /** PUBLIC_URL: where the page's script finds /graphql. */
  publicUrl: string;
  /** The devnet, when this process runs it: enables "Pay with test wallet" on test charges. */
  devnet: DevnetInfo | null;
  /** Origins that may show the page in a frame (PAYMENT_FRAME_ANCESTORS); none when empty. */
  frameAncestors: string[];
  /** Counts the charges each address makes from a payment link. */
  rateLimiter: RateLimiter;
  /** Each chain's USDC: its EIP-712 domain, for the page's payment without gas. */
  authorizations: AuthorizationReaders;
}

const ASSETS = new URL("../../src/pay/assets/", import.meta.url);

type IdParams = { Params: { id: string } };

/** Registers the hosted page under the path of `PAYMENT_BASE_URL`. */
export function payRoutes(app: FastifyInstance, deps: PayDeps): void {
  const pageUrl = new URL(deps.charges.paymentBaseUrl);
  const basePath = pageUrl.pathname.replace(/\/+$/, "");
  // Same origin (the default): a relative URL, right whatever host name or port the buyer used.
  const graphqlUrl = pageUrl.origin === new URL(deps.publicUrl).origin ? "/graphql" : `${deps.publicUrl}/graphql`;
  const links = { basePath, graphqlUrl, testWallet: deps.devnet !== null };
  const csp = [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data:",
    `connect-src 'self' ${new URL(deps.publicUrl).origin}`,
    "form-action 'self'",
    "base-uri 'none'",
    `frame-ancestors ${deps.frameAncestors.length > 0 ? deps.frameAncestors.join(" ") : "'none'"}`,
  ].join("; ");
  // The claim page runs no script and posts only to itself.
  const claimCsp = "default-src 'none'; style-src 'self'; img-src 'self' data:; form-action 'self'; base-uri 'none'; frame-ancestors 'none'";
  const script = readFileSync(new URL("pay.js", ASSETS));
  const paying = new Set<string>();
  const style = readFileSync(new URL("pay.css", ASSETS));

  app.register(async (scope) => {
    scope.setErrorHandler((err, req, reply) => failure(req, reply, err));
    scope.addContentTypeParser("application/x-www-form-urlencoded", { parseAs: "string" }, (_req, body, done) => {
      done(null, Object.fromEntries(new URLSearchParams(body as string)));
    });
    scope.addHook("onSend", async (_req, reply) => {
      reply.header("Content-Security-Policy", csp);
      // Older browsers know only this header, which cannot name origins: sent when no one may frame the page.
      if (deps.frameAncestors.length === 0) reply.header("X-Frame-Options", "DENY");
      reply.header("X-Content-Type-Options", "nosniff");
      reply.header("Referrer-Policy", "no-referrer");
    });

    // Every page request counts against the client address's public budget, like /v1/public.
    const open = { config: { group: "read", auth: "public" } } as const;
    const acting = { config: { group: "create", auth: "public" } } as const;
    scope.get(`${basePath}/assets/pay.js`, open, async (_req, reply) =>
      reply.header("Cache-Control", "public, max-age=300").type("text/javascript; charset=utf-8").send(script),
    );
    scope.get(`${basePath}/assets/pay.css`, open, async (_req, reply) =>
      reply.header("Cache-Control", "public, max-age=300").type("text/css; charset=utf-8").send(style),
    );
    // A mistyped or cut-off link under the hosted pages' path (at the root, the API's own 404 answers).
    if (basePath !== "") {
      scope.get(`${basePath}/*`, open, async (req, reply) =>
        failure(req, reply, new AppError("resource_missing", `No hosted page at ${req.url.split("?", 1)[0]}`)),
      );
    }

    scope.get<IdParams>(`${basePath}/:id`, open, async (req, reply) => {
      try {
        const session = await getPublicCharge(deps.prisma, deps.chains, req.params.id);
        const gasless = await gaslessOffer(deps.prisma, deps.chains, deps.authorizations, deps.charges, session);
        return html(reply, 200, renderPaymentPage(session, links, gasless));
      } catch (e) {
        return failure(req, reply, e);
      }
    });

    scope.post<IdParams & { Body: Record<string, string> | undefined }>(`${basePath}/:id/chain`, acting, async (req, reply) => {
      try {
        const chainId = Number(req.body?.chainId);
        await selectChain(deps.prisma, deps.chains, deps.charges, req.params.id, { chainId: Number.isInteger(chainId) ? chainId : req.body?.chainId });
      } catch (e) {
        // Already picked or no longer payable: the page itself shows the charge as it now is.
        if (!(e instanceof AppError) || statusOf(e) !== 409) return failure(req, reply, e);
      }
      return backToPage(reply, req.params.id);
    });

    scope.post<IdParams>(`${basePath}/:id/test-payment`, acting, async (req, reply) => {
      const id = req.params.id;
      // One test payment per charge at a time: a double click must not pay twice.
      if (paying.has(id)) return failure(req, reply, new AppError("charge_not_payable", "A test payment for this charge is already being sent."));
      paying.add(id);
      try {
        const session = await getPublicCharge(deps.prisma, deps.chains, id);
        const units = parseAmount(session.amountRemaining) ?? 0n;
        if (!deps.devnet || !offersTestWallet(session, true) || session.status !== "PENDING" || units === 0n) {
          throw new AppError("charge_not_payable", "The test wallet pays only pending test-mode charges on the local devnet.");
        }
        if (session.amountPending !== "0.00") throw new AppError("charge_not_payable", "A payment is still being confirmed; wait for it first.");
        await payFromTestWallet(deps.devnet, session.cloneAddress!, units);
      } catch (e) {
        return failure(req, reply, e);
      } finally {
        paying.delete(id);
      }
      return backToPage(reply, req.params.id);
    });
  });

  // The refund claim page: the token in the link is the buyer's only credential.
  app.register(async (scope) => {
    scope.setErrorHandler((err, req, reply) => failure(req, reply, err));
    scope.addContentTypeParser("application/x-www-form-urlencoded", { parseAs: "string" }, (_req, body, done) => {
      done(null, Object.fromEntries(new URLSearchParams(body as string)));
    });
    scope.addHook("onSend", async (_req, reply) => {
      reply.header("Content-Security-Policy", claimCsp).header("X-Frame-Options", "DENY").header("X-Content-Type-Options", "nosniff");
      reply.header("Referrer-Policy", "no-referrer");
    });
    const open = { config: { group: "read", auth: "public" } } as const;
    const acting = { config: { group: "create", auth: "public" } } as const;
    const chainOf = (chainId: number): ClaimChain => {
      const chain = deps.chains.get(chainId);
      return { name: chain?.name ?? `chain ${chainId}`, explorer: chain?.explorer ?? null };
    };
    const chainName = (chainId: number) => chainOf(chainId).name;
    type Claim = IdParams & { Querystring: { token?: string }; Body: Record<string, string> | undefined };

    scope.get<Claim>(`${basePath}/refunds/:id`, open, async (req, reply) => {
      try {
        const token = String(req.query.token ?? "");
        const view = await claimView(deps.prisma, req.params.id, token);
        // Once the address is given (or the refund cancelled), the same link tells the buyer where the refund stands.
        const page =
          view.refund.status === "AWAITING_ADDRESS"
            ? renderClaimPage(view, chainName(view.refund.chainId), token, basePath)
            : renderClaimStatus(view, chainOf(view.refund.chainId), basePath);
        return html(reply, 200, page);
      } catch (e) {
        return failure(req, reply, e);
      }
    });

    scope.post<Claim>(`${basePath}/refunds/:id`, acting, async (req, reply) => {
      const token = String(req.body?.token ?? "");
      try {
        await claimRefund(deps.prisma, req.params.id, token, { address: req.body?.address, confirmAddress: req.body?.confirmAddress }, deps.charges);
        // To the link's own page, which now shows the refund's status (303: a reload does not post again).
        return reply
          .code(303)
          .header("Cache-Control", "no-store")
          .redirect(`${basePath}/refunds/${encodeURIComponent(req.params.id)}?token=${encodeURIComponent(token)}`);
      } catch (e) {
        // A refused address: the form again, saying why (the link still works).
        if (!(e instanceof AppError) || statusOf(e) !== 400) return failure(req, reply, e);
        const view = await claimView(deps.prisma, req.params.id, token).catch(() => null);
        if (!view) return failure(req, reply, e);
        // The address fields' messages are written for the buyer; anything else is said in buyer's words.
        const said = e.param === "address" || e.param === "confirmAddress" ? e.message : buyerNotice(e, "refund", null);
        return html(reply, 400, renderClaimPage(view, chainName(view.refund.chainId), token, basePath, said));
      }
    });
  });

  // Invoices and payment links: pages without script whose Pay makes a charge and goes to its page.
  app.register(async (scope) => {
    scope.setErrorHandler((err, req, reply) => failure(req, reply, err));
    scope.addContentTypeParser("application/x-www-form-urlencoded", { parseAs: "string" }, (_req, _body, done) => done(null, {}));
    scope.addHook("onSend", async (_req, reply) => {
      reply.header("Content-Security-Policy", claimCsp).header("X-Frame-Options", "DENY").header("X-Content-Type-Options", "nosniff");
      reply.header("Referrer-Policy", "no-referrer");
    });
    const open = { config: { group: "read", auth: "public" } } as const;
    const acting = { config: { group: "create", auth: "public" } } as const;

    scope.get<IdParams>(`${basePath}/invoices/:id`, open, async (req, reply) => {
      try {
        return html(reply, 200, renderInvoicePage(await publicInvoiceView(deps.prisma, req.params.id), deps.charges, basePath));
      } catch (e) {
        return failure(req, reply, e);
      }
    });

    scope.get<IdParams>(`${basePath}/invoices/:id/pdf`, open, async (req, reply) => {
      try {
        const view = await publicInvoiceView(deps.prisma, req.params.id);
        return sendPdf(reply, view.invoice, await invoicePdf(view, deps.charges));
      } catch (e) {
        return failure(req, reply, e);
      }
    });

    scope.post<IdParams>(`${basePath}/invoices/:id/pay`, acting, async (req, reply) => {
      try {
        return backToPage(reply, (await payInvoice(deps.prisma, req.params.id, deps.charges)).id);
      } catch (e) {
        // Paid or voided meanwhile: the invoice as it now is, saying why.
        if (!(e instanceof AppError) || statusOf(e) !== 409) return failure(req, reply, e);
        const view = await publicInvoiceView(deps.prisma, req.params.id);
        return html(reply, 409, renderInvoicePage(view, deps.charges, basePath, buyerNotice(e, "invoice", view.merchantName)));
      }
    });

    scope.get<IdParams>(`${basePath}/l/:id`, open, async (req, reply) => {
      try {
        const { link, merchantName } = await activePaymentLink(deps.prisma, req.params.id);
        return html(reply, 200, renderPaymentLinkPage(link, merchantName, basePath));
      } catch (e) {
        return failure(req, reply, e);
      }
    });

    scope.post<IdParams>(`${basePath}/l/:id`, acting, async (req, reply) => {
      try {
        await deps.rateLimiter.consume(`${req.clientAddress}:${req.params.id}`, "linkCharges");
        return backToPage(reply, (await chargeFromPaymentLink(deps.prisma, req.params.id, deps.charges)).id);
      } catch (e) {
        return failure(req, reply, e);
      }
    });
  });

  /** After a form post: the page, showing the charge as it now is (303, so a reload does not post again). */
  function backToPage(reply: FastifyReply, id: string) {
    return reply
      .code(303)
      .header("Cache-Control", "no-store")
      .redirect(`${basePath}/${encodeURIComponent(id)}`);
  }

  /**
   * Answers a buyer with the one error page (buyer-error.ts), in the seller's name when the record is
   * known; the operator reads the precise reason in the log.
   */
  async function failure(req: FastifyRequest, reply: FastifyReply, err: unknown) {
    const e = toAppError(err);
    const status = statusOf(e);
    if (status >= 500) req.log.error({ err }, "hosted page failed");
    // A mistyped link or a busy address is routine; anything else a buyer hit is worth the operator's look.
    else req.log[status === 404 || status === 429 ? "info" : "warn"]({ code: e.code, param: e.param, reason: e.message }, "hosted page refused a buyer");
    const id = (req.params as { id?: string } | undefined)?.id;
    const topic = topicOf(req.routeOptions.url);
    // Not looked up for an unknown record, a refused flood or a failing database.
    const named = id !== undefined && status >= 400 && status < 500 && status !== 404 && status !== 429;
    const merchantName = named ? await sellerName(deps.prisma, id).catch(() => null) : null;
    const page = buyerErrorPage(e, { topic, merchantName, backUrl: backUrlOf(req, topic, id, e), basePath });
    for (const [name, value] of Object.entries(e.headers)) reply.header(name, value);
    return html(reply, page.status, page.html);
  }

  /** After a refused form post, the page it came from (there the buyer sees where things stand); none for a seller who cannot take money. */
  function backUrlOf(req: FastifyRequest, topic: BuyerTopic, id: string | undefined, e: AppError): string | null {
    if (req.method !== "POST" || id === undefined || e.code === "settlement_wallet_missing" || ![400, 409, 429].includes(statusOf(e))) return null;
    const path = { payment: "", invoice: "/invoices", "payment link": "/l", refund: null }[topic];
    return path === null ? null : `${basePath}${path}/${encodeURIComponent(id)}`;
  }
}

/** What a hosted page's route shows, as its error page names it. */
function topicOf(routeUrl: string | undefined): BuyerTopic {
  if (routeUrl?.includes("/refunds/")) return "refund";
  if (routeUrl?.includes("/invoices/")) return "invoice";
  if (routeUrl?.includes("/l/")) return "payment link";
  return "payment";
}

function html(reply: FastifyReply, status: number, body: string) {
  // A page holds one buyer's payment state: never cache it anywhere.
  return reply.code(status).header("Cache-Control", "no-store").type("text/html; charset=utf-8").send(body);
}
