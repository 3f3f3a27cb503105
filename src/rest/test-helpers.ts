// REST /v1/test_helpers: moves a test-mode object along without waiting (.docs/payments.md "Charges"), so that
// an integration can exercise what normally takes time. A live key gets 400 test_mode_only.
import type { FastifyInstance } from "fastify";
import type { Logger } from "pino";
import { ChargeResource, chargeResource } from "../domain/charges/resource.js";
import { expireChargeNow } from "../domain/charges/expire.js";
import { subscriptionToAdvance } from "../domain/subscription-billing.js";
import { testPaySchema } from "../domain/test-payment-requests.js";
import { assertTestPayMode, payChargeFromTestWallet } from "../domain/test-payments.js";
import { parseInput } from "../domain/validation.js";
import { SubscriptionResource, subscriptionResource } from "../domain/subscriptions.js";
import { advanceSubscription } from "../jobs/subscriptions.js";
import { type RestDeps, scopeOf } from "./plumbing.js";

type IdParams = { Params: { id: string } };

/** Registers the test helper endpoints. */
export function testHelperRoutes(
  app: FastifyInstance,
  { prisma, charges: settings, chains, devnet, subscriptionRetrySchedule, logger }: RestDeps & { logger: Logger },
): void {
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

  const pay = {
    group: "create",
    doc: {
      operationId: "payTestCharge",
      summary: "Test mode, devnet only: pay a charge from the devnet's funded test wallet, on time or late",
      description:
        "Test mode, on the local devnet this process runs only: sends `amount` of USDC (a decimal string; default: what is still due, `amount` less `amountReceived`) from the devnet's funded test wallet to the charge's address, like `stablegate devnet pay` or a buyer, waits until the transfer is mined and answers the charge. The worker counts it like any payment: a PENDING charge with no chain gets the devnet picked first, as the hosted page would; an EXPIRED or CANCELLED charge is paid late (its status stays, `charge.late_payment`, paid out to you all the same), at its address whether or not a chain was picked. `late: true` expires a PENDING charge first (as the expire helper does), then pays it. The answer is the charge right after the transfer is mined: its payment shows once the worker has seen and confirmed it. 400 `test_mode_only` for a live key, 400 `chain_unsupported` when this process runs no devnet or the charge was picked on another chain, 400 `parameter_invalid` naming `amount`, 409 `charge_not_payable` when nothing is due and no amount is given.",
      tag: "Test helpers",
      body: testPaySchema,
      example: { amount: "10.00", late: true },
      ok: { 200: ChargeResource },
      errors: ["test_mode_only", "chain_unsupported", "charge_not_payable", "charge_payment_confirming"],
    },
  } as const;
  app.post<IdParams>("/v1/test_helpers/charges/:id/pay", { config: pay }, async (req) => {
    const scope = scopeOf(req);
    assertTestPayMode(scope);
    return chargeResource(
      await payChargeFromTestWallet(prisma, chains, devnet, scope, req.params.id, parseInput(testPaySchema, req.body ?? {}), settings),
      settings,
    );
  });

  const advance = {
    group: "create",
    doc: {
      operationId: "advanceTestSubscription",
      summary: "Test mode, devnet only: move the devnet's clock to the subscription's next pull and run what is due for it now",
      description:
        "Test mode, on the local devnet only: moves the devnet's clock to the subscription's `nextPullAt` (the end of its period, its trial, or its next retry) and runs what is due for it at once, as the worker would: the renewal's pull (waiting for the devnet to mine it), a failure and its retry, or the end of a subscription canceled at its period's end. An authorized checkout is relayed. Answers the subscription after. 400 `test_mode_only` for a live key, 400 `chain_unsupported` for one authorized on another chain.",
      tag: "Test helpers",
      ok: { 200: SubscriptionResource },
      errors: ["test_mode_only", "chain_unsupported"],
    },
  } as const;
  app.post<IdParams>("/v1/test_helpers/subscriptions/:id/advance", { config: advance }, async (req) => {
    const scope = scopeOf(req);
    const local = chains.all().filter((c) => c.local);
    const sub = await subscriptionToAdvance(
      prisma,
      scope,
      req.params.id,
      local.map((c) => c.chainId),
    );
    const chain = local.find((c) => c.chainId === sub.chainId);
    if (chain) await advanceSubscription(prisma, chain, sub.id, settings, logger, { retrySchedule: subscriptionRetrySchedule, now: () => new Date() });
    return subscriptionResource(await prisma.subscription.findUniqueOrThrow({ where: { id: sub.id } }), settings);
  });
}
