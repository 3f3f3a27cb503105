// Paying a refund with an EIP-3009 authorization (API.md "Refunds"): the merchant's settlement wallet
// signs `transferWithAuthorization(from = the wallet, to = the refund's address, value = its amount,
// …)` and the service relays it, paying the gas. The API checks everything the token would, and more
// (the signer, the exact amount and address, a validity window, the nonce, the balance, a simulation),
// and stores it; the worker that holds the chain's relayer checks it again and sends it. The refund
// then completes like any other: when the indexer sees the confirmed transfer.
import { getAddress } from "ethers";
import { z } from "zod";
import { authorizationSigner, type TransferAuthorization, type UsdcAuthorizations } from "../chain/authorizations.js";
import type { Prisma } from "../db/client.js";
import { Prisma as P, type Refund } from "../generated/prisma/client.js";
import { AppError } from "./errors.js";
import { toUnits } from "./money.js";
import { getRefund } from "./refunds.js";
import type { Scope } from "./scope.js";
import { evmAddress, parseInput } from "./validation.js";

/** The least time an authorization must still be valid for: enough to relay it and have it mined. */
const MIN_VALIDITY_SECONDS = 60n;

const uint = z.union([z.string().regex(/^\d{1,78}$/, "must be a non-negative integer"), z.number().int().nonnegative()]).transform((v) => BigInt(v));

/** The body of POST /v1/refunds/:id/authorization: the signed fields, integers in base units and seconds. */
export const authorizationSchema = z.strictObject(
  {
    from: evmAddress(),
    value: uint.describe("Base units (6 decimals): exactly the refund's amount."),
    validAfter: uint.describe("Unix seconds."),
    validBefore: uint.describe("Unix seconds; at least 60 s from now."),
    nonce: z.string().regex(/^0x[0-9a-fA-F]{64}$/, "must be 32 bytes in hex"),
    signature: z.string().regex(/^0x[0-9a-fA-F]{130}$/, "must be a 65-byte signature in hex"),
  },
  { error: "must be a JSON object" },
);

/** The token's view of each chain's authorizations (null: the chain is not one of ours). */
export type AuthorizationReaders = (chainId: number) => UsdcAuthorizations | null;

function invalid(reason: string, param: string | null = null): AppError {
  return new AppError("authorization_invalid", `Invalid authorization: ${reason}`, param);
}

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
  const nowSeconds = BigInt(Math.floor(now.getTime() / 1000));
  if (data.validAfter > nowSeconds) throw invalid("it is not valid yet (validAfter is in the future)", "validAfter");
  if (data.validBefore - nowSeconds < MIN_VALIDITY_SECONDS)
    throw invalid(`it must stay valid for at least ${MIN_VALIDITY_SECONDS} s (validBefore)`, "validBefore");
  let signer: string;
  try {
    signer = authorizationSigner(await reader.domain(), a);
  } catch {
    throw invalid("the signature cannot be read", "signature");
  }
  if (signer !== getAddress(data.from)) {
    throw invalid("the signature is not the settlement wallet's for this refund (wrong signer, amount, address, nonce or token domain)", "signature");
  }
  if (await reader.used(data.from, data.nonce)) throw invalid("this nonce has already been used or cancelled", "nonce");
  if ((await reader.balance(data.from)) < data.value) throw invalid("the settlement wallet holds less USDC than the refund", "value");
  const refusal = await reader.refusal(a);
  if (refusal) throw invalid(`the token would refuse it (${refusal})`);
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

/** A stored authorization, as the worker relays it. */
export function storedAuthorization(json: unknown): TransferAuthorization {
  const a = json as Record<string, string>;
  return {
    from: a.from!,
    to: a.to!,
    value: BigInt(a.value!),
    validAfter: BigInt(a.validAfter!),
    validBefore: BigInt(a.validBefore!),
    nonce: a.nonce!,
    signature: a.signature!,
  };
}
