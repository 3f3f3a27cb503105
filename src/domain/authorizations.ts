// EIP-3009 authorizations handed to the service to relay (a merchant's refund, a buyer's gasless
// payment): the body they come in, the checks every one passes before the relayer may spend gas on
// it, and how long each is money on its way. What it must pay (who, how much, to where) is each
// caller's own rule (domain/refund-authorizations.ts, domain/charge-authorizations.ts).
//
// Money on its way: an accepted authorization can move money until the chain spends its nonce or its
// validBefore passes, whatever became of our relay: a relay that reverted leaves a valid signature
// anyone may send again. So from acceptance until then (`endedAt`), its refund cannot be cancelled and
// its charge neither expires nor takes another, and no other authorization is accepted for either.
// Accepted validity is at most an hour, so that a lock ends.
import { getAddress } from "ethers";
import { z } from "zod";
import { authorizationSigner, type TransferAuthorization, type UsdcAuthorizations } from "../chain/authorizations.js";
import type { Prisma } from "../db/client.js";
import type { Authorization } from "../generated/prisma/client.js";
import { AppError } from "./errors.js";
import { toUnits } from "./money.js";
import { evmAddress } from "./validation.js";

export type { Authorization };

/** The least time an authorization must still be valid for: enough to relay it and have it mined. */
const MIN_VALIDITY_SECONDS = 60n;
/** The most: an authorization locks its refund or charge until then (or until the chain spends it). */
export const MAX_VALIDITY_SECONDS = 3_600n;

const uint = z.union([z.string().regex(/^\d{1,78}$/, "must be a non-negative integer"), z.number().int().nonnegative()]).transform((v) => BigInt(v));

/** A signed transferWithAuthorization's fields (all but `to`, which the service knows): integers in base units and seconds. */
export const authorizationSchema = z.strictObject(
  {
    from: evmAddress(),
    value: uint.describe("Base units (6 decimals)."),
    validAfter: uint.describe("Unix seconds."),
    validBefore: uint.describe("Unix seconds; at least 60 s and at most an hour from now."),
    nonce: z
      .string()
      .regex(/^0x[0-9a-fA-F]{64}$/, "must be 32 bytes in hex")
      .transform((n) => n.toLowerCase()),
    signature: z.string().regex(/^0x[0-9a-fA-F]{130}$/, "must be a 65-byte signature in hex"),
  },
  { error: "must be a JSON object" },
);
/** A signed authorization handed in, parsed (authorizationSchema): the doors parse it, the domain checks it. */
export type AuthorizationRequest = z.output<typeof authorizationSchema>;

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
  if (a.validBefore - nowSeconds > MAX_VALIDITY_SECONDS) {
    throw invalidAuthorization(`it may stay valid for at most ${MAX_VALIDITY_SECONDS} s (validBefore): it is money on its way until then`, "validBefore");
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

/** A stored authorization (or x402 payment), as the worker relays it. */
export function transferOf(
  a: Pick<Authorization, "fromAddress" | "toAddress" | "value" | "validAfter" | "validBefore" | "nonce" | "signature">,
): TransferAuthorization {
  return {
    from: getAddress(a.fromAddress),
    to: getAddress(a.toAddress),
    value: toUnits(a.value),
    validAfter: toUnits(a.validAfter),
    validBefore: toUnits(a.validBefore),
    nonce: a.nonce,
    signature: a.signature,
  };
}

/** The columns of an accepted authorization (stored RELAYING, for the worker to send). */
export function authorizationRow(a: TransferAuthorization, now: Date) {
  return {
    fromAddress: getAddress(a.from),
    toAddress: getAddress(a.to),
    value: a.value.toString(),
    validAfter: a.validAfter.toString(),
    validBefore: a.validBefore.toString(),
    nonce: a.nonce.toLowerCase(),
    signature: a.signature,
    createdAt: now,
    updatedAt: now,
  };
}

/**
 * Ends the authorizations on `chainId` that are no longer money on its way: those whose nonce use is
 * confirmed at `tip` (`used`), and those unused whose validBefore the confirmed chain has passed
 * (`expired`: no later block can include them). Returns how many ended.
 */
export async function endAuthorizations(prisma: Prisma, chain: { chainId: number; confirmations: number }, tip: bigint, now: Date): Promise<number> {
  const used = await prisma.$executeRaw`
    UPDATE authorizations SET ended_at = ${now}, end_reason = 'used', updated_at = ${now}
    WHERE chain_id = ${chain.chainId} AND ended_at IS NULL AND used_block IS NOT NULL AND used_block + ${chain.confirmations} - 1 <= ${tip}`;
  const expired = await prisma.$executeRaw`
    UPDATE authorizations a SET ended_at = ${now}, end_reason = 'expired', updated_at = ${now}
    FROM chain_cursors cc
    WHERE a.chain_id = ${chain.chainId} AND cc.chain_id = a.chain_id AND a.ended_at IS NULL AND a.used_tx_hash IS NULL
      AND cc.confirmed_time IS NOT NULL AND a.valid_before <= extract(epoch FROM cc.confirmed_time)`;
  return used + expired;
}

/** When an authorization on its way stops being one at the latest (its validBefore), for messages. */
export function validUntil(a: Pick<Authorization, "validBefore">): string {
  return new Date(Number(toUnits(a.validBefore)) * 1000).toISOString();
}
