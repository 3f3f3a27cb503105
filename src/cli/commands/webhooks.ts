// `stablegate webhooks create|list|update|rotate|disable|enable|delete`: a merchant's webhook endpoints.
import { describeMerchant } from "../../domain/merchants.js";
import { OPERATOR_ACTOR } from "../../domain/security-events.js";
import { parseInput } from "../../domain/validation.js";
import { createSchema, rotateSchema, updateSchema } from "../../domain/webhook-endpoint-requests.js";
import {
  createWebhookEndpoint,
  deleteWebhookEndpoint,
  merchantWebhookEndpoints,
  rotateWebhookSecret,
  updateWebhookEndpoint,
  webhookEndpointScope,
} from "../../domain/webhook-endpoints.js";
import { type Command, type CommandContext, overlap, required } from "../command.js";
import { describeEndpoint } from "../describe.js";

/** Applies `update` to the endpoint named by the first argument and prints it (without its secrets). */
async function updateAndShow({ open, print, need }: CommandContext, update: Record<string, unknown>): Promise<void> {
  const { prisma } = await open();
  const id = need("WHEP_ID");
  const {
    secret: _,
    previousSecret: __,
    ...endpoint
  } = await updateWebhookEndpoint(prisma, await webhookEndpointScope(prisma, id), id, parseInput(updateSchema, update), OPERATOR_ACTOR);
  print(describeEndpoint(endpoint), endpoint);
}

export const webhookCommands: Command[] = [
  {
    names: ["webhooks create"],
    usage: `  webhooks create MERCHANT_ID --mode test|live --url URL [--events TYPE,TYPE…] [--json]
      A new endpoint; prints its signing secret (shown once). Without --events it gets every event.
      Live mode needs https and a public address.`,
    async run({ flags, open, print, need, mode }) {
      const { prisma } = await open();
      const scope = { merchantId: (await describeMerchant(prisma, need("MERCHANT_ID"))).merchant.id, livemode: mode() };
      const request = parseInput(createSchema, { url: required(flags.url, "--url"), events: eventList(flags.events) });
      const created = await createWebhookEndpoint(prisma, scope, request, OPERATOR_ACTOR);
      print(`${describeEndpoint(created.endpoint)}\n  signing secret (shown once): ${created.secret}`, created);
    },
  },
  {
    names: ["webhooks list"],
    usage: "  webhooks list MERCHANT_ID [--json]",
    async run({ open, print, need }) {
      const { prisma } = await open();
      const endpoints = await merchantWebhookEndpoints(prisma, (await describeMerchant(prisma, need("MERCHANT_ID"))).merchant.id);
      const listed = endpoints.map(({ secret: _, previousSecret: __, ...e }) => e);
      print(listed.length ? listed.map(describeEndpoint).join("\n") : "No webhook endpoints.", listed);
    },
  },
  {
    names: ["webhooks update"],
    usage: `  webhooks update WHEP_ID [--url URL] [--events TYPE,…|""]  ("" = every event)`,
    run: (ctx) => {
      const { url, events } = ctx.flags;
      return updateAndShow(ctx, { ...(url !== undefined && { url }), ...(events !== undefined && { events: eventList(events) }) });
    },
  },
  {
    names: ["webhooks rotate"],
    usage: `  webhooks rotate WHEP_ID [--overlap-hours H]            A new secret (shown once); the old one keeps
                                                         signing too for H hours (default 24; 0 = stop now).`,
    async run({ flags, open, print, need }) {
      const { prisma } = await open();
      const id = need("WHEP_ID");
      const rotated = await rotateWebhookSecret(prisma, await webhookEndpointScope(prisma, id), id, parseInput(rotateSchema, overlap(flags)), OPERATOR_ACTOR);
      const until = rotated.endpoint.previousSecretExpiresAt;
      print(
        `New signing secret (shown once): ${rotated.secret}\n${until ? `The old secret also signs until ${until.toISOString()}.` : "The old secret no longer signs."}`,
        { id: rotated.endpoint.id, secret: rotated.secret, previousSecretExpiresAt: until },
      );
    },
  },
  {
    names: ["webhooks disable", "webhooks enable"],
    usage: "  webhooks disable WHEP_ID | webhooks enable WHEP_ID     Pauses deliveries; enabling sends what waited.",
    run: (ctx) => updateAndShow(ctx, { status: ctx.name === "webhooks enable" ? "enabled" : "disabled" }),
  },
  {
    names: ["webhooks delete"],
    usage: "  webhooks delete WHEP_ID",
    async run({ open, print, need }) {
      const { prisma } = await open();
      const id = need("WHEP_ID");
      await deleteWebhookEndpoint(prisma, await webhookEndpointScope(prisma, id), id, OPERATOR_ACTOR);
      print(`Deleted ${id}.`, { id, deleted: true });
    },
  },
];

/** `--events a,b` to a list; "" means every event. */
function eventList(value: string | undefined): string[] | undefined {
  if (value === undefined) return undefined;
  return value
    .split(",")
    .map((t) => t.trim())
    .filter(Boolean);
}
