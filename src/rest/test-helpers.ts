// REST /v1/test_helpers: moves a test-mode object along without waiting (.docs/payments.md "Charges"), so that
// an integration can exercise what normally takes time. A live key gets 400 test_mode_only.
import type { FastifyInstance } from "fastify";
import { ChargeResource, chargeResource, expireChargeNow } from "../domain/charges.js";
import { type RestDeps, scopeOf } from "./plumbing.js";

type IdParams = { Params: { id: string } };

/** Registers the test helper endpoints. */
export function testHelperRoutes(app: FastifyInstance, { prisma, charges: settings }: RestDeps): void {
  const expire = {
    group: "create",
    doc: {
      operationId: "expireTestCharge",
      summary: "Test mode: expire a PENDING charge now, as the expiry sweep would (charge.expired, or charge.underpaid with partial money)",
      description:
        "Test mode: expires a PENDING charge now, as the expiry sweep would: `charge.expired`, or `charge.underpaid` with partial money. Money still confirming is 409 `charge_payment_confirming`.",
      tag: "Test helpers",
      ok: { 200: ChargeResource },
      errors: ["test_mode_only", "charge_not_payable", "charge_payment_confirming"],
    },
  } as const;
  app.post<IdParams>("/v1/test_helpers/charges/:id/expire", { config: expire }, async (req) => {
    return chargeResource(await expireChargeNow(prisma, scopeOf(req), req.params.id, settings), settings);
  });
}
