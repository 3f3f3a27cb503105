// The refund claim page: the token in the link is the buyer's only credential. The buyer gives the
// address to refund to, then the same link tells where the refund stands.
import type { FastifyInstance } from "fastify";
import { AppError } from "../domain/errors.js";
import { claimSchema } from "../domain/refund-requests.js";
import { claimRefund, claimView } from "../domain/refunds.js";
import { parseInput } from "../domain/validation.js";
import { statusOf } from "../http/errors.js";
import { buyerNotice } from "./buyer-error.js";
import { ACTING, html, type IdParams, OPEN, type PayContext } from "./context.js";
import { type ClaimChain, renderClaimPage, renderClaimStatus } from "./refund-page.js";

type Claim = IdParams & { Querystring: { token?: string }; Body: Record<string, string> | undefined };

/** Registers the refund claim page and its form. */
export function refundRoutes(scope: FastifyInstance, { options, basePath, failure }: PayContext): void {
  const { prisma, chains } = options;
  const chainOf = (chainId: number): ClaimChain => {
    const chain = chains.get(chainId);
    return { name: chain?.name ?? `chain ${chainId}`, explorer: chain?.explorer ?? null };
  };
  const chainName = (chainId: number) => chainOf(chainId).name;

  scope.get<Claim>(`${basePath}/refunds/:id`, OPEN, async (req, reply) => {
    try {
      const token = String(req.query.token ?? "");
      const view = await claimView(prisma, req.params.id, token);
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

  scope.post<Claim>(`${basePath}/refunds/:id`, ACTING, async (req, reply) => {
    const token = String(req.body?.token ?? "");
    try {
      await claimRefund(
        prisma,
        req.params.id,
        token,
        parseInput(claimSchema, { address: req.body?.address, confirmAddress: req.body?.confirmAddress }),
        options.charges,
        chains,
      );
      // To the link's own page, which now shows the refund's status (303: a reload does not post again).
      return reply
        .code(303)
        .header("Cache-Control", "no-store")
        .redirect(`${basePath}/refunds/${encodeURIComponent(req.params.id)}?token=${encodeURIComponent(token)}`);
    } catch (e) {
      // A refused address: the form again, saying why (the link still works).
      if (!(e instanceof AppError) || statusOf(e) !== 400) return failure(req, reply, e);
      const view = await claimView(prisma, req.params.id, token).catch(() => null);
      if (!view) return failure(req, reply, e);
      // The address fields' messages are written for the buyer; anything else is said in buyer's words.
      const said = e.param === "address" || e.param === "confirmAddress" ? e.message : buyerNotice(e, "refund", null);
      return html(reply, 400, renderClaimPage(view, chainName(view.refund.chainId), token, basePath, said));
    }
  });
}
