// Paying a refund with an EIP-3009 authorization (API.md "Refunds"): the merchant's settlement wallet
// signs `transferWithAuthorization(from = the wallet, to = the refund's address, value = its amount,
// …)` and the service relays it, paying the gas. The API checks everything the token would, and more
// (the signer, the exact amount and address, a validity window, the nonce, the balance, a simulation),
// and stores it; the worker that holds the chain's relayer checks it again and sends it. The refund
// then completes like any other: when the indexer sees the confirmed transfer.
import { getAddress } from "ethers";
import type { TransferAuthorization } from "../chain/authorizations.js";
import type { Prisma } from "../db/client.js";
import { Prisma as P, type Refund } from "../generated/prisma/client.js";
import { type AuthorizationReaders, authorizationSchema, checkAuthorization, invalidAuthorization as invalid } from "./authorizations.js";
import { AppError } from "./errors.js";
import { toUnits } from "./money.js";
import { getRefund } from "./refunds.js";
import type { Scope } from "./scope.js";
import { parseInput } from "./validation.js";

/**
 * Checks a signed authorization for refund `id` and stores it for the worker to relay (202). 400
 * `authorization_invalid` with the reason for anything the token would refuse or that would pay
 * something else; 409 `refund_not_payable` when the refund is not waiting for a payment, or already
 * has an authorization on its way.
 */
export async function submitRefundAuthorization(
  prisma: Prisma,
  scope: Scope,
  id: string,
  input: unknown,
  readers: AuthorizationReaders,
  now = new Date(),
): Promise<Refund> {
  const data = parseInput(authorizationSchema, input);
  const refund = await getRefund(prisma, scope, id);
  if (refund.status !== "AWAITING_PAYMENT" || !refund.address || refund.txHash) {
    throw new AppError(
      "refund_not_payable",
      `Refund ${id} is not waiting for a payment (it is ${refund.status}${refund.txHash ? ", its transfer is on chain" : ""}).`,
      "id",
    );
  }
  if (refund.authorization && !refund.authorizationError) {
    throw new AppError("refund_not_payable", `Refund ${id} already has an authorization on its way.`, "id");
  }
  const reader = readers(refund.chainId);
  if (!reader) throw new AppError("refund_not_payable", `Chain ${refund.chainId} is not enabled on this service.`, "id");
  const a: TransferAuthorization = { ...data, to: refund.address };
  if (getAddress(data.from) !== getAddress(refund.fromAddress)) throw invalid(`from must be the charge's settlement wallet ${refund.fromAddress}`, "from");
  if (data.value !== toUnits(refund.amount)) throw invalid(`value must be the refund's amount, ${toUnits(refund.amount)} base units`, "value");
  await checkAuthorization(reader, a, "the settlement wallet", now);
  // Two submissions racing: one is stored.
  const stored = {
    from: a.from,
    to: a.to,
    value: a.value.toString(),
    validAfter: a.validAfter.toString(),
    validBefore: a.validBefore.toString(),
    nonce: a.nonce,
    signature: a.signature,
  };
  const [saved] = await prisma.refund.updateManyAndReturn({
    where: { id, status: "AWAITING_PAYMENT", txHash: null, OR: [{ authorization: { equals: P.DbNull } }, { authorizationError: { not: null } }] },
    data: { authorization: stored, authorizationTxId: null, authorizationError: null },
  });
  if (!saved) throw new AppError("refund_not_payable", `Refund ${id} already has an authorization on its way.`, "id");
  return saved;
}
