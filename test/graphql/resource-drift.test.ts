// Each resource is described once, on its REST resource (the zod schema the OpenAPI document is
// printed from): the GraphQL type that shows the same object must give each common field the same
// description, a compatible type and the same nullability, and a field on one side only must be
// listed below with the reason. The charges CSV's columns are resource fields, described the same.
// A planted pair that drifts shows the checker can fail.
import {
  type GraphQLField,
  type GraphQLNamedType,
  type GraphQLObjectType,
  getNamedType,
  isEnumType,
  isListType,
  isNonNullType,
  isObjectType,
  isScalarType,
} from "graphql";
import { describe as suite, expect, it } from "vitest";
import { z } from "zod";
import { BalanceTransactionResource } from "../../src/domain/balance-transactions.js";
import { ChargeAuthorizationResource } from "../../src/domain/charge-authorizations.js";
import { ChargeResource } from "../../src/domain/charges/resource.js";
import { CHARGE_CSV_COLUMNS, chargeCsvColumns } from "../../src/domain/charges-csv.js";
import { CustomerResource } from "../../src/domain/customers.js";
import { describe } from "../../src/domain/describe.js";
import { EmailResource } from "../../src/domain/emails.js";
import { DeliveryResource, EventResource } from "../../src/domain/events.js";
import { InvoiceResource } from "../../src/domain/invoices.js";
import { PaymentLinkResource } from "../../src/domain/payment-links.js";
import { PaymentResource } from "../../src/domain/payment-schema.js";
import { PayoutResource } from "../../src/domain/payout-list.js";
import { AddressResource } from "../../src/domain/postal-address.js";
import { RefundResource } from "../../src/domain/refunds.js";
import { SettlementResource } from "../../src/domain/settlements.js";
import { PlanResource, SubscriptionResource } from "../../src/domain/subscriptions.js";
import { SweepResource } from "../../src/domain/sweeps.js";
import { WebhookEndpointResource } from "../../src/domain/webhook-endpoints.js";
import { schema } from "../../src/graphql/schema.js";

type Resource = z.ZodObject<Record<string, z.ZodType>>;

/** A GraphQL type and the REST resource of the same object, with the fields only one side has and why. */
interface Pair {
  type: string;
  resource: Resource;
  /** Fields only GraphQL has: field → why. */
  graphqlOnly?: Record<string, string>;
  /** Fields only REST has: field → why. */
  restOnly?: Record<string, string>;
  /** Common fields nullable on one side only: field → why. */
  nullability?: Record<string, string>;
}

const element = (schema: z.ZodType): Resource => (schema instanceof z.ZodArray ? element(schema.element as z.ZodType) : (schema as Resource));
const unwrap = (schema: z.ZodType): z.ZodType =>
  schema instanceof z.ZodNullable || schema instanceof z.ZodOptional ? unwrap(schema.unwrap() as z.ZodType) : schema;

// REST writes each resource's kind in `object` (GraphQL has __typename) and links other objects by
// id, where GraphQL gives the linked object itself: these differences are the two APIs' styles.
const OBJECT = { object: "REST names the kind in `object`; GraphQL has __typename." };
const CONNECTIONS = "a GraphQL connection; REST lists them with a filter";

