// `WebhookEndpoint`: where the key's merchant gets its events in the key's mode, managed like REST's
// /v1/webhook_endpoints. The signing secret is shown only by the mutations that make one. Rules live
// in domain/webhook-endpoints.ts.
import { describe } from "../../domain/describe.js";
import { parseInput } from "../../domain/validation.js";
import { createSchema, listSchema, rotateSchema, updateSchema } from "../../domain/webhook-endpoint-requests.js";
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
  WebhookEndpointResource,
} from "../../domain/webhook-endpoints.js";
import { callerActor } from "../actor.js";
import { builder } from "../builder.js";
import { connectionOf, countedConnection, pageEnd, pageRequest } from "../connection.js";

const WebhookEndpointStatus = builder.enumType("WebhookEndpointStatus", {
  description: "DISABLED: nothing is sent (the merchant paused it, or it answered 410 Gone); events wait until it is enabled.",
  values: {
    ENABLED: { value: "enabled", description: "Events are sent." },
    DISABLED: { value: "disabled", description: "Nothing is sent; events wait until it is enabled." },
  } as const,
});

const WebhookEndpoint = builder.prismaNode("WebhookEndpoint", {
  description: "A URL your events are sent to, signed with the endpoint's secret (Standard Webhooks).",
  id: { field: "id" },
  findUnique: (id, ctx) => ({ id, ...ctx.scope() }),
  fields: (t) => ({
    livemode: t.exposeBoolean("livemode", { description: describe(WebhookEndpointResource, "livemode") }),
    url: t.exposeString("url", { description: describe(WebhookEndpointResource, "url") }),
    events: t.exposeStringList("eventTypes", { description: describe(WebhookEndpointResource, "events") }),
    description: t.exposeString("description", { nullable: true, description: describe(WebhookEndpointResource, "description") }),
    status: t.field({ type: WebhookEndpointStatus, description: describe(WebhookEndpointResource, "status"), resolve: endpointStatus }),
    createdAt: t.field({ type: "DateTime", description: describe(WebhookEndpointResource, "createdAt"), resolve: (e) => e.createdAt }),
  }),
});

const WebhookEndpointWithSecret = builder.objectRef<{ endpoint: Endpoint; secret: string }>("WebhookEndpointWithSecret").implement({
  description: "An endpoint with its new signing secret (whsec_…), shown this once.",
  fields: (t) => ({
    endpoint: t.field({ type: WebhookEndpoint, description: "The endpoint.", resolve: (r) => r.endpoint }),
    secret: t.exposeString("secret", { description: "The signing secret (whsec_…): store it now, it is never shown again." }),
  }),
});

const DeletedWebhookEndpoint = builder.objectRef<{ id: string }>("DeletedWebhookEndpoint").implement({
  description: "What is left of a deleted webhook endpoint: its id.",
  fields: (t) => ({
    id: t.exposeID("id", { description: "The deleted endpoint's id." }),
    deleted: t.boolean({ description: "Always true.", resolve: () => true }),
  }),
});

const CreateWebhookEndpointInput = builder.inputType("CreateWebhookEndpointInput", {
  description: "A new webhook endpoint.",
  fields: (t) => ({
    url: t.string({ required: true, description: "http(s); in live mode https to a public address." }),
    events: t.stringList({ description: "Event types to send; empty or absent: every type." }),
    description: t.string({ description: "Your note about the endpoint." }),
  }),
});

const UpdateWebhookEndpointInput = builder.inputType("UpdateWebhookEndpointInput", {
  description: "The fields to change; an absent one stays as it is.",
  fields: (t) => ({
    url: t.string({ description: "http(s); in live mode https to a public address." }),
    events: t.stringList({ description: "Replaces the list; empty: every type." }),
    description: t.string({ description: "Your note about the endpoint." }),
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
        const page = await listWebhookEndpoints(ctx.prisma, scope, parseInput(listSchema, pageRequest(args)), pageEnd(args));
        return connectionOf(page, args, () => countWebhookEndpoints(ctx.prisma, scope));
      },
    },
    countedConnection("How many endpoints there are."),
  ),
  webhookEndpoint: t.prismaField({
    type: "WebhookEndpoint",
    description: "A webhook endpoint by id; resource_missing when the key's merchant and mode have none.",
    args: { id: t.arg.id({ required: true, description: "The endpoint's id (whep_…)." }) },
    resolve: (query, _root, { id }, ctx) => getWebhookEndpoint(ctx.prisma, ctx.scope(), id, query),
  }),
}));

builder.mutationFields((t) => ({
  createWebhookEndpoint: t.field({
    type: WebhookEndpointWithSecret,
    description: "Adds an enabled endpoint in the key's mode, with its signing secret.",
    args: { input: t.arg({ type: CreateWebhookEndpointInput, required: true, description: "The endpoint." }) },
    resolve: (_root, { input }, ctx) => createWebhookEndpoint(ctx.prisma, ctx.scope(), parseInput(createSchema, { ...input }), callerActor(ctx)),
  }),
  updateWebhookEndpoint: t.prismaField({
    type: "WebhookEndpoint",
    description: "Changes an endpoint: its URL, event types, note, or whether it is enabled.",
    args: {
      id: t.arg.id({ required: true, description: "The endpoint's id (whep_…)." }),
      input: t.arg({ type: UpdateWebhookEndpointInput, required: true, description: "The changes." }),
    },
    resolve: (_query, _root, { id, input }, ctx) =>
      updateWebhookEndpoint(ctx.prisma, ctx.scope(), id, parseInput(updateSchema, { ...input }), callerActor(ctx)),
  }),
  rotateWebhookEndpointSecret: t.field({
    type: WebhookEndpointWithSecret,
    description: "A new signing secret; the old one keeps signing next to it for `overlapHours` (0–168, default 24; 0 for a leaked secret).",
    args: {
      id: t.arg.id({ required: true, description: "The endpoint's id (whep_…)." }),
      overlapHours: t.arg.int({ description: "Hours the old secret keeps signing: 0–168, default 24." }),
    },
    resolve: (_root, { id, overlapHours }, ctx) =>
      rotateWebhookSecret(ctx.prisma, ctx.scope(), id, parseInput(rotateSchema, overlapHours == null ? {} : { overlapHours }), callerActor(ctx)),
  }),
  deleteWebhookEndpoint: t.field({
    type: DeletedWebhookEndpoint,
    description: "Deletes the endpoint and its pending deliveries; the events stay.",
    args: { id: t.arg.id({ required: true, description: "The endpoint's id (whep_…)." }) },
    resolve: async (_root, { id }, ctx) => {
      await deleteWebhookEndpoint(ctx.prisma, ctx.scope(), id, callerActor(ctx));
      return { id };
    },
  }),
}));
