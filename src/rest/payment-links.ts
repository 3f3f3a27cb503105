// REST payment links (.docs/invoices.md "Payment links"). Rules live in domain/payment-links.ts; the buyer's
// side is the hosted link page (pay/invoice-routes.ts).
import type { FastifyInstance } from "fastify";
import { createSchema, listSchema, updateSchema } from "../domain/payment-link-requests.js";
import {
  createPaymentLink,
  getPaymentLink,
  listPaymentLinks,
  type PaymentLink,
  PaymentLinkResource,
  paymentLinkResource,
  updatePaymentLink,
} from "../domain/payment-links.js";
import { parseInput } from "../domain/validation.js";
import { listOf } from "./openapi.js";
import { type RestDeps, scopeOf } from "./plumbing.js";

const tag = "Payment links";

type IdParams = { Params: { id: string } };

/** Registers the payment link endpoints. */
export function paymentLinkRoutes(app: FastifyInstance, { prisma, charges: settings }: RestDeps): void {
  const shape = (l: PaymentLink) => paymentLinkResource(l, settings);

  const create = {
    group: "create",
    doc: {
      operationId: "createPaymentLink",
      summary: "Create a payment link: each buyer who pays at its url gets a charge of its amount",
      description:
        "Creates a link to share: a buyer who presses Pay at its `url` gets a charge of its amount (with `paymentLinkId`) and is sent to that charge's page. A live link needs a live settlement wallet (400 `settlement_wallet_missing`) and an enabled live chain (400 `chain_unsupported`, naming the operator's setting).",
      tag,
      body: createSchema,
      example: { name: "Coffee beans, 1 kg", amount: "24.00", description: "Roasted this week" },
      ok: { 201: PaymentLinkResource },
      errors: ["settlement_wallet_missing", "chain_unsupported"],
    },
  } as const;
  app.post("/v1/payment_links", { config: create }, async (req, reply) => {
    return reply.code(201).send(shape(await createPaymentLink(prisma, scopeOf(req), parseInput(createSchema, req.body ?? {}), settings)));
  });

  const list = {
    group: "list",
    doc: {
      operationId: "listPaymentLinks",
      summary: "List payment links, newest first (active)",
      description: "Newest first, paged by cursor; `active` keeps the active or the retired ones.",
      tag,
      query: listSchema,
      ok: { 200: listOf(PaymentLinkResource) },
    },
  } as const;
  app.get("/v1/payment_links", { config: list }, async (req) => {
    const { data, hasMore } = await listPaymentLinks(prisma, scopeOf(req), parseInput(listSchema, req.query));
    return { object: "list", data: data.map(shape), hasMore };
  });

  const retrieve = {
    group: "read",
    doc: { operationId: "getPaymentLink", summary: "Retrieve a payment link", description: "The payment link.", tag, ok: { 200: PaymentLinkResource } },
  } as const;
  app.get<IdParams>("/v1/payment_links/:id", { config: retrieve }, async (req) => shape(await getPaymentLink(prisma, scopeOf(req), req.params.id)));

  const update = {
    group: "create",
    doc: {
      operationId: "updatePaymentLink",
      summary: "Change a payment link (all but its amount); active: false retires it",
      description:
        "Changes the link, all but its amount; `active: false` retires it (its page then answers 410). `active: true` on a live link needs a live settlement wallet (400 `settlement_wallet_missing`) and an enabled live chain (400 `chain_unsupported`).",
      tag,
      body: updateSchema,
      example: { active: false },
      ok: { 200: PaymentLinkResource },
      errors: ["settlement_wallet_missing", "chain_unsupported"],
    },
  } as const;
  app.patch<IdParams>("/v1/payment_links/:id", { config: update }, async (req) =>
    shape(await updatePaymentLink(prisma, scopeOf(req), req.params.id, parseInput(updateSchema, req.body ?? {}), settings)),
  );
}
