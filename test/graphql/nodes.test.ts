// node(id:) and nodes(ids:) find every type that implements Node. The list of types is the served
// schema's own (its implementations of Node), so a new node type fails here until it can be made
// below and its id prefix is in src/graphql/ids.ts.
import { getAddress } from "ethers";
import { type GraphQLInterfaceType, type GraphQLObjectType } from "graphql";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { typenameOfId } from "../../src/graphql/ids.js";
import { schema } from "../../src/graphql/schema.js";
import { writeEmail } from "../helpers/email-rows.js";
import { POLLING, startApp, type TestApp } from "../helpers/harness.js";
import { ChainHistory, chargeOn } from "../helpers/ledger.js";

const DEVNET = 31337;
const BUYER = getAddress("0x00000000000000000000000000000000000b0b03");
const FEE_WALLET = getAddress("0x00000000000000000000000000000000000fee03");

const implementers = schema.getImplementations(schema.getType("Node") as GraphQLInterfaceType).objects.map((t: GraphQLObjectType) => t.name);

let app: TestApp;
beforeAll(async () => {
  app = await startApp(POLLING);
});
afterAll(() => app?.stop());

/** Runs `query` with the test key; its data, after checking it has no errors. */
async function gql(query: string, variables: Record<string, unknown> = {}) {
  const res = await app.gql(query, variables);
  expect(res.errors, JSON.stringify(res.errors)).toBeUndefined();
  return res.data;
}

let made = 0;
/** One object of each node type, made through the API; each returns the new object's id. */
const makers: Record<string, () => Promise<string>> = {
  Customer: async () =>
    (await gql(`mutation($i: CreateCustomerInput!) { createCustomer(input: $i) { id } }`, { i: { email: `n${++made}@nodes.example`, name: "Node" } }))
      .createCustomer.id,
  Charge: async () =>
    (await gql(`mutation($i: CreateChargeInput!) { createCharge(input: $i) { id } }`, { i: { orderId: `node-${++made}`, amount: "5.00" } })).createCharge.id,
  Event: async () => {
    const charge = await makers.Charge!();
    return (await gql(`query($id: ID!) { charge(id: $id) { events { id } } }`, { id: charge })).charge.events[0].id;
  },
  WebhookEndpoint: async () =>
    (
      await gql(`mutation($i: CreateWebhookEndpointInput!) { createWebhookEndpoint(input: $i) { endpoint { id } } }`, {
        i: { url: "http://127.0.0.1:9/hooks" },
      })
    ).createWebhookEndpoint.endpoint.id,
  Refund: async () => {
    // A refund needs confirmed money: a payment and its payout, recorded as the indexer does.
    const devnet = new ChainHistory(app, DEVNET);
    const charge = await chargeOn(app, app.testKey, DEVNET, "10.00");
    await devnet.sees({ from: BUYER, to: charge.address, amount: "10.00" });
    await devnet.confirm(new Date());
    await devnet.paysOut(charge.address, "10.00", FEE_WALLET);
    await devnet.confirm(new Date());
    const refund = await gql(`mutation($id: ID!, $i: CreateRefundInput) { createRefund(chargeId: $id, input: $i) { id } }`, {
      id: charge.id,
      i: { amount: "1.00", address: BUYER },
    });
    return refund.createRefund.id;
  },
  Invoice: async () => {
    const customer = await makers.Customer!();
    const input = { customerId: customer, lineItems: [{ description: "A thing", quantity: 1, unitAmount: "3.00" }] };
    return (await gql(`mutation($i: CreateInvoiceInput!) { createInvoice(input: $i) { id } }`, { i: input })).createInvoice.id;
  },
  PaymentLink: async () =>
    (await gql(`mutation($i: CreatePaymentLinkInput!) { createPaymentLink(input: $i) { id } }`, { i: { name: `Link ${++made}`, amount: "4.00" } }))
      .createPaymentLink.id,
  Plan: async () =>
    (await gql(`mutation($i: CreatePlanInput!) { createPlan(input: $i) { id } }`, { i: { name: `Plan ${++made}`, amount: "5.00", interval: "MONTH" } }))
      .createPlan.id,
  CustomerSubscription: async () => {
    const [customerId, planId] = [await makers.Customer!(), await makers.Plan!()];
    return (await gql(`mutation($i: CreateSubscriptionInput!) { createSubscription(input: $i) { id } }`, { i: { customerId, planId } })).createSubscription.id;
  },
  // Emails are written by the service, never through the API: one as the domain writes it.
  Email: () => writeEmail(app.db.prisma, app.merchant.merchant.id),
};

describe("node and nodes, for every type that implements Node", () => {
  const ids = new Map<string, string>();
  beforeAll(async () => {
    for (const name of implementers) if (makers[name]) ids.set(name, await makers[name]());
  }, 60_000);

  it("can make one of each (a new node type needs a maker here)", () => {
    expect(implementers.length).toBeGreaterThanOrEqual(7);
    expect(Object.keys(makers).sort()).toEqual([...implementers].sort());
  });

  it.each(implementers)("finds a %s through node(id:), its id naming its type", async (name) => {
    const id = ids.get(name)!;
    expect(typenameOfId(id)).toBe(name);
    expect(await gql(`query($id: ID!) { node(id: $id) { __typename id } }`, { id })).toEqual({ node: { __typename: name, id } });
  });

  it("finds them all through nodes(ids:), in order", async () => {
    const all = implementers.map((name) => ({ __typename: name, id: ids.get(name)! }));
    const reversed = [...all].reverse();
    expect(await gql(`query($ids: [ID!]!) { nodes(ids: $ids) { __typename id } }`, { ids: reversed.map((n) => n.id) })).toEqual({ nodes: reversed });
  });

  it("finds nothing of another mode's", async () => {
    const live = await app.gql(`query($ids: [ID!]!) { nodes(ids: $ids) { id } }`, { ids: [...ids.values()] }, app.liveKey);
    expect(live).toEqual({ data: { nodes: [...ids.values()].map(() => null) } });
  });
});
