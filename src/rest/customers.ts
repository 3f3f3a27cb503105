// REST /v1/customers: parse, call the domain, shape the response.
import type { FastifyInstance } from "fastify";
import { z } from "zod";
import { createSchema, jwtBodySchema, listSchema, updateSchema } from "../domain/customer-requests.js";
import {
  CustomerResource,
  CustomerWithStats,
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
import { listOf } from "./openapi.js";
import { DeletedCustomer } from "./schemas/components.js";
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
      description:
        "Creates a customer in the key's mode. `email` is unique per mode, compared case-insensitively (409 `customer_email_exists`). Sends `customer.created`.",
      tag,
      body: createSchema,
      example: { email: "jane@example.com", name: "Jane Doe", address: { line1: "1 Main St", city: "Berlin", country: "DE" }, metadata: { crmId: "A-17" } },
      ok: { 201: CustomerResource },
      errors: ["customer_email_exists"],
    },
  } as const;
  app.post("/v1/customers", { config: create }, async (req, reply) => {
    const customer = await createCustomer(prisma, scopeOf(req), parseInput(createSchema, req.body ?? {}));
    return reply.code(201).send(customerResource(customer));
  });

  const jwt = {
    group: "create",
    auth: "customerJwt",
    doc: {
      operationId: "findOrCreateCustomerByJwt",
      summary: "Find or create the customer a customer JWT names (200 found, 201 created)",
      description:
        "For a browser holding a customer JWT (`Authorization: Bearer`, HS256, signed with one of your JWT secrets, whose `kid` names the merchant and mode): the customer of the token's email, created with the body's fields if new (201), else returned as it is (200).",
      tag,
      body: jwtBodySchema,
      ok: { 200: CustomerResource, 201: CustomerResource },
    },
  } as const;
  app.post("/v1/customers/jwt", { config: jwt }, async (req, reply) => {
    const { customer, created } = await findOrCreateCustomerByEmail(prisma, scopeOf(req), req.jwtClaims!, parseInput(jwtBodySchema, req.body ?? {}));
    return reply.code(created ? 201 : 200).send(customerResource(customer));
  });

  const retrieve = {
    group: "read",
    doc: {
      operationId: "getCustomer",
      summary: "Retrieve a customer (expand=stats adds its aggregates)",
      description: "The customer; `expand=stats` adds invoiceCount, chargeCount and totalSpent.",
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
    doc: {
      operationId: "listCustomers",
      summary: "List customers, newest first",
      description: "Newest first, paged by cursor; `email` finds one exactly (case-insensitively), `query` searches email, name and companyName.",
      tag,
      query: listSchema,
      ok: { 200: listOf(CustomerResource) },
    },
  } as const;
  app.get("/v1/customers", { config: list }, async (req) => {
    const page = await listCustomers(prisma, scopeOf(req), parseInput(listSchema, req.query));
    return { object: "list", data: page.data.map(customerResource), hasMore: page.hasMore };
  });

  const update = {
    group: "create",
    doc: {
      operationId: "updateCustomer",
      summary: "Update a customer",
      description:
        "Changes the fields given: `null` clears an optional one, `address` replaces the whole address, metadata keys merge (a key set to null is removed). Sends `customer.updated`.",
      tag,
      body: updateSchema,
      ok: { 200: CustomerResource },
      errors: ["customer_email_exists"],
    },
  } as const;
  app.patch<IdParams>("/v1/customers/:id", { config: update }, async (req) => {
    return customerResource(await updateCustomer(prisma, scopeOf(req), req.params.id, parseInput(updateSchema, req.body ?? {})));
  });

  const remove = {
    group: "create",
    doc: {
      operationId: "deleteCustomer",
      summary: "Delete a customer",
      description:
        "Deletes the customer; its charges and invoices stay, with `customerId: null`. A customer with subscriptions (even ended ones: they are its billing history) is kept: 409 `customer_has_subscriptions`. Sends `customer.deleted`.",
      tag,
      ok: { 200: DeletedCustomer },
      errors: ["customer_has_subscriptions"],
    },
  } as const;
  app.delete<IdParams>("/v1/customers/:id", { config: remove }, async (req) => {
    await deleteCustomer(prisma, scopeOf(req), req.params.id);
    return { id: req.params.id, object: "customer", deleted: true };
  });
}
