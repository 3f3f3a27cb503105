// REST /v1/customers: parse, call the domain, shape the response.
import type { FastifyInstance } from "fastify";
import { z } from "zod";
import {
  createCustomer,
  customerResource,
  customerStats,
  deleteCustomer,
  findOrCreateCustomerByEmail,
  getCustomer,
  listCustomers,
  statsResource,
  updateCustomer,
} from "../domain/customers.js";
import { parseInput } from "../domain/validation.js";
import { type RestDeps, scopeOf } from "./plumbing.js";

type IdParams = { Params: { id: string } };

const retrieveQuery = z.strictObject({
  expand: z
    .string()
    .refine((s) => s.split(",").every((f) => f === "stats"), "the only expandable field is 'stats'")
    .optional(),
});

/** Registers the customer endpoints. */
export function customerRoutes(app: FastifyInstance, { prisma }: RestDeps): void {
  app.post("/v1/customers", { config: { group: "create" } }, async (req, reply) => {
    const customer = await createCustomer(prisma, scopeOf(req), req.body ?? {});
    return reply.code(201).send(customerResource(customer));
  });

  app.post("/v1/customers/jwt", { config: { group: "create", auth: "customerJwt" } }, async (req, reply) => {
    const { customer, created } = await findOrCreateCustomerByEmail(prisma, scopeOf(req), req.jwtClaims!, req.body ?? {});
    return reply.code(created ? 201 : 200).send(customerResource(customer));
  });

  app.get<IdParams>("/v1/customers/:id", { config: { group: "read" } }, async (req) => {
    const { expand } = parseInput(retrieveQuery, req.query);
    const customer = await getCustomer(prisma, scopeOf(req), req.params.id);
    if (!expand) return customerResource(customer);
    const stats = (await customerStats(prisma, [customer.id])).get(customer.id)!;
    return { ...customerResource(customer), ...statsResource(stats) };
  });

  app.get("/v1/customers", { config: { group: "list" } }, async (req) => {
    const page = await listCustomers(prisma, scopeOf(req), req.query);
    return { object: "list", data: page.data.map(customerResource), hasMore: page.hasMore };
  });

  app.patch<IdParams>("/v1/customers/:id", { config: { group: "create" } }, async (req) => {
    return customerResource(await updateCustomer(prisma, scopeOf(req), req.params.id, req.body ?? {}));
  });

  app.delete<IdParams>("/v1/customers/:id", { config: { group: "create" } }, async (req) => {
    await deleteCustomer(prisma, scopeOf(req), req.params.id);
    return { id: req.params.id, object: "customer", deleted: true };
  });
}
