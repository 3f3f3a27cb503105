// What every hosted page's routes share: the service's parts they use, the pages' path, and the two
// ways a form post or a failure answers the buyer. Whatever fails under the hosted pages' path, the
// buyer gets the one error page of buyer-error.ts, never the API's JSON error body.
import type { FastifyReply, FastifyRequest } from "fastify";
import type { ChainSet } from "../chain/chains.js";
import type { DevnetInfo } from "../chain/devnet.js";
import type { Prisma } from "../db/client.js";
import type { AuthorizationReaders } from "../domain/authorizations.js";
import type { ChargeSettings } from "../domain/charges/settings.js";
import type { AppError } from "../domain/errors.js";
import { sellerName } from "../domain/payment-session.js";
import { statusOf, toAppError } from "../http/errors.js";
import type { HostedPages } from "../http/hosted-pages.js";
import type { RateLimiter } from "../http/rate-limit.js";
import { type BuyerTopic, buyerErrorPage } from "./buyer-error.js";

/** What the hosted pages need from the service. */
export interface PayOptions {
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
  /** Signs the page token each payment page carries: its own requests then pass anonymous floods. */
  hostedPages: HostedPages;
}

/** What each page's routes are given. */
export interface PayContext {
  options: PayOptions;
  /** The path of PAYMENT_BASE_URL, without a trailing slash ("" at the root). */
  basePath: string;
  /**
   * Answers a buyer with the one error page, in the seller's name when the record is known; the
   * operator reads the precise reason in the log.
   */
  failure(req: FastifyRequest, reply: FastifyReply, err: unknown): Promise<FastifyReply>;
  /** After a form post: the charge's page, as it now is (303, so a reload does not post again). */
  backToPage(reply: FastifyReply, chargeId: string): FastifyReply;
}

export type IdParams = { Params: { id: string } };

// Every page request counts against the client address's public budget, like /v1/public.
export const OPEN = { config: { group: "read", auth: "public" } } as const;
export const ACTING = { config: { group: "create", auth: "public" } } as const;

/** The context of the hosted pages under the path of `PAYMENT_BASE_URL`. */
export function payContext(options: PayOptions): PayContext {
  const basePath = new URL(options.charges.paymentBaseUrl).pathname.replace(/\/+$/, "");

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
    const merchantName = named ? await sellerName(options.prisma, id).catch(() => null) : null;
    const page = buyerErrorPage(e, { topic, merchantName, backUrl: backUrlOf(req, topic, id, e), basePath, retryAfter: retryAfterOf(req, e) });
    for (const [name, value] of Object.entries(e.headers)) reply.header(name, value);
    return html(reply, page.status, page.html);
  }

  /** After a refused form post, the page it came from (there the buyer sees where things stand); none for a seller who cannot take money. */
  function backUrlOf(req: FastifyRequest, topic: BuyerTopic, id: string | undefined, e: AppError): string | null {
    if (req.method !== "POST" || id === undefined || e.code === "settlement_wallet_missing" || ![400, 409, 429].includes(statusOf(e))) return null;
    const path = { payment: "", invoice: "/invoices", "payment link": "/l", refund: null, subscription: "/subscribe" }[topic];
    return path === null ? null : `${basePath}${path}/${encodeURIComponent(id)}`;
  }

  /** A page load refused as busy for a few seconds loads itself again then (a form post is the script's to retry). */
  function retryAfterOf(req: FastifyRequest, e: AppError): number | null {
    const seconds = Number(e.headers["Retry-After"]);
    return req.method === "GET" && [429, 503].includes(statusOf(e)) && Number.isInteger(seconds) && seconds > 0 && seconds <= 30 ? seconds : null;
  }

  function backToPage(reply: FastifyReply, chargeId: string) {
    return reply
      .code(303)
      .header("Cache-Control", "no-store")
      .redirect(`${basePath}/${encodeURIComponent(chargeId)}`);
  }

  return { options, basePath, failure, backToPage };
}

/** Answers with a page. */
export function html(reply: FastifyReply, status: number, body: string): FastifyReply {
  // A page holds one buyer's payment state: never cache it anywhere.
  return reply.code(status).header("Cache-Control", "no-store").type("text/html; charset=utf-8").send(body);
}

/** What a hosted page's route shows, as its error page names it. */
function topicOf(routeUrl: string | undefined): BuyerTopic {
  if (routeUrl?.includes("/refunds/")) return "refund";
  if (routeUrl?.includes("/subscribe/")) return "subscription";
  if (routeUrl?.includes("/invoices/")) return "invoice";
  if (routeUrl?.includes("/l/")) return "payment link";
  return "payment";
}
