// The charge's payment page: the page, the chain pick and the test-mode payment as plain HTML forms
// (they work without JavaScript). The charge id is the capability; no API
// key is ever involved or shown.
import type { FastifyInstance } from "fastify";
import { payFromTestWallet } from "../chain/devnet.js";
import { selectChain } from "../domain/chain-selection.js";
import { selectSchema } from "../domain/chain-selection-requests.js";
import { gaslessOffer } from "../domain/charge-authorizations.js";
import { AppError } from "../domain/errors.js";
import { parseAmount } from "../domain/money.js";
import { getPublicCharge } from "../domain/payment-session.js";
import { parseInput } from "../domain/validation.js";
import { statusOf } from "../http/errors.js";
import { ACTING, html, type IdParams, OPEN, type PayContext } from "./context.js";
import { offersTestWallet, renderPaymentPage } from "./page.js";

/** Registers the payment page and its forms. */
export function chargeRoutes(scope: FastifyInstance, { options, basePath, failure, backToPage }: PayContext): void {
  const { prisma, chains, charges, devnet } = options;
  const pageUrl = new URL(charges.paymentBaseUrl);
  // Same origin (the default): a relative URL, right whatever host name or port the buyer used.
  const graphqlUrl = pageUrl.origin === new URL(options.publicUrl).origin ? "/graphql" : `${options.publicUrl}/graphql`;
  const links = { basePath, graphqlUrl, testWallet: devnet !== null };
  const paying = new Set<string>();

  // A mistyped or cut-off link under the hosted pages' path (at the root, the API's own 404 answers).
  if (basePath !== "") {
    scope.get(`${basePath}/*`, OPEN, async (req, reply) =>
      failure(req, reply, new AppError("resource_missing", `No hosted page at ${req.url.split("?", 1)[0]}`)),
    );
  }

  scope.get<IdParams>(`${basePath}/:id`, OPEN, async (req, reply) => {
    try {
      const session = await getPublicCharge(prisma, chains, req.params.id);
      const gasless = await gaslessOffer(prisma, chains, options.authorizations, charges, session);
      const pageToken = options.hostedPages.token(session.id, session.expiresAt);
      return html(reply, 200, renderPaymentPage(session, { ...links, pageToken }, gasless));
    } catch (e) {
      return failure(req, reply, e);
    }
  });

  scope.post<IdParams & { Body: Record<string, string> | undefined }>(`${basePath}/:id/chain`, ACTING, async (req, reply) => {
    try {
      const chainId = Number(req.body?.chainId);
      await selectChain(prisma, chains, charges, req.params.id, parseInput(selectSchema, { chainId: Number.isInteger(chainId) ? chainId : req.body?.chainId }));
    } catch (e) {
      // Already picked or no longer payable: the page itself shows the charge as it now is.
      if (!(e instanceof AppError) || statusOf(e) !== 409) return failure(req, reply, e);
    }
    return backToPage(reply, req.params.id);
  });

  scope.post<IdParams>(`${basePath}/:id/test-payment`, ACTING, async (req, reply) => {
    const id = req.params.id;
    // One test payment per charge at a time: a double click must not pay twice.
    if (paying.has(id)) return failure(req, reply, new AppError("charge_not_payable", "A test payment for this charge is already being sent."));
    paying.add(id);
    try {
      const session = await getPublicCharge(prisma, chains, id);
      const units = parseAmount(session.amountRemaining) ?? 0n;
      if (!devnet || !offersTestWallet(session, true) || session.status !== "PENDING" || units === 0n) {
        throw new AppError("charge_not_payable", "The test wallet pays only pending test-mode charges on the local devnet.");
      }
      if (session.amountPending !== "0.00") throw new AppError("charge_not_payable", "A payment is still being confirmed; wait for it first.");
      await payFromTestWallet(devnet, session.cloneAddress!, units);
    } catch (e) {
      return failure(req, reply, e);
    } finally {
      paying.delete(id);
    }
    return backToPage(reply, req.params.id);
  });
}
