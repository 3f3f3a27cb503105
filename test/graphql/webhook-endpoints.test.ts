// Webhook endpoints over GraphQL: the same rules as REST's /v1/webhook_endpoints (one domain module),
// in the key's merchant and mode, the secret only in the mutations that make one.
import { afterAll, beforeAll, expect, it } from "vitest";
import { startApp, type TestApp } from "../helpers/harness.js";

let app: TestApp;
beforeAll(async () => {
  app = await startApp();
});
afterAll(() => app?.stop());

const FIELDS = "id livemode url events description status createdAt";

it("creates, lists, updates, rotates and deletes; another merchant sees none of it", async () => {
  const created = await app.gql(`mutation($input: CreateWebhookEndpointInput!) { createWebhookEndpoint(input: $input) { secret endpoint { ${FIELDS} } } }`, {
    input: { url: "http://127.0.0.1:9/hooks", events: ["charge.completed"], description: "orders" },
  });
  expect(created.errors).toBeUndefined();
  const { secret, endpoint } = created.data.createWebhookEndpoint;
  expect(secret).toMatch(/^whsec_/);
  expect(endpoint).toMatchObject({
    id: expect.stringMatching(/^whep_/),
    livemode: false,
    events: ["charge.completed"],
    description: "orders",
    status: "ENABLED",
  });
  // The same record as REST shows.
  const rest = (await app.call("GET", `/v1/webhook_endpoints/${endpoint.id}`)).body;
  expect(rest).toMatchObject({ url: endpoint.url, events: endpoint.events, status: "enabled", createdAt: endpoint.createdAt });

  const listed = await app.gql(`{ webhookEndpoints(first: 5) { totalCount edges { node { id } } } }`);
  expect(listed.data.webhookEndpoints.edges.map((e: { node: { id: string } }) => e.node.id)).toContain(endpoint.id);
  const node = await app.gql(`query($id: ID!) { node(id: $id) { ... on WebhookEndpoint { url } } }`, { id: endpoint.id });
  expect(node.data.node).toEqual({ url: "http://127.0.0.1:9/hooks" });

  const updated = await app.gql(`mutation($id: ID!) { updateWebhookEndpoint(id: $id, input: { status: DISABLED, events: [] }) { status events } }`, {
    id: endpoint.id,
  });
  expect(updated.data.updateWebhookEndpoint).toEqual({ status: "DISABLED", events: [] });

  const rotated = await app.gql(`mutation($id: ID!) { rotateWebhookEndpointSecret(id: $id, overlapHours: 0) { secret } }`, { id: endpoint.id });
  expect(rotated.data.rotateWebhookEndpointSecret.secret).toMatch(/^whsec_/);
  expect(rotated.data.rotateWebhookEndpointSecret.secret).not.toBe(secret);
  const tooLong = await app.gql(`mutation($id: ID!) { rotateWebhookEndpointSecret(id: $id, overlapHours: 500) { secret } }`, { id: endpoint.id });
  expect(tooLong.errors?.[0].extensions).toMatchObject({ code: "parameter_invalid", param: "overlapHours" });

  const other = (await app.newMerchant()).apiKeys.test.secret;
  const foreign = await app.gql(`query($id: ID!) { webhookEndpoint(id: $id) { id } }`, { id: endpoint.id }, other);
  expect(foreign.errors?.[0].extensions).toMatchObject({ code: "resource_missing" });
  expect((await app.gql(`query($id: ID!) { node(id: $id) { id } }`, { id: endpoint.id }, other)).data.node).toBeNull();
  expect((await app.gql(`{ webhookEndpoints { totalCount } }`, {}, other)).data.webhookEndpoints.totalCount).toBe(0);

  const live = await app.gql(`mutation { createWebhookEndpoint(input: { url: "https://10.0.0.1/x" }) { secret } }`, {}, app.liveKey);
  expect(live.errors?.[0].extensions).toMatchObject({ code: "parameter_invalid", param: "url" });

  const deleted = await app.gql(`mutation($id: ID!) { deleteWebhookEndpoint(id: $id) { id deleted } }`, { id: endpoint.id });
  expect(deleted.data.deleteWebhookEndpoint).toEqual({ id: endpoint.id, deleted: true });
  expect((await app.gql(`query($id: ID!) { webhookEndpoint(id: $id) { id } }`, { id: endpoint.id })).errors?.[0].extensions.code).toBe("resource_missing");
});
