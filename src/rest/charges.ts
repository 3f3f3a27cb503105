// REST /v1/charges: parse, call the domain, shape the response.
import type { FastifyInstance } from "fastify";
import { cancelCharge, chargeResource, createCharge, getCharge, getChargeByOrderId, listCharges } from "../domain/charges.js";
import { type RestDeps, scopeOf } from "./plumbing.js";

type IdParams = { Params: { id: string } };

/** Registers the charge endpoints. */
export function chargeRoutes(app: FastifyInstance, { prisma, charges: settings }: RestDeps): void {
  app.post("/v1/charges", { config: { group: "create" } }, async (req, reply) => {
    const charge = await createCharge(prisma, scopeOf(req), req.body ?? {}, settings);
    return reply.code(201).send(chargeResource(charge, settings));
  });

  app.get<IdParams>("/v1/charges/:id", { config: { group: "read" } }, async (req) => {
    return chargeResource(await getCharge(prisma, scopeOf(req), req.params.id), settings);
  });

  app.get<{ Params: { orderId: string } }>("/v1/charges/order/:orderId", { config: { group: "read" } }, async (req) => {
    return chargeResource(await getChargeByOrderId(prisma, scopeOf(req), req.params.orderId), settings);
  });

  app.get("/v1/charges", { config: { group: "list" } }, async (req) => {
    const { data, ...page } = await listCharges(prisma, scopeOf(req), req.query);
    return { object: "list", data: data.map((c) => chargeResource(c, settings)), ...page };
  });

  app.delete<IdParams>("/v1/charges/:id", { config: { group: "create" } }, async (req) => {
    return chargeResource(await cancelCharge(prisma, scopeOf(req), req.params.id, settings), settings);
  });
}
