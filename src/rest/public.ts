// REST /v1/public: what the hosted payment page calls. No API key; the charge id is the capability.
import type { FastifyInstance } from "fastify";
import { authorizationSchema } from "../domain/authorizations.js";
import { selectChain } from "../domain/chain-selection.js";
import { selectSchema } from "../domain/chain-selection-requests.js";
import { ChargeAuthorizationResource, relayedAnswer, submitChargeAuthorization } from "../domain/charge-authorizations.js";
import { getPublicCharge, PublicCharge } from "../domain/payment-session.js";
import { parseInput } from "../domain/validation.js";
import type { RestDeps } from "./plumbing.js";

const tag = "Hosted page";

type IdParams = { Params: { id: string } };

/** Registers the hosted-page endpoints. */
export function publicRoutes(app: FastifyInstance, { prisma, chains, charges: settings, rateLimiter, authorizations }: RestDeps): void {
  const view = {
    group: "read",
    auth: "public",
    doc: {
      operationId: "getPublicCharge",
      summary: "The buyer's view of a charge (no key: the charge id is the capability)",
      description:
        "What the hosted page shows the buyer: the amount, the status in the buyer's words, the payments and their confirmations, and the chains the charge can be paid on. No key: the charge id is the capability.",
      tag,
      ok: { 200: PublicCharge },
    },
  } as const;
  app.get<IdParams>("/v1/public/charges/:id", { config: view }, async (req, reply) => {
    // Status changes by the second: never let a cache serve an old view.
    reply.header("Cache-Control", "no-store");
    return getPublicCharge(prisma, chains, req.params.id);
  });

  const select = {
    group: "create",
    auth: "public",
    doc: {
      operationId: "selectChargeChain",
      summary: "The buyer picks a chain: the answer says where to pay",
      description:
        "The buyer picks the chain to pay on, once (409 `chain_already_selected`), among the chains of the charge's mode (400 `chain_unsupported`: test mode takes testnets and the devnet, live mode mainnets), while the charge is PENDING and unexpired (409 `charge_not_payable`). Nothing is sent to the chain: the answer has the charge's `cloneAddress` (where to pay, the same on every chain) and a new `expiresAt` (now plus the merchant's payment window). The clone is deployed by the payout that first empties it.",
      tag,
      body: selectSchema,
      ok: { 200: PublicCharge },
      errors: ["chain_unsupported", "chain_already_selected", "charge_not_payable"],
    },
  } as const;
  app.post<IdParams>("/v1/public/charges/:id/chain", { config: select }, async (req, reply) => {
    reply.header("Cache-Control", "no-store");
    return selectChain(prisma, chains, settings, req.params.id, parseInput(selectSchema, req.body ?? {}));
  });

  const authorize = {
    group: "create",
    auth: "public",
    doc: {
      operationId: "payChargeWithAuthorization",
      summary: "Pay without gas: the buyer's signed EIP-3009 transferWithAuthorization to the charge's clone, checked and relayed (the service pays the gas)",
      description:
        "Pays without gas: the buyer's signed EIP-3009 `transferWithAuthorization` to the charge's address, for at most what is still due less money already on its way, and at least `GASLESS_MIN_AMOUNT` (1 USDC) unless exactly what is due. The service checks it before spending any gas (the signature under the token's own EIP-712 domain, the recipient, the amount, 60 s to an hour of validity, an unused nonce, the buyer's balance, a simulation) and relays it, paying the gas; the same authorization handed in twice gives one transaction. One may be on its way per charge, each client address may hand in `RATE_LIMIT_GASLESS` a minute, and none is taken once the chain's daily gas budget is spent. The payment then shows like any other.",
      tag,
      body: authorizationSchema,
      ok: { 202: ChargeAuthorizationResource },
      errors: ["authorization_invalid", "charge_not_payable"],
    },
  } as const;
  app.post<IdParams>("/v1/public/charges/:id/authorizations", { config: authorize }, async (req, reply) => {
    await rateLimiter.consume(req.clientAddress, "gasless");
    const accepted = await submitChargeAuthorization(prisma, chains, authorizations, settings, req.params.id, parseInput(authorizationSchema, req.body ?? {}));
    return reply
      .code(202)
      .header("Cache-Control", "no-store")
      .send(await relayedAnswer(prisma, accepted));
  });
}