const PAIRS: Pair[] = [
  {
    type: "Charge",
    resource: ChargeResource,
    graphqlOnly: {
      customer: "the linked customer (REST: customerId)",
      invoice: "the linked invoice (REST: invoiceId)",
      paymentLink: "the linked payment link (REST: paymentLinkId)",
      displayStatus: "the dashboard's refined status; REST clients derive it from the money fields",
      payments: "its transfers, pending ones too; REST events carry the confirmed ones (data.payments)",
      refunds: CONNECTIONS,
      refundable: "the per-chain refund limits the dashboard's refund form needs",
      amountRefundable: "read from its refunds when asked; REST's createRefund answers refund_exceeds_refundable beyond it",
      sweeps: "its sweeps of stray assets, which chargeUpdated sends as they change; sweeps are asked for in the dashboard, GraphQL and the CLI, not over REST",
      events: CONNECTIONS,
      balanceTransactions: CONNECTIONS,
    },
    restOnly: { ...OBJECT, customerId: "GraphQL: customer { id }", invoiceId: "GraphQL: invoice { id }", paymentLinkId: "GraphQL: paymentLink { id }" },
  },
  { type: "StrayAsset", resource: element(ChargeResource.shape.strayAssets) },
  { type: "Settlement", resource: SettlementResource },
  { type: "Payment", resource: PaymentResource, restOnly: { chainId: "GraphQL's Payment is read under its charge, whose chainId it is" } },
  {
    type: "Customer",
    resource: CustomerResource,
    graphqlOnly: { charges: CONNECTIONS, invoices: CONNECTIONS, subscriptions: CONNECTIONS, stats: "REST gives them with ?expand=stats on its own shape" },
    restOnly: OBJECT,
  },
  {
    type: "Address",
    resource: AddressResource,
    // GraphQL says "absent" with null, REST with "" (domain/postal-address.ts): the same texts describe both.
    nullability: Object.fromEntries(
      ["line1", "line2", "city", "state", "postalCode", "country"].map((f) => [f, 'a part not given: null in GraphQL, "" in REST']),
    ),
  },
  {
    type: "Invoice",
    resource: InvoiceResource,
    graphqlOnly: {
      customer: "the linked customer (REST: customerId)",
      subscription: "the linked subscription (REST: subscriptionId, which GraphQL has too)",
      charges: CONNECTIONS,
      pdfUrl: "REST serves the PDF at GET /v1/invoices/{id}/pdf",
    },
    restOnly: { ...OBJECT, customerId: "GraphQL: customer { id }" },
  },
  { type: "InvoiceLineItem", resource: element(InvoiceResource.shape.lineItems) },
  {
    type: "Refund",
    resource: RefundResource,
    graphqlOnly: { charge: "the refunded charge (REST: chargeId)" },
    restOnly: { ...OBJECT, chargeId: "GraphQL: charge { id }", authorization: "the EIP-3009 relay state, read over REST only" },
  },
  { type: "BalanceTransaction", resource: BalanceTransactionResource, restOnly: OBJECT },
  { type: "Payout", resource: PayoutResource },
  { type: "Sweep", resource: SweepResource, restOnly: OBJECT },
  { type: "Plan", resource: PlanResource, restOnly: OBJECT },
  {
    type: "CustomerSubscription",
    resource: SubscriptionResource,
    graphqlOnly: { customer: "the billed customer (REST: customerId)", plan: "its plan (REST: planId)", invoices: CONNECTIONS },
    restOnly: { ...OBJECT, customerId: "GraphQL: customer { id }", planId: "GraphQL: plan { id }" },
  },
  { type: "PaymentLink", resource: PaymentLinkResource, graphqlOnly: { charges: CONNECTIONS }, restOnly: OBJECT },
  { type: "Event", resource: EventResource, graphqlOnly: { deliveries: "REST gives them beside the event on GET /v1/events/{id}, not in the webhook body" } },
  { type: "WebhookDelivery", resource: DeliveryResource },
  { type: "WebhookAttempt", resource: element(DeliveryResource.shape.attempts) },
  {
    type: "WebhookEndpoint",
    resource: WebhookEndpointResource,
    restOnly: { ...OBJECT, secret: "GraphQL gives it on WebhookEndpointWithSecret, from the mutations that make one" },
  },
  { type: "ChargeAuthorization", resource: ChargeAuthorizationResource, restOnly: OBJECT },
  { type: "Email", resource: EmailResource, graphqlOnly: { html: "the dashboard's preview; REST gives the text part" }, restOnly: OBJECT },
];

/** What is wrong between `type` and `resource`: one line per drifted field, empty when they agree. */
function drift({ type: name, resource, graphqlOnly = {}, restOnly = {}, nullability = {} }: Pair): string[] {
  const type = schema.getType(name);
  if (!isObjectType(type)) return [`${name} is not a GraphQL object type`];
  const fields = type.getFields();
  const shape = resource.shape;
  const problems: string[] = [];
  for (const field of Object.keys(fields)) {
    // A node's id is described once, by the Node interface (builder.ts), for every node type.
    if (field === "id" && type.getInterfaces().some((i) => i.name === "Node")) continue;
    if (field in shape) problems.push(...fieldDrift(`${name}.${field}`, fields[field]!, shape[field]!, field in nullability));
    else if (!(field in graphqlOnly)) problems.push(`${name}.${field}: only in GraphQL and not listed as such`);
  }
  for (const field of Object.keys(shape)) {
    if (!(field in fields) && !(field in restOnly)) problems.push(`${name}.${field}: only in the REST resource and not listed as such`);
  }
  for (const field of Object.keys(graphqlOnly)) if (!(field in fields) || field in shape) problems.push(`${name}.${field}: listed as GraphQL-only but is not`);
  for (const field of Object.keys(restOnly)) if (!(field in shape) || field in fields) problems.push(`${name}.${field}: listed as REST-only but is not`);
  return problems;
}

/** How one field common to both sides differs: description, type, nullability. */
function fieldDrift(where: string, field: GraphQLField<unknown, unknown>, rest: z.ZodType, nullabilityDiffers: boolean): string[] {
  const problems: string[] = [];
  const restText = rest.description ?? unwrap(rest).description;
  if (field.description !== restText) problems.push(`${where}: GraphQL says ${JSON.stringify(field.description)}, REST ${JSON.stringify(restText)}`);
  const restNullable = rest instanceof z.ZodNullable || rest instanceof z.ZodOptional;
  if (restNullable === isNonNullType(field.type) && !nullabilityDiffers) problems.push(`${where}: nullable in ${restNullable ? "REST" : "GraphQL"} only`);
  const mismatch = typeMismatch(field.type, unwrap(rest));
  if (mismatch) problems.push(`${where}: ${mismatch}`);
  return problems;
}

