// REST /v1/charges: parse, call the domain, shape the response.
import type { FastifyInstance } from "fastify";
import { z } from "zod";
import { CHARGE_CSV_COLUMNS, chargeCsvColumns, chargesCsv } from "../domain/charges-csv.js";
import { cancelCharge } from "../domain/charges/cancel.js";
import { createCharge } from "../domain/charges/create.js";
import { listCharges } from "../domain/charges/list.js";
import { getCharge, getChargeByOrderId } from "../domain/charges/read.js";
import { createSchema, filtersOnly, listSchema } from "../domain/charges/requests.js";
import { ChargeResource, chargeResource } from "../domain/charges/resource.js";
import { markChargeReviewed } from "../domain/review.js";
import { parseInput } from "../domain/validation.js";
import { sendCsv } from "../http/csv.js";
import { legacyFormat } from "./legacy-format.js";
import { listOf } from "./openapi.js";
import { type RestDeps, scopeOf } from "./plumbing.js";

const tag = "Charges";
/** GET /v1/charges also pages by number (the contract keeps it): such a page adds its place; a cursor page is a plain list. */
const ChargeList = listOf(ChargeResource).extend({
  page: z.number().int().optional().describe("Numbered paging only."),
  limit: z.number().int().optional().describe("Numbered paging only."),
  total: z.number().int().optional().describe("Numbered paging only: how many charges match."),
});

type IdParams = { Params: { id: string } };

/** The export's reference text, each column described by the charge field it holds. */
const EXPORT_DESCRIPTION =
  "Every matching charge, newest first, as one CSV file for a spreadsheet or an accountant (`charges_test.csv` or `charges_live.csv`): a header row (`id,orderId,status,amount,amountReceived,…`), then one line per charge, with the list's filters (`status`, `customerId`, `needsReview`, `search`, `createdGte` inclusive, `createdLt` exclusive) and no paging. A text field a spreadsheet would run as a formula starts with `'`. A bad filter is a JSON 400, before any CSV.\n\nThe columns, each the charge field of that name:\n" +
  chargeCsvColumns()
    .map((c) => `- \`${c.name}\`: ${c.description}`)
    .join("\n");

