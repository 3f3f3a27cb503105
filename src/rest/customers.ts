// REST /v1/customers: parse, call the domain, shape the response.
import type { FastifyInstance } from "fastify";
import { z } from "zod";
import {
  CustomerResource,
  CustomerWithStats,
  createCustomer,
  createSchema,
  customerResource,
  customerStats,
  deleteCustomer,
  findOrCreateCustomerByEmail,
  getCustomer,
  jwtBodySchema,
  listCustomers,
  listSchema,
  statsResource,
  updateCustomer,
  updateSchema,
} from "../domain/customers.js";
import { parseInput } from "../domain/validation.js";
import { deletedOf, listOf } from "./openapi.js";
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
  const tag = "Customers";
  const create = {
    group: "create",
    doc: {
      operationId: "createCustomer",
      summary: "Create a customer",
      tag,
      body: createSchema,
      example: { email: "jane@example.com", name: "Jane Doe", address: { line1: "1 Main St", city: "Berlin", country: "DE" }, metadata: { crmId: "A-17" } },
      ok: { 201: CustomerResource },
      errors: ["customer_email_exists"],
    },
  } as const;
  app.post("/v1/customers", { config: create }, async (req, reply) => {
    const customer = await createCustomer(prisma, scopeOf(req), req.body ?? {});
    return reply.code(201).send(customerResource(customer));
  });

  const jwt = {
    group: "create",
    auth: "customerJwt",
    doc: {
      operationId: "findOrCreateCustomerByJwt",
      summary: "Find or create the customer a customer JWT names (200 found, 201 created)",
      tag,
      body: jwtBodySchema,
      ok: { 200: CustomerResource, 201: CustomerResource },
    },
  } as const;
  app.post("/v1/customers/jwt", { config: jwt }, async (req, reply) => {
    const { customer, created } = await findOrCreateCustomerByEmail(prisma, scopeOf(req), req.jwtClaims!, req.body ?? {});
    return reply.code(created ? 201 : 200).send(customerResource(customer));
  });

  const retrieve = {
    group: "read",
    doc: {
      operationId: "getCustomer",
      summary: "Retrieve a customer (expand=stats adds its aggregates)",
      tag,
      query: retrieveQuery,
      ok: { 200: z.union([CustomerWithStats, CustomerResource]) },
    },
  } as const;
  app.get<IdParams>("/v1/customers/:id", { config: retrieve }, async (req) => {
    const { expand } = parseInput(retrieveQuery, req.query);
    const customer = await getCustomer(prisma, scopeOf(req), req.params.id);
    if (!expand) return customerResource(customer);
    const stats = (await customerStats(prisma, [customer.id])).get(customer.id)!;
    return { ...customerResource(customer), ...statsResource(stats) };
  });

  const list = {
    group: "list",
    doc: { operationId: "listCustomers", summary: "List customers, newest first", tag, query: listSchema, ok: { 200: listOf(CustomerResource) } },
  } as const;
  app.get("/v1/customers", { config: list }, async (req) => {
    const page = await listCustomers(prisma, scopeOf(req), req.query);
    return { object: "list", data: page.data.map(customerResource), hasMore: page.hasMore };
  });

  const update = {
    group: "create",
    doc: {
      operationId: "updateCustomer",
      summary: "Update a customer",
      tag,
      body: updateSchema,
      ok: { 200: CustomerResource },
      errors: ["customer_email_exists"],
    },
  } as const;
  app.patch<IdParams>("/v1/customers/:id", { config: update }, async (req) => {
    return customerResource(await updateCustomer(prisma, scopeOf(req), req.params.id, req.body ?? {}));
  });

  const remove = { group: "create", doc: { operationId: "deleteCustomer", summary: "Delete a customer", tag, ok: { 200: deletedOf("customer") } } } as const;
  app.delete<IdParams>("/v1/customers/:id", { config: remove }, async (req) => {
    await deleteCustomer(prisma, scopeOf(req), req.params.id);
    return { id: req.params.id, object: "customer", deleted: true };
  });
}
