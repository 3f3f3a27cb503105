// `Customer`: the type, its queries (`customer`, `customers`) and mutations. Rules live in domain/customers.
import { createSchema, listSchema, updateSchema } from "../../domain/customer-requests.js";
import { describe } from "../../domain/describe.js";
import {
  countCustomers,
  createCustomer,
  customerStats,
  deleteCustomer,
  getCustomer,
  listCustomers,
  updateCustomer,
  CustomerResource,
} from "../../domain/customers.js";
import { relatedCharges } from "../../domain/charges/list.js";
import { storedMetadata } from "../../domain/metadata.js";
import { storedAddress } from "../../domain/postal-address.js";
import { parseInput } from "../../domain/validation.js";
import type { Prisma as P } from "../../generated/prisma/client.js";
import { builder } from "../builder.js";
import { connectionOf, countedConnection, pageEnd, pageRequest, relatedConnection } from "../connection.js";
import { Charge } from "./Charge.js";
import { Address, AddressInput } from "./Address.js";
import { CustomerStats } from "./CustomerStats.js";

export const Customer = builder.prismaNode("Customer", {
  description: "Someone you bill: charges and invoices can name them.",
  id: { field: "id" },
  // Node lookups go through the same merchant-and-mode filter as every other read.
  findUnique: (id, ctx) => ({ id, ...ctx.scope() }),
  fields: (t) => ({
    livemode: t.exposeBoolean("livemode", { description: describe(CustomerResource, "livemode") }),
    email: t.exposeString("email", { description: describe(CustomerResource, "email") }),
    name: t.exposeString("name", { description: describe(CustomerResource, "name") }),
    phone: t.exposeString("phone", { nullable: true, description: describe(CustomerResource, "phone") }),
    address: t.field({ type: Address, nullable: true, description: describe(CustomerResource, "address"), resolve: (c) => storedAddress(c.address) }),
    companyName: t.exposeString("companyName", { nullable: true, description: describe(CustomerResource, "companyName") }),
    taxId: t.exposeString("taxId", { nullable: true, description: describe(CustomerResource, "taxId") }),
    description: t.exposeString("description", { nullable: true, description: describe(CustomerResource, "description") }),
    metadata: t.field({
      type: "Metadata",
      nullable: true,
      description: describe(CustomerResource, "metadata"),
      resolve: (c) => storedMetadata(c.metadata, "customers.metadata"),
    }),
    created: t.int({ description: describe(CustomerResource, "created"), resolve: (c) => Math.floor(c.createdAt.getTime() / 1000) }),
    updated: t.int({ description: describe(CustomerResource, "updated"), resolve: (c) => Math.floor(c.updatedAt.getTime() / 1000) }),
    createdAt: t.field({ type: "DateTime", description: describe(CustomerResource, "createdAt"), resolve: (c) => c.createdAt }),
    updatedAt: t.field({ type: "DateTime", description: describe(CustomerResource, "updatedAt"), resolve: (c) => c.updatedAt }),
    charges: t.connection(
      {
        type: Charge,
        description: "The customer's charges, newest first.",
        resolve: (customer, args, ctx, info) =>
          relatedConnection(ctx, info, customer.id, args, "Charge", (include: P.ChargeInclude | undefined) =>
            relatedCharges(ctx.prisma, ctx.scope(), "customer_id", include),
          ),
      },
      countedConnection("The customer's charges."),
    ),
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
  description: "What is left of a deleted customer: its id.",
  fields: (t) => ({
    id: t.exposeID("id", { description: "The deleted customer's id." }),
    deleted: t.boolean({ description: "Always true.", resolve: () => true }),
  }),
});

const optionalFields = (t: Parameters<Parameters<typeof builder.inputType>[1]["fields"]>[0]) => ({
  phone: t.string({ description: "A phone number, at most 50 characters." }),
  address: t.field({ type: AddressInput, description: "Replaces the whole address; null clears it." }),
  companyName: t.string({ description: "The company billed." }),
  taxId: t.string({ description: "A tax or VAT number." }),
  description: t.string({ description: "Your note about the customer." }),
  metadata: t.field({ type: "Metadata", description: "Merged into the existing metadata; a key set to null is removed." }),
});

const CreateCustomerInput = builder.inputType("CreateCustomerInput", {
  description: "A new customer.",
  fields: (t) => ({
    email: t.string({ required: true, description: "Unique among your customers of the mode." }),
    name: t.string({ required: true, description: "The customer's name." }),
    ...optionalFields(t),
  }),
});

const UpdateCustomerInput = builder.inputType("UpdateCustomerInput", {
  description: "The fields to change; an absent one stays as it is.",
  fields: (t) => ({
    email: t.string({ description: "Unique among your customers of the mode." }),
    name: t.string({ description: "The customer's name." }),
    ...optionalFields(t),
  }),
});

builder.queryFields((t) => ({
  customer: t.prismaField({
    type: "Customer",
    description: "A customer by id; resource_missing when the key's merchant and mode have none.",
    args: { id: t.arg.id({ required: true, description: "The customer's id (cus_…)." }) },
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
        const query = parseInput(listSchema, { ...filters, ...pageRequest(args) });
        const page = await listCustomers(ctx.prisma, scope, query, pageEnd(args));
        return connectionOf(page, args, () => countCustomers(ctx.prisma, scope, query));
      },
    },
    countedConnection("Customers matching the filters."),
  ),
}));

builder.mutationFields((t) => ({
  createCustomer: t.prismaField({
    type: "Customer",
    description: "Creates a customer; customer_email_exists when the email is taken.",
    args: { input: t.arg({ type: CreateCustomerInput, required: true, description: "The customer." }) },
    resolve: (_query, _root, { input }, ctx) => createCustomer(ctx.prisma, ctx.scope(), parseInput(createSchema, { ...input })),
  }),
  updateCustomer: t.prismaField({
    type: "Customer",
    description: "Changes the given fields; null clears an optional one.",
    args: {
      id: t.arg.id({ required: true, description: "The customer's id (cus_…)." }),
      input: t.arg({ type: UpdateCustomerInput, required: true, description: "The changes." }),
    },
    resolve: (_query, _root, { id, input }, ctx) => updateCustomer(ctx.prisma, ctx.scope(), id, parseInput(updateSchema, { ...input })),
  }),
  deleteCustomer: t.field({
    type: DeletedCustomer,
    description: "Deletes permanently; linked charges and invoices keep existing with no customer. customer_has_subscriptions while it has any subscription.",
    args: { id: t.arg.id({ required: true, description: "The customer's id (cus_…)." }) },
    resolve: async (_root, { id }, ctx) => {
      await deleteCustomer(ctx.prisma, ctx.scope(), id);
      return { id };
    },
  }),
}));