/** Why a GraphQL type cannot carry a REST value of schema `rest`; null when it can. */
function typeMismatch(graphqlType: GraphQLField<unknown, unknown>["type"], rest: z.ZodType): string | null {
  const inner = isNonNullType(graphqlType) ? graphqlType.ofType : graphqlType;
  if (rest instanceof z.ZodArray) return isListType(inner) ? null : "a list in REST only";
  if (isListType(inner)) return "a list in GraphQL only";
  const named: GraphQLNamedType = getNamedType(graphqlType);
  // Amount is the REST decimal string and DateTime the REST ISO 8601 text, printed by the same code.
  const fits: [boolean, string][] = [
    [rest instanceof z.ZodString, "String ID Amount DateTime"],
    [rest instanceof z.ZodNumber, "Int Float"],
    [rest instanceof z.ZodBoolean, "Boolean"],
    [rest instanceof z.ZodRecord, "Metadata"],
    [rest instanceof z.ZodUnknown, "JSON"],
    [rest instanceof z.ZodLiteral, "String"],
  ];
  if (rest instanceof z.ZodEnum) return isEnumType(named) || named.name === "String" ? null : `an enum in REST, ${named.name} in GraphQL`;
  if (rest instanceof z.ZodObject) return isObjectType(named) ? null : `an object in REST, ${named.name} in GraphQL`;
  const fit = fits.find(([is]) => is);
  if (!fit) return `REST type ${rest.constructor.name} has no GraphQL counterpart here`;
  return isScalarType(named) && fit[1].split(" ").includes(named.name) ? null : `GraphQL ${named.name} cannot carry REST's ${rest.constructor.name}`;
}

suite("each resource is described once", () => {
  it.each(PAIRS.map((p) => [p.type, p] as const))("%s agrees with its REST resource", (_name, pair) => {
    expect(drift(pair)).toEqual([]);
  });

  it("money and instants are Amount and DateTime, never a bare String", () => {
    // StrayAsset.amount is base units of any token (not USDC), so it stays a String of digits.
    const allowed = new Set(["StrayAsset.amount"]);
    const bare: string[] = [];
    for (const type of Object.values(schema.getTypeMap())) {
      if (!isObjectType(type) || type.name.startsWith("__")) continue;
      for (const field of Object.values((type as GraphQLObjectType).getFields())) {
        const looksLike = /(At|amount|Amount|Received|Spent|total|Total)$/.test(field.name);
        if (looksLike && getNamedType(field.type).name === "String" && !allowed.has(`${type.name}.${field.name}`)) bare.push(`${type.name}.${field.name}`);
      }
    }
    expect(bare).toEqual([]);
  });

  it("the charges CSV's columns are ChargeResource fields, described by it", () => {
    for (const column of CHARGE_CSV_COLUMNS) expect(Object.keys(ChargeResource.shape)).toContain(column);
    const texts = Object.fromEntries(Object.entries(ChargeResource.shape).map(([field, schema]) => [field, schema.description ?? unwrap(schema).description]));
    // customerEmail holds the linked customer's email, not the API field's payment-link email (charges-csv.ts).
    const own = new Set(["customerEmail"]);
    const columns = chargeCsvColumns().filter((c) => !own.has(c.name));
    expect(columns).toEqual(CHARGE_CSV_COLUMNS.filter((name) => !own.has(name)).map((name) => ({ name, description: texts[name] })));
  });

  it("fails on a planted drift: another text, another nullability, an unlisted field", () => {
    const planted = z.object({
      amount: z.string().nullable().describe("Something else."),
      livemode: z.boolean().describe(describe(ChargeResource, "livemode")),
      notInGraphQL: z.string(),
    });
    const problems = drift({ type: "Charge", resource: planted as unknown as Resource, graphqlOnly: { livemode: "wrongly listed" } });
    expect(problems).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^Charge\.amount: GraphQL says .*, REST "Something else\."$/),
        "Charge.amount: nullable in REST only",
        "Charge.notInGraphQL: only in the REST resource and not listed as such",
        "Charge.livemode: listed as GraphQL-only but is not",
        "Charge.orderId: only in GraphQL and not listed as such",
      ]),
    );
    expect(problems.some((p) => p.startsWith("Charge.livemode: GraphQL says"))).toBe(false);
  });

  it("describe() refuses a field with no text", () => {
    expect(() => describe(z.object({ bare: z.string() }), "bare")).toThrow("The resource field bare has no .describe() text.");
  });
});
