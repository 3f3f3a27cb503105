// EIP-3009 authorizations handed to the service to relay (a merchant's refund, a buyer's gasless
// payment): the body they come in, and the checks every one passes before the relayer may spend gas
// on it. What it must pay (who, how much, to where) is each caller's own rule.
import { getAddress } from "ethers";
import { z } from "zod";
import { authorizationSigner, type TransferAuthorization, type UsdcAuthorizations } from "../chain/authorizations.js";
import { AppError } from "./errors.js";
import { evmAddress } from "./validation.js";

/** The least time an authorization must still be valid for: enough to relay it and have it mined. */
const MIN_VALIDITY_SECONDS = 60n;

const uint = z.union([z.string().regex(/^\d{1,78}$/, "must be a non-negative integer"), z.number().int().nonnegative()]).transform((v) => BigInt(v));

/** A signed transferWithAuthorization's fields (all but `to`, which the service knows): integers in base units and seconds. */
export const authorizationSchema = z.strictObject(
  {
    from: evmAddress(),
    value: uint.describe("Base units (6 decimals)."),
    validAfter: uint.describe("Unix seconds."),
    validBefore: uint.describe("Unix seconds; at least 60 s from now."),
    nonce: z
      .string()
      .regex(/^0x[0-9a-fA-F]{64}$/, "must be 32 bytes in hex")
      .transform((n) => n.toLowerCase()),
    signature: z.string().regex(/^0x[0-9a-fA-F]{130}$/, "must be a 65-byte signature in hex"),
  },
  { error: "must be a JSON object" },
);

/** The token's view of each chain's authorizations (null: the chain is not one of ours). */
export type AuthorizationReaders = (chainId: number) => UsdcAuthorizations | null;

/** The 400 `authorization_invalid` saying why. */
export function invalidAuthorization(reason: string, param: string | null = null): AppError {
  return new AppError("authorization_invalid", `Invalid authorization: ${reason}`, param);
}

/**
 * What the token itself would check, and that it would succeed now: valid from now for at least a
 * minute, signed by `from` for exactly these fields under the token's own EIP-712 domain, a nonce not
 * used, enough balance, and a simulation. `whose` names the signer in messages ("the settlement wallet").
 */
export async function checkAuthorization(reader: UsdcAuthorizations, a: TransferAuthorization, whose: string, now: Date): Promise<void> {
  const nowSeconds = BigInt(Math.floor(now.getTime() / 1000));
  if (a.validAfter > nowSeconds) throw invalidAuthorization("it is not valid yet (validAfter is in the future)", "validAfter");
  if (a.validBefore - nowSeconds < MIN_VALIDITY_SECONDS) {
    throw invalidAuthorization(`it must stay valid for at least ${MIN_VALIDITY_SECONDS} s (validBefore)`, "validBefore");
  }
  let signer: string;
  try {
    signer = authorizationSigner(await reader.domain(), a);
  } catch {
    throw invalidAuthorization("the signature cannot be read", "signature");
  }
  if (signer !== getAddress(a.from)) {
    throw invalidAuthorization(`the signature is not ${whose}'s for these fields (wrong signer, amount, address, nonce, token or chain)`, "signature");
  }
  if (await reader.used(a.from, a.nonce)) throw invalidAuthorization("this nonce has already been used or cancelled", "nonce");
  if ((await reader.balance(a.from)) < a.value) throw invalidAuthorization(`${whose} holds less USDC than the value`, "value");
  const refusal = await reader.refusal(a);
  if (refusal) throw invalidAuthorization(`the token would refuse it (${refusal})`);
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
