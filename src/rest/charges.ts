// REST /v1/charges: parse, call the domain, shape the response.
import type { FastifyInstance } from "fastify";
import { z } from "zod";
import {
  cancelCharge,
  ChargeResource,
  chargeResource,
  createCharge,
  createSchema,
  getCharge,
  getChargeByOrderId,
  listCharges,
  listSchema,
} from "../domain/charges.js";
import { markChargeReviewed } from "../domain/review.js";
import { listOf } from "./openapi.js";
import { type RestDeps, scopeOf } from "./plumbing.js";

const tag = "Charges";
/** GET /v1/charges pages by number (the contract keeps it), so its list adds the page's place. */
const ChargeList = listOf(ChargeResource).extend({ page: z.number().int(), limit: z.number().int(), total: z.number().int() });

type IdParams = { Params: { id: string } };

/** Registers the charge endpoints. */
export function chargeRoutes(app: FastifyInstance, { prisma, charges: settings }: RestDeps): void {
  const create = {
    group: "create",
    doc: {
      operationId: "createCharge",
      summary: "Create a charge (a payment request) and its hosted payment page",
      tag,
      body: createSchema,
      example: { orderId: "order-1001", amount: "25.00", description: "Two mugs", metadata: { sku: "mug-2" }, successUrl: "https://shop.example/thanks" },
      ok: { 201: ChargeResource },
      errors: ["duplicate_order_id", "settlement_wallet_missing"],
    },
  } as const;
  app.post("/v1/charges", { config: create }, async (req, reply) => {
    const charge = await createCharge(prisma, scopeOf(req), req.body ?? {}, settings);
    return reply.code(201).send(chargeResource(charge, settings));
  });

  const retrieve = { group: "read", doc: { operationId: "getCharge", summary: "Retrieve a charge", tag, ok: { 200: ChargeResource } } } as const;
  app.get<IdParams>("/v1/charges/:id", { config: retrieve }, async (req) => {
    return chargeResource(await getCharge(prisma, scopeOf(req), req.params.id), settings);
  });

  const byOrder = {
    group: "read",
    doc: { operationId: "getChargeByOrderId", summary: "Retrieve a charge by your order id", tag, ok: { 200: ChargeResource } },
  } as const;
  app.get<{ Params: { orderId: string } }>("/v1/charges/order/:orderId", { config: byOrder }, async (req) => {
    return chargeResource(await getChargeByOrderId(prisma, scopeOf(req), req.params.orderId), settings);
  });

  const list = {
    group: "list",
    doc: { operationId: "listCharges", summary: "List charges, newest first, by page number", tag, query: listSchema, ok: { 200: ChargeList } },
  } as const;
  app.get("/v1/charges", { config: list }, async (req) => {
    const { data, ...page } = await listCharges(prisma, scopeOf(req), req.query);
    return { object: "list", data: data.map((c) => chargeResource(c, settings)), ...page };
  });

  const cancel = {
    group: "create",
    doc: {
      operationId: "cancelCharge",
      summary: "Cancel a charge that has no money yet",
      tag,
      ok: { 200: ChargeResource },
      errors: ["charge_not_cancellable", "charge_payment_confirming"],
    },
  } as const;
  app.delete<IdParams>("/v1/charges/:id", { config: cancel }, async (req) => {
    return chargeResource(await cancelCharge(prisma, scopeOf(req), req.params.id, settings), settings);
  });

  const reviewed = {
    group: "create",
    doc: {
      operationId: "markChargeReviewed",
      summary: "Mark a charge that needs review as reviewed, once you have looked at what the reconciliation found (charge.reviewed)",
      tag,
      ok: { 200: ChargeResource },
    },
  } as const;
  app.post<IdParams>("/v1/charges/:id/mark_reviewed", { config: reviewed }, async (req) => {
    return chargeResource(await markChargeReviewed(prisma, scopeOf(req), req.params.id, settings), settings);
  });
}
