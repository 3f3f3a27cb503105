// Paying a refund with an EIP-3009 authorization (.docs/refunds.md): the merchant's settlement wallet
// signs `transferWithAuthorization(from = the wallet, to = the refund's address, value = its amount,
// …)` and the service relays it, paying the gas. The API checks everything the token would, and more
// (the signer, the exact amount and address, a validity window of at most an hour, the nonce, the
// balance, a simulation), and stores it; the worker that holds the chain's relayer checks it again
// and sends it. The refund completes when the indexer sees the confirmed transfer of the transaction
// that spent this nonce. Until then, or until validBefore has passed on chain, the authorization is
// money on its way (domain/authorizations.ts): no other is taken, and the refund cannot be cancelled.
import { getAddress } from "ethers";
import type { TransferAuthorization } from "../chain/authorizations.js";
import type { Prisma } from "../db/client.js";
import { isUniqueViolation } from "../db/errors.js";
import {
  type AuthorizationReaders,
  type AuthorizationRequest,
  authorizationRow,
  checkAuthorization,
  invalidAuthorization as invalid,
  validUntil,
} from "./authorizations.js";
import { AppError } from "./errors.js";
import { newId } from "./ids.js";
import { toUnits } from "./money.js";
import { getRefund, REFUND_INCLUDE, type RefundRow } from "./refunds.js";
import type { Scope } from "./scope.js";

/**
 * Checks a signed authorization for refund `id` and stores it for the worker to relay (202). 400
 * `authorization_invalid` with the reason for anything the token would refuse or that would pay
 * something else; 409 `refund_not_payable` when the refund is not waiting for a payment, or has an
 * authorization that may still be spent.
 */
export async function submitRefundAuthorization(
  prisma: Prisma,
  scope: Scope,
  id: string,
  data: AuthorizationRequest,
  readers: AuthorizationReaders,
  now = new Date(),
): Promise<RefundRow> {
  const refund = await getRefund(prisma, scope, id);
  const payable = (r: RefundRow) => r.status === "AWAITING_PAYMENT" && r.address !== null && r.txHash === null;
  if (!payable(refund)) {
    throw new AppError(
      "refund_not_payable",
      `Refund ${id} is not waiting for a payment (it is ${refund.status}${refund.txHash ? ", its transfer is on chain" : ""}).`,
      "id",
    );
  }
  // The lock is the first answer: while another authorization may be spent, no other is even checked.
  await onItsWayRefused(prisma, id);
  const reader = readers(refund.chainId);
  if (!reader) throw new AppError("refund_not_payable", `Chain ${refund.chainId} is not enabled on this service.`, "id");
  const a: TransferAuthorization = { ...data, to: refund.address! };
  if (getAddress(data.from) !== getAddress(refund.fromAddress)) throw invalid(`from must be the charge's settlement wallet ${refund.fromAddress}`, "from");
  if (data.value !== toUnits(refund.amount)) throw invalid(`value must be the refund's amount, ${toUnits(refund.amount)} base units`, "value");
  await checkAuthorization(reader, a, "the settlement wallet", now);
  try {
    return await prisma.$transaction(async (tx) => {
      // The refund's row lock orders this against a cancel; the partial unique index against a twin.
      await tx.$queryRaw`SELECT id FROM refunds WHERE id = ${id} FOR UPDATE`;
      const current = await tx.refund.findUniqueOrThrow({ where: { id } });
      if (!payable(current)) throw new AppError("refund_not_payable", `Refund ${id} is not waiting for a payment (it is ${current.status}).`, "id");
      await onItsWayRefused(tx, id);
      await tx.authorization.create({
        data: { id: newId("auth"), purpose: "REFUND", chargeId: refund.chargeId, refundId: id, chainId: refund.chainId, ...authorizationRow(a, now) },
      });
      return tx.refund.findUniqueOrThrow({ where: { id }, include: REFUND_INCLUDE });
    });
  } catch (e) {
    if (!isUniqueViolation(e)) throw e;
    // A racing twin was stored first, or this very nonce was handed in before.
    await onItsWayRefused(prisma, id);
    throw invalid("this nonce has already been handed in", "nonce");
  }
}

/** 409 `refund_not_payable` when an authorization of refund `id` may still be spent. */
async function onItsWayRefused(db: Pick<Prisma, "authorization">, id: string): Promise<void> {
  const pending = await db.authorization.findFirst({ where: { refundId: id, endedAt: null } });
  if (pending) {
    throw new AppError(
      "refund_not_payable",
      `Refund ${id} already has an authorization that can still be spent until ${validUntil(pending)} (or until the chain spends it); give another only after that.`,
      "id",
    );
  }
}
