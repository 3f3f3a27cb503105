// Agent payments (.docs/x402.md): `GET /v1/x402` (what to put in a route's requirements) and the
// list of settlements under /v1, and the x402 facilitator (protocol version 2, scheme `exact`) at
// {PUBLIC_URL}/x402/supported, /verify and /settle, which the official middleware calls with the
// merchant's API key as its Bearer token. Rules live in domain/x402/.
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { AppError } from "../domain/errors.js";
import { statusOf } from "../http/errors.js";
import { parseInput } from "../domain/validation.js";
import { x402Account, X402Resource } from "../domain/x402/account.js";
import { listX402Payments, X402PaymentResource, x402PaymentResource } from "../domain/x402/payments.js";
import { parseFacilitatorRequest, paymentListSchema } from "../domain/x402/requests.js";
import { settlePayment, supportedKinds, x402Deps } from "../domain/x402/settle.js";
import { checkPayment } from "../domain/x402/verify.js";
import { listOf } from "./openapi.js";
import { type RestDeps, scopeOf } from "./plumbing.js";

const tag = "x402";

/** Registers GET /v1/x402, its payments, and the facilitator's three routes. */
export function x402Routes(app: FastifyInstance, deps: RestDeps & { publicUrl: string }): void {
  const { prisma } = deps;
  const x402 = x402Deps(prisma, deps.charges, deps.chains, deps.authorizations);

  const retrieve = {
    group: "read",
    doc: {
      operationId: "getX402",
      summary: "Your x402 address, the facilitator's URL and what a route may ask for on each chain",
      description:
        "What to configure the x402 middleware with: `payTo` (your x402 address for the key's mode, the same on every chain; made on first use), `facilitatorUrl` (call it with this API key as `Authorization: Bearer`), and per chain enabled for the mode the network, USDC's address and EIP-712 domain (`extra`) and the least a payment settles for. Money paid there is paid out to your settlement wallet less the fee, like a charge's; a new wallet or fee gives a new `payTo`. 400 `settlement_wallet_missing` without a wallet for the mode.",
      tag,
      ok: { 200: X402Resource },
      errors: ["settlement_wallet_missing", "chain_unsupported"],
    },
  } as const;
  app.get("/v1/x402", { config: retrieve }, async (req) => x402Account(x402, scopeOf(req), deps.publicUrl));

  const list = {
    group: "list",
    doc: {
      operationId: "listX402Payments",
      summary: "List the payments the facilitator settled, newest first",
      description:
        "What `POST /x402/settle` handled, newest first, paged by cursor: payer, amount, network, status, transaction, and the resource paid for. The money itself is in the ledger as payments once confirmed (`x402.payment`).",
      tag,
      query: paymentListSchema,
      ok: { 200: listOf(X402PaymentResource) },
    },
  } as const;
  app.get("/v1/x402/payments", { config: list }, async (req) => {
    const { data, hasMore } = await listX402Payments(prisma, scopeOf(req), parseInput(paymentListSchema, req.query));
    return { object: "list", data: data.map(x402PaymentResource), hasMore };
  });

  // The facilitator: answers in the protocol's shapes, not the API's (its clients parse them).
  const facilitator = { group: "x402" } as const;
  app.get("/x402/supported", { config: facilitator }, async (req) => supportedKinds(x402, scopeOf(req)));

  app.post("/x402/verify", { config: facilitator }, async (req, reply) => {
    const parsed = parseFacilitatorRequest(req.body);
    if ("refusal" in parsed) return malformed(reply, { isValid: false, invalidReason: parsed.refusal.reason, invalidMessage: parsed.refusal.message });
    const checked = await checkPayment(x402, scopeOf(req), parsed.request).catch((err: unknown) => failure(req, err));
    if ("failure" in checked) {
      const { status, reason, message } = checked.failure;
      return reply.code(status).send({ isValid: false, invalidReason: reason === "unexpected" ? "unexpected_verify_error" : reason, invalidMessage: message });
    }
    if ("payment" in checked) return { isValid: true, payer: checked.payment.payer };
    const { refusal, payer } = checked;
    return { isValid: false, invalidReason: refusal.reason, invalidMessage: refusal.message, ...(payer && { payer }) };
  });

  app.post("/x402/settle", { config: facilitator }, async (req, reply) => {
    const parsed = parseFacilitatorRequest(req.body);
    if ("refusal" in parsed) {
      const network = (req.body as { paymentRequirements?: { network?: unknown } } | null)?.paymentRequirements?.network;
      const { reason: errorReason, message: errorMessage } = parsed.refusal;
      return malformed(reply, { success: false, errorReason, errorMessage, transaction: "", network: typeof network === "string" ? network : "" });
    }
    const settled = await settlePayment(x402, scopeOf(req), parsed.request).catch((err: unknown) => failure(req, err));
    if (!("failure" in settled)) return settled;
    const { status, reason, message } = settled.failure;
    const errorReason = reason === "unexpected" ? "unexpected_settle_error" : reason;
    return reply
      .code(status)
      .send({ success: false, errorReason, errorMessage: message, transaction: "", network: parsed.request.paymentRequirements.network });
  });
}

/**
 * An error thrown on the way, answered in the protocol's shape: the merchant's own setup (no wallet
 * for the mode, no chain) as 400 invalid requirements saying what to fix; anything else (a node that
 * does not answer) as a 500 the middleware reports, logged here.
 */
function failure(req: FastifyRequest, err: unknown): { failure: { status: number; reason: "invalid_payment_requirements" | "unexpected"; message: string } } {
  if (err instanceof AppError && statusOf(err) < 500) return { failure: { status: 400, reason: "invalid_payment_requirements", message: err.message } };
  req.log.error({ err }, "x402 facilitator call failed");
  return { failure: { status: 500, reason: "unexpected", message: "the facilitator could not check or settle the payment now; try again" } };
}

/** A request the protocol cannot read: 400, in the protocol's shape (the middleware reads `isValid` or `success` from it). */
function malformed(reply: FastifyReply, body: object): FastifyReply {
  return reply.code(400).send(body);
}
