// REST refunds: prepared here, paid by the merchant's wallet, completed when the chain shows it
// (.docs/refunds.md). Rules live in domain/refunds.ts.
import type { FastifyInstance } from "fastify";
import { authorizationSchema } from "../domain/authorizations.js";
import { submitRefundAuthorization } from "../domain/refund-authorizations.js";
import { cancelRefund, createRefund, getRefund, listRefunds, RefundResource, refundResource, sendRefundClaim } from "../domain/refunds.js";
import { createSchema, listSchema } from "../domain/refund-requests.js";
import { parseInput } from "../domain/validation.js";
import { listOf } from "./openapi.js";
import { type RestDeps, scopeOf } from "./plumbing.js";

const tag = "Refunds";

type IdParams = { Params: { id: string } };

/** Registers the refund endpoints. */
export function refundRoutes(app: FastifyInstance, { prisma, charges: settings, chains, authorizations }: RestDeps): void {
  const create = {
    group: "create",
    doc: {
      operationId: "createRefund",
      summary: "Refund a charge with confirmed money: by default all that is left; your settlement wallet pays it",
      description:
        "Refunds a charge with confirmed money, on a chain where it arrived, whichever chain was picked (or none): `chainId`, needed only when money is left on several chains (400 `parameter_invalid` naming `chainId` and listing them otherwise), else the only one. `amount` defaults to all that is left to refund on that chain, and may not exceed the money confirmed there less earlier refunds there (gross: the protocol fee is not returned; 400 `refund_exceeds_refundable`). `address` must be a wallet the buyer can spend from: a charge's deposit address (this one's included: money sent there is paid out to you again), a factory or token contract, the zero address and the charge's settlement wallet are refused with 400 `parameter_invalid` and the reason. Without `address` the refund is AWAITING_ADDRESS and the buyer gives one at `claimUrl` (checked the same way). Then send exactly `amount` USDC from `fromAddress` (the charge's settlement wallet) to `address` on `chainId`, by any means: the refund completes when that transfer has its confirmations (`refund.completed`). Only transfers in blocks after the chain head the worker last saw when the refund was made count, and one transfer completes one refund. Sends `refund.created`.",
      tag,
      body: createSchema,
      example: { amount: "5.00", reason: "returned item", address: "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC" },
      ok: { 201: RefundResource },
      errors: ["charge_not_refundable", "refund_exceeds_refundable"],
    },
  } as const;
  app.post<IdParams>("/v1/charges/:id/refunds", { config: create }, async (req, reply) => {
    const refund = await createRefund(prisma, scopeOf(req), req.params.id, parseInput(createSchema, req.body ?? {}), settings, chains);
    return reply.code(201).send(refundResource(refund, settings));
  });

  const list = {
    group: "list",
    doc: {
      operationId: "listRefunds",
      summary: "List refunds, newest first (chargeId, status)",
      description: "Newest first, paged by cursor; filtered by `chargeId` or `status`.",
      tag,
      query: listSchema,
      ok: { 200: listOf(RefundResource) },
    },
  } as const;
  app.get("/v1/refunds", { config: list }, async (req) => {
    const { data, hasMore } = await listRefunds(prisma, scopeOf(req), parseInput(listSchema, req.query));
    return { object: "list", data: data.map((r) => refundResource(r, settings)), hasMore };
  });

  const retrieve = {
    group: "read",
    doc: {
      operationId: "getRefund",
      summary: "Retrieve a refund",
      description: "The refund and where it stands: its address, the transfer that pays it, the latest authorization.",
      tag,
      ok: { 200: RefundResource },
    },
  } as const;
  app.get<IdParams>("/v1/refunds/:id", { config: retrieve }, async (req) => {
    return refundResource(await getRefund(prisma, scopeOf(req), req.params.id), settings);
  });

  const cancel = {
    group: "create",
    doc: {
      operationId: "cancelRefund",
      summary: "Cancel a refund still waiting for its address or payment",
      description:
        "Cancels a refund still AWAITING_ADDRESS or AWAITING_PAYMENT. Once a transfer paying it is seen, or an authorization paying it may still be spent, it can no longer be cancelled (409 `refund_payment_on_its_way`). Sends `refund.cancelled`.",
      tag,
      ok: { 200: RefundResource },
      errors: ["refund_not_cancellable"],
    },
  } as const;
  app.post<IdParams>("/v1/refunds/:id/cancel", { config: cancel }, async (req) => {
    return refundResource(await cancelRefund(prisma, scopeOf(req), req.params.id, settings), settings);
  });

  const send = {
    group: "create",
    doc: {
      operationId: "sendRefundClaim",
      summary: "Email the claim link of a refund waiting for its address to the buyer",
      description:
        "Emails `claimUrl` to the charge's buyer (its customer's email, else the email the buyer gave on a payment link), in your name (Reply-To: your support email when set): the amount, the order and the chain, and the link where they give the address to refund to. Only for a refund AWAITING_ADDRESS whose charge has an email: else 409 `refund_not_sendable`. With the setting `emailRefunds` on, creating such a refund sends it already.",
      tag,
      ok: { 200: RefundResource },
      errors: ["refund_not_sendable"],
    },
  } as const;
  app.post<IdParams>("/v1/refunds/:id/send", { config: send }, async (req) => {
    return refundResource(await sendRefundClaim(prisma, scopeOf(req), req.params.id, settings), settings);
  });

  const authorize = {
    group: "create",
    doc: {
      operationId: "payRefundWithAuthorization",
      summary: "Pay a refund with an EIP-3009 transferWithAuthorization your settlement wallet signed: checked, then relayed (the service pays the gas)",
      description:
        "Pays the refund with an EIP-3009 `transferWithAuthorization` signed by your settlement wallet: checked (signer, amount, address, at least 60 s of validity, an unused nonce, the balance, a simulation), then relayed by the service, which pays the gas. The refund completes when the chain shows the transfer. An accepted authorization is money on its way until the chain shows its nonce used or `validBefore` has passed (at most an hour): meanwhile the refund cannot be cancelled and no other authorization is taken for it, even after a relay that reverted. Do not pay the refund another way meanwhile.",
      tag,
      body: authorizationSchema,
      ok: { 202: RefundResource },
      errors: ["authorization_invalid", "refund_not_payable"],
    },
  } as const;
  app.post<IdParams>("/v1/refunds/:id/authorization", { config: authorize }, async (req, reply) => {
    const refund = await submitRefundAuthorization(prisma, scopeOf(req), req.params.id, parseInput(authorizationSchema, req.body ?? {}), authorizations);
    return reply.code(202).send(refundResource(refund, settings));
  });
}
