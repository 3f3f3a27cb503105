// `WebhookEndpoint`: where the key's merchant gets its events in the key's mode, managed like REST's
// /v1/webhook_endpoints. The signing secret is shown only by the mutations that make one. Rules live
// in domain/webhook-endpoints.ts.
import {
  countWebhookEndpoints,
  createWebhookEndpoint,
  deleteWebhookEndpoint,
  endpointStatus,
  getWebhookEndpoint,
  listWebhookEndpoints,
  rotateWebhookSecret,
  updateWebhookEndpoint,
  type WebhookEndpoint as Endpoint,
} from "../../domain/webhook-endpoints.js";
import { builder } from "../builder.js";
import { connectionOf, countedConnection, pageRequest } from "../connection.js";

const WebhookEndpointStatus = builder.enumType("WebhookEndpointStatus", {
  description: "DISABLED: nothing is sent (the merchant paused it, or it answered 410 Gone); events wait until it is enabled.",
  values: { ENABLED: { value: "enabled" }, DISABLED: { value: "disabled" } } as const,
});

const WebhookEndpoint = builder.prismaNode("WebhookEndpoint", {
  id: { field: "id" },
  findUnique: (id, ctx) => ({ id, ...ctx.scope() }),
  fields: (t) => ({
    livemode: t.exposeBoolean("livemode"),
    url: t.exposeString("url"),
    events: t.exposeStringList("eventTypes", { description: "The event types sent here; empty means every type." }),
    description: t.exposeString("description", { nullable: true }),
    status: t.field({ type: WebhookEndpointStatus, resolve: endpointStatus }),
    createdAt: t.string({ resolve: (e) => e.createdAt.toISOString() }),
  }),
});

const WebhookEndpointWithSecret = builder.objectRef<{ endpoint: Endpoint; secret: string }>("WebhookEndpointWithSecret").implement({
  description: "An endpoint with its new signing secret (whsec_…), shown this once.",
  fields: (t) => ({
    endpoint: t.field({ type: WebhookEndpoint, resolve: (r) => r.endpoint }),
    secret: t.exposeString("secret"),
  }),
});

const DeletedWebhookEndpoint = builder.objectRef<{ id: string }>("DeletedWebhookEndpoint").implement({
  fields: (t) => ({
    id: t.exposeID("id"),
    deleted: t.boolean({ resolve: () => true }),
  }),
});

const CreateWebhookEndpointInput = builder.inputType("CreateWebhookEndpointInput", {
  fields: (t) => ({
    url: t.string({ required: true, description: "http(s); in live mode https to a public address." }),
    events: t.stringList({ description: "Event types to send; empty or absent: every type." }),
    description: t.string(),
  }),
});

const UpdateWebhookEndpointInput = builder.inputType("UpdateWebhookEndpointInput", {
  fields: (t) => ({
    url: t.string(),
    events: t.stringList({ description: "Replaces the list; empty: every type." }),
    description: t.string(),
    status: t.field({ type: WebhookEndpointStatus, description: "ENABLED sends what waited while it was disabled." }),
  }),
});

builder.queryFields((t) => ({
  webhookEndpoints: t.connection(
    {
      type: WebhookEndpoint,
      description: "Your webhook endpoints in the key's mode, newest first.",
      resolve: async (_root, args, ctx) => {
        const scope = ctx.scope();
        const page = await listWebhookEndpoints(ctx.prisma, scope, pageRequest(args));
        return connectionOf(page, args, () => countWebhookEndpoints(ctx.prisma, scope));
      },
    },
    countedConnection("How many endpoints there are."),
  ),
  webhookEndpoint: t.prismaField({
    type: "WebhookEndpoint",
    args: { id: t.arg.id({ required: true }) },
    resolve: (_query, _root, { id }, ctx) => getWebhookEndpoint(ctx.prisma, ctx.scope(), id),
  }),
}));

builder.mutationFields((t) => ({
  createWebhookEndpoint: t.field({
    type: WebhookEndpointWithSecret,
    args: { input: t.arg({ type: CreateWebhookEndpointInput, required: true }) },
    resolve: (_root, { input }, ctx) => createWebhookEndpoint(ctx.prisma, ctx.scope(), { ...input }),
  }),
  updateWebhookEndpoint: t.prismaField({
    type: "WebhookEndpoint",
    args: { id: t.arg.id({ required: true }), input: t.arg({ type: UpdateWebhookEndpointInput, required: true }) },
    resolve: (_query, _root, { id, input }, ctx) => updateWebhookEndpoint(ctx.prisma, ctx.scope(), id, { ...input }),
  }),
  rotateWebhookEndpointSecret: t.field({
    type: WebhookEndpointWithSecret,
    description: "A new signing secret; the old one keeps signing next to it for `overlapHours` (0–168, default 24; 0 for a leaked secret).",
    args: { id: t.arg.id({ required: true }), overlapHours: t.arg.int() },
    resolve: (_root, { id, overlapHours }, ctx) => rotateWebhookSecret(ctx.prisma, ctx.scope(), id, overlapHours == null ? {} : { overlapHours }),
  }),
  deleteWebhookEndpoint: t.field({
    type: DeletedWebhookEndpoint,
    description: "Deletes the endpoint and its pending deliveries; the events stay.",
    args: { id: t.arg.id({ required: true }) },
    resolve: async (_root, { id }, ctx) => {
      await deleteWebhookEndpoint(ctx.prisma, ctx.scope(), id);
      return { id };
    },
  }),
}));
