// The buyer picks the chain a charge is paid on, which fixes the clone address and queues its
// deployment. The charge id is the capability: no merchant scope.
import { z } from "zod";
import type { ChainSet } from "../chain/chains.js";
import { predictCloneAddress } from "../chain/clones.js";
import type { Prisma } from "../db/client.js";
import { notPayableReason } from "./charge-lifecycle.js";
import { type ChangeSettings, chargeResource } from "./charges.js";
import { AppError, notFound } from "./errors.js";
import { recordEvent } from "./events.js";
import { type PublicCharge, publicCharge } from "./payment-session.js";
import { parseInput } from "./validation.js";

const MINUTE_MS = 60_000;

/** The body of POST /v1/public/charges/:id/chain and the hosted page's chain form. */
export const selectSchema = z.strictObject({ chainId: z.number({ error: "must be a chain id (a number)" }).int() }, { error: "must be a JSON object" });

/**
 * Picks the chain a charge will be paid on, once. Fixes the clone address (CREATE2, computed
 * locally), the confirmations and a new expiry (the merchant's payment window), queues the clone's
 * deployment and records `charge.chain_selected`, all in one transaction. Returns the public view.
 */
export async function selectChain(
  prisma: Prisma,
  chains: ChainSet,
  settings: ChangeSettings,
  chargeId: string,
  input: unknown,
  now = new Date(),
): Promise<PublicCharge> {
  const { chainId } = parseInput(selectSchema, input);
  const { updated, event, view } = await prisma.$transaction(async (tx) => {
    // The row lock makes a second, concurrent selection wait and then see the first.
    const locked = await tx.$queryRaw<{ id: string }[]>`SELECT id FROM charges WHERE id = ${chargeId} FOR UPDATE`;
    if (locked.length === 0) throw notFound("charge", chargeId);
    const charge = await tx.charge.findUniqueOrThrow({
      where: { id: chargeId },
      include: { merchant: { select: { name: true, paymentWindowMinutes: true } } },
    });
    const chain = chains.get(chainId);
    if (!chain || chain.testnet === charge.livemode) {
      const offered = chains.forMode(charge.livemode).map((c) => c.chainId);
      throw new AppError("chain_unsupported", `Chain ${chainId} is not available for this charge; choose one of: ${offered.join(", ") || "none"}`, "chainId");
    }
    if (charge.chainId !== null) throw new AppError("chain_already_selected", `A chain (${charge.chainId}) has already been picked for this charge`, "chainId");
    const refusal = notPayableReason(charge, now);
    if (refusal) throw new AppError("charge_not_payable", `This charge cannot be paid: ${refusal}`, null);

    const cloneAddress = predictCloneAddress({
      factory: chain.factory,
      implementation: chain.implementation,
      chargeId,
      wallet: charge.settlementWallet,
      feeBps: charge.feeBps,
    });
    const updated = await tx.charge.update({
      where: { id: chargeId },
      data: {
        chainId,
        confirmations: chain.confirmations,
        cloneAddress,
        expiresAt: new Date(now.getTime() + charge.merchant.paymentWindowMinutes * MINUTE_MS),
      },
    });
    await tx.cloneDeployment.create({ data: { chargeId, chainId } });
    const event = await recordEvent(tx, updated, "charge.chain_selected", chargeResource(updated, settings));
    return { updated, event, view: publicCharge(updated, charge.merchant.name, chains.forMode(updated.livemode), []) };
  });
  settings.feed?.changed([updated], [event]);
  return view;
}
