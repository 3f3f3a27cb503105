// The buyer picks the chain a charge is paid on. Nothing is sent on chain: the charge's address was
// fixed when it was made (the same on every chain, chain/clones.ts), and its clone is deployed by the
// payout that first needs it, so an abandoned charge costs no gas. The worker compares the address's
// balance there with the ledger at once (money sent before the pick is counted). The charge id is the
// capability: no merchant scope.
import type { ChainSet } from "../chain/chains.js";
import { CURRENT_CONTRACT_VERSION, predictCloneV2 } from "../chain/clones.js";
import type { Prisma } from "../db/client.js";
import type { SelectChainRequest } from "./chain-selection-requests.js";
import { notPayableReason } from "./charges/lifecycle.js";
import type { ChangeSettings } from "./charges/settings.js";
import { chargeResource } from "./charges/resource.js";
import { AppError, notFound } from "./errors.js";
import { recordEvent } from "./events.js";
import { type PublicCharge, publicCharge } from "./payment-session.js";

const MINUTE_MS = 60_000;

/**
 * Picks the chain a charge will be paid on, once. Shows its address (CREATE2, computed locally; for a
 * charge made before version 2, computed now), fixes the confirmations and a new expiry (the
 * merchant's payment window), makes the clone's row for that chain (the worker then compares its
 * balance with the ledger) and records `charge.chain_selected`, all in one transaction. Returns the
 * public view.
 */
export async function selectChain(
  prisma: Prisma,
  chains: ChainSet,
  settings: ChangeSettings,
  chargeId: string,
  { chainId }: SelectChainRequest,
  now = new Date(),
): Promise<PublicCharge> {
  const { updated, view } = await prisma.$transaction(async (tx) => {
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

    const cloneAddress = charge.depositAddress ?? predictCloneV2({ factory: chain.factory, chargeId, wallet: charge.settlementWallet, feeBps: charge.feeBps });
    const updated = await tx.charge.update({
      where: { id: chargeId },
      data: {
        chainId,
        confirmations: chain.confirmations,
        cloneAddress,
        depositAddress: cloneAddress,
        expiresAt: new Date(now.getTime() + charge.merchant.paymentWindowMinutes * MINUTE_MS),
      },
    });
    await tx.clone.upsert({
      where: { chargeId_chainId: { chargeId, chainId } },
      create: { chargeId, chainId, address: cloneAddress, version: charge.contractVersion ?? CURRENT_CONTRACT_VERSION },
      update: { balanceCheckedAt: null },
    });
    await recordEvent(tx, updated, "charge.chain_selected", chargeResource(updated, settings));
    return { updated, view: publicCharge(updated, charge.merchant, chains.forMode(updated.livemode), []) };
  });
  settings.feed?.changed([updated]);
  return view;
}
