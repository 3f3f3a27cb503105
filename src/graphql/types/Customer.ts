// `Customer`: the type, its queries (`customer`, `customers`) and mutations. Rules live in domain/customers.
import { countCustomers, createCustomer, customerStats, deleteCustomer, getCustomer, listCustomers, updateCustomer } from "../../domain/customers.js";
import { CHARGE_ORDER } from "../../domain/charges.js";
import type { Metadata } from "../../domain/metadata.js";
import { builder } from "../builder.js";
import { connectionOf, countedConnection, pageRequest } from "../connection.js";
import { Address, AddressInput } from "./Address.js";
import { CustomerStats } from "./CustomerStats.js";

export const Customer = builder.prismaNode("Customer", {
  id: { field: "id" },
  // Node lookups go through the same merchant-and-mode filter as every other read.
  findUnique: (id, ctx) => ({ id, ...ctx.scope() }),
  fields: (t) => ({
    livemode: t.exposeBoolean("livemode"),
    email: t.exposeString("email"),
    name: t.exposeString("name"),
    phone: t.exposeString("phone", { nullable: true }),
    address: t.field({ type: Address, nullable: true, resolve: (c) => c.address as never }),
    companyName: t.exposeString("companyName", { nullable: true }),
    taxId: t.exposeString("taxId", { nullable: true }),
    description: t.exposeString("description", { nullable: true }),
    metadata: t.field({ type: "Metadata", nullable: true, resolve: (c) => c.metadata as Metadata | null }),
    created: t.int({ description: "Unix timestamp (seconds) of creation.", resolve: (c) => Math.floor(c.createdAt.getTime() / 1000) }),
    updated: t.int({ description: "Unix timestamp (seconds) of the last update.", resolve: (c) => Math.floor(c.updatedAt.getTime() / 1000) }),
    charges: t.relatedConnection("charges", {
      cursor: "id",
      totalCount: true,
      defaultSize: 10,
      maxSize: 100,
      description: "The customer's charges, newest first.",
      query: () => ({ orderBy: CHARGE_ORDER }),
    }),
    stats: t.loadable({
      type: CustomerStats,
      description: "Counts and total spent; computed only when asked for, batched across a list.",
      load: async (ids: string[], ctx) => {
        const stats = await customerStats(ctx.prisma, ids);
        return ids.map((id) => stats.get(id)!);
      },
      resolve: (c) => c.id,
    }),
  }),
});

const DeletedCustomer = builder.objectRef<{ id: string }>("DeletedCustomer").implement({
  fields: (t) => ({
    id: t.exposeID("id"),
    deleted: t.boolean({ resolve: () => true }),
  }),
});

const optionalFields = (t: Parameters<Parameters<typeof builder.inputType>[1]["fields"]>[0]) => ({
  phone: t.string(),
  address: t.field({ type: AddressInput, description: "Replaces the whole address; null clears it." }),
  companyName: t.string(),
  taxId: t.string(),
  description: t.string(),
  metadata: t.field({ type: "Metadata", description: "Merged into the existing metadata; a key set to null is removed." }),
});

const CreateCustomerInput = builder.inputType("CreateCustomerInput", {
  fields: (t) => ({ email: t.string({ required: true }), name: t.string({ required: true }), ...optionalFields(t) }),
});

const UpdateCustomerInput = builder.inputType("UpdateCustomerInput", {
  fields: (t) => ({ email: t.string(), name: t.string(), ...optionalFields(t) }),
});

builder.queryFields((t) => ({
  customer: t.prismaField({
    type: "Customer",
    args: { id: t.arg.id({ required: true }) },
    resolve: (_query, _root, args, ctx) => getCustomer(ctx.prisma, ctx.scope(), args.id),
  }),
  customers: t.connection(
    {
      type: Customer,
      description: "Customers, newest first.",
      args: {
        email: t.arg.string({ description: "Exact email, compared case-insensitively." }),
        query: t.arg.string({ description: "Case-insensitive substring of email, name or company name." }),
      },
      resolve: async (_root, args, ctx) => {
        const scope = ctx.scope();
        const filters = { email: args.email ?? undefined, query: args.query ?? undefined };
        const page = await listCustomers(ctx.prisma, scope, { ...filters, ...pageRequest(args) });
        return connectionOf(page, args, () => countCustomers(ctx.prisma, scope, filters));
      },
    },
    countedConnection("Customers matching the filters."),
  ),
}));

builder.mutationFields((t) => ({
  createCustomer: t.prismaField({
    type: "Customer",
    args: { input: t.arg({ type: CreateCustomerInput, required: true }) },
    resolve: (_query, _root, { input }, ctx) => createCustomer(ctx.prisma, ctx.scope(), { ...input }),
  }),
  updateCustomer: t.prismaField({
    type: "Customer",
    description: "Changes the given fields; null clears an optional one.",
    args: { id: t.arg.id({ required: true }), input: t.arg({ type: UpdateCustomerInput, required: true }) },
    resolve: (_query, _root, { id, input }, ctx) => updateCustomer(ctx.prisma, ctx.scope(), id, { ...input }),
  }),
  deleteCustomer: t.field({
    type: DeletedCustomer,
    description: "Deletes permanently; linked charges and invoices keep existing with no customer.",
    args: { id: t.arg.id({ required: true }) },
    resolve: async (_root, { id }, ctx) => {
      await deleteCustomer(ctx.prisma, ctx.scope(), id);
      return { id };
    },
  }),
}));
