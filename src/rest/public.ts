// REST /v1/public: what the hosted payment page calls. No API key; the charge id is the capability.
import type { FastifyInstance } from "fastify";
import { selectChain } from "../domain/chain-selection.js";
import { getPublicCharge } from "../domain/payment-session.js";
import type { RestDeps } from "./plumbing.js";

type IdParams = { Params: { id: string } };

/** Registers the hosted-page endpoints. */
export function publicRoutes(app: FastifyInstance, { prisma, chains, charges: settings }: RestDeps): void {
  app.get<IdParams>("/v1/public/charges/:id", { config: { group: "read", auth: "public" } }, async (req, reply) => {
    // Status changes by the second: never let a cache serve an old view.
    reply.header("Cache-Control", "no-store");
    return getPublicCharge(prisma, chains, req.params.id);
  });

  app.post<IdParams>("/v1/public/charges/:id/chain", { config: { group: "create", auth: "public" } }, async (req, reply) => {
    reply.header("Cache-Control", "no-store");
    return selectChain(prisma, chains, settings, req.params.id, req.body ?? {});
  });
}