/** Registers the charge endpoints. */
export function chargeRoutes(app: FastifyInstance, { prisma, charges: settings }: RestDeps): void {
  const create = {
    group: "create",
    doc: {
      operationId: "createCharge",
      summary: "Create a charge (a payment request) and its hosted payment page",
      description:
        "Creates a PENDING charge for one of your orders, with its hosted payment page (`paymentUrl`): send the buyer there. `amount` is a decimal string of USDC with at most 6 decimals, from 0.01 to 1,000,000 by default (`CHARGE_MIN_AMOUNT`, `CHARGE_MAX_AMOUNT`); a JSON number is refused. `orderId` is 1–200 printable characters, unique among your charges that are neither EXPIRED nor CANCELLED (409 `duplicate_order_id`; after expiry or cancel the order can be charged again). `successUrl` and `cancelUrl` must be https (http too in test mode); `customerId` must be one of your customers in the same mode. The charge keeps your fee, settlement wallet and underpayment tolerance as they are now, so changing your settings never redirects its money, and gives the buyer `expiresInMinutes` (5–10080, default 30) to pay. Without a settlement wallet for the mode: 400 `settlement_wallet_missing`; a live charge without an enabled live chain on this service: 400 `chain_unsupported` (its message names the operator's setting, `CHAIN_<id>_RPC_URL` and `CHAIN_<id>_FACTORY`). Sends `charge.pending`.",
      tag,
      body: createSchema,
      example: { orderId: "order-1001", amount: "25.00", description: "Two mugs", metadata: { sku: "mug-2" }, successUrl: "https://shop.example/thanks" },
      ok: { 201: ChargeResource },
      errors: ["duplicate_order_id", "settlement_wallet_missing", "chain_unsupported"],
    },
  } as const;
  app.post("/v1/charges", { config: create }, async (req, reply) => {
    const charge = await createCharge(prisma, scopeOf(req), parseInput(createSchema, req.body ?? {}), settings);
    return reply.code(201).send(chargeResource(charge, settings));
  });

  const retrieve = {
    group: "read",
    doc: {
      operationId: "getCharge",
      summary: "Retrieve a charge",
      description:
        "The charge as it is now: its status (PENDING → RECEIVED → COMPLETED, or EXPIRED, or CANCELLED), the money the chain shows (amountReceived, feeAmount, netAmount, amountRefunded: sums of the ledger's rows) and its payouts (settlements, whoever sent them). `payoutBlockedReason` says why confirmed money waits in the clone (the token refuses the payout), `needsReview` that the ledger and the chain disagree.",
      tag,
      ok: { 200: ChargeResource },
    },
  } as const;
  app.get<IdParams>("/v1/charges/:id", { config: retrieve }, async (req) => {
    return chargeResource(await getCharge(prisma, scopeOf(req), req.params.id), settings);
  });

  const byOrder = {
    group: "read",
    doc: {
      operationId: "getChargeByOrderId",
      summary: "Retrieve a charge by your order id",
      description: "The newest charge made for this order id, whatever its status: find a charge by your own order number.",
      tag,
      ok: { 200: ChargeResource },
    },
  } as const;
  app.get<{ Params: { orderId: string } }>("/v1/charges/order/:orderId", { config: byOrder }, async (req) => {
    return chargeResource(await getChargeByOrderId(prisma, scopeOf(req), req.params.orderId), settings);
  });

  const list = {
    group: "list",
    doc: {
      operationId: "listCharges",
      summary: "List charges, newest first, by cursor or page number",
      description:
        "Newest first, filtered by `status`, `customerId`, `needsReview`, `search` or creation time (`createdGte`, `createdLt`). Pages by number (`page`, with `total`) or, like every other list, by cursor (`startingAfter` / `endingBefore`); not both. Every matching charge as one CSV file: `GET /v1/charges/export.csv`.",
      tag,
      query: listSchema,
      ok: { 200: ChargeList },
    },
  } as const;
  app.get("/v1/charges", { config: list }, async (req, reply) => {
    const scope = scopeOf(req);
    const asked = legacyFormat(req.query, listSchema);
    // The query is checked before the stream starts, so its errors are still JSON bodies.
    if (asked.csv) return sendCsv(reply, "charges", scope.livemode, chargesCsv(prisma, scope, parseInput(filtersOnly, asked.filters)));
    const { data, ...page } = await listCharges(prisma, scope, parseInput(listSchema, asked.query));
    return { object: "list", data: data.map((c) => chargeResource(c, settings)), ...page };
  });

  const exportCsv = {
    group: "list",
    doc: {
      operationId: "exportCharges",
      summary: "Every charge matching the list's filters, as one CSV file",
      description: EXPORT_DESCRIPTION,
      tag,
      query: filtersOnly,
      ok: { 200: ChargeList },
      file: { type: "text/csv", example: `${CHARGE_CSV_COLUMNS.join(",")}\r\n` },
    },
  } as const;
  // A static path: Fastify routes it before /v1/charges/:id.
  app.get("/v1/charges/export.csv", { config: exportCsv }, async (req, reply) => {
    const scope = scopeOf(req);
    return sendCsv(reply, "charges", scope.livemode, chargesCsv(prisma, scope, parseInput(filtersOnly, req.query)));
  });

  const cancel = {
    group: "create",
    doc: {
      operationId: "cancelCharge",
      summary: "Cancel a charge that has no money yet",
      description:
        "A PENDING charge with no money on its way becomes CANCELLED (`charge.cancelled`); confirmed partial money is paid out to your wallet. Cancelling a CANCELLED charge returns it unchanged; any other status is 409 `charge_not_cancellable`, and money still confirming is 409 `charge_payment_confirming`.",
      tag,
      ok: { 200: ChargeResource },
      errors: ["charge_not_cancellable", "charge_payment_confirming"],
    },
  } as const;
  app.delete<IdParams>("/v1/charges/:id", { config: cancel }, async (req) => {
    return chargeResource(await cancelCharge(prisma, scopeOf(req), req.params.id, settings), settings);
  });

  const reviewed = {
    group: "create",
    doc: {
      operationId: "markChargeReviewed",
      summary: "Mark a charge that needs review as reviewed, once you have looked at what the reconciliation found (charge.reviewed)",
      description:
        "Clears `needsReview` on a charge the reconciliation flagged, once you have checked what it found (`reviewReason`). Sends `charge.reviewed`.",
      tag,
      ok: { 200: ChargeResource },
    },
  } as const;
  app.post<IdParams>("/v1/charges/:id/mark_reviewed", { config: reviewed }, async (req) => {
    return chargeResource(await markChargeReviewed(prisma, scopeOf(req), req.params.id, settings), settings);
  });
}
