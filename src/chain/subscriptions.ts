// SubscriptionsV1, seen from off chain: where it is, what a payer signs for it, and the calls the
// relayer makes. Like ChargeFactoryV2 it is deployed through the deterministic deployment proxy with
// the fee recipient as its only argument, so it is at the same address on every chain.
import { AbiCoder, concat, getAddress, id, Interface, keccak256, type TypedDataDomain, type TypedDataField, TypedDataEncoder, getCreate2Address } from "ethers";
import { SubscriptionsV1Artifact } from "./artifacts.js";
import { DETERMINISTIC_DEPLOYER } from "./clones.js";

/** The salt SubscriptionsV1 is deployed under through the deterministic deployer. */
export const SUBSCRIPTIONS_V1_SALT = id("stablegate.SubscriptionsV1");
/** A permission that lasts until it is revoked: its `end` (uint48's largest value). */
export const UNTIL_REVOKED = 2n ** 48n - 1n;
/** The contract's ABI, for encoding calls and decoding its events. */
export const subscriptionsInterface = new Interface(SubscriptionsV1Artifact.abi as never);

/** What a payer signs: the struct SubscriptionsV1 pulls under (addresses checksummed, numbers exact). */
export interface Permission {
  payer: string;
  merchant: string;
  token: string;
  spender: string;
  amount: bigint;
  feeBps: number;
  period: bigint;
  start: bigint;
  end: bigint;
  salt: bigint;
}

/** A permission as stored (JSON): the numbers as decimal strings. */
export type StoredPermission = { [K in keyof Permission]: string | number };

/** The EIP-712 type of a permission, as wallets and the contract name it. */
export const PERMISSION_TYPES: Record<string, TypedDataField[]> = {
  Permission: [
    { name: "payer", type: "address" },
    { name: "merchant", type: "address" },
    { name: "token", type: "address" },
    { name: "spender", type: "address" },
    { name: "amount", type: "uint160" },
    { name: "feeBps", type: "uint16" },
    { name: "period", type: "uint48" },
    { name: "start", type: "uint48" },
    { name: "end", type: "uint48" },
    { name: "salt", type: "uint256" },
  ],
};

/** The EIP-712 type of a spender's delegation to its rotated key. */
export const DELEGATION_TYPES: Record<string, TypedDataField[]> = {
  Delegation: [
    { name: "spender", type: "address" },
    { name: "delegate", type: "address" },
    { name: "nonce", type: "uint256" },
  ],
};

/** The contract's EIP-712 domain on `chainId`. */
export function subscriptionsDomain(chainId: number, contract: string): TypedDataDomain {
  return { name: "Stablegate Subscriptions", version: "1", chainId, verifyingContract: getAddress(contract) };
}

/** The permission's identity on chain (its EIP-712 struct hash: what events carry). */
export function permissionHash(p: Permission): string {
  return TypedDataEncoder.hashStruct("Permission", PERMISSION_TYPES, p);
}

/** The digest a payer's wallet signs for `p` (eth_signTypedData_v4 of permissionTypedData). */
export function permissionDigest(chainId: number, contract: string, p: Permission): string {
  return TypedDataEncoder.hash(subscriptionsDomain(chainId, contract), PERMISSION_TYPES, p);
}

/** The eth_signTypedData_v4 payload for `p`, numbers as decimal strings (JSON-safe). */
export function permissionTypedData(chainId: number, contract: string, p: Permission) {
  return {
    domain: subscriptionsDomain(chainId, contract),
    types: PERMISSION_TYPES,
    primaryType: "Permission" as const,
    message: storePermission(p),
  };
}

/** The permission for JSON storage. */
export function storePermission(p: Permission): StoredPermission {
  return {
    payer: getAddress(p.payer),
    merchant: getAddress(p.merchant),
    token: getAddress(p.token),
    spender: getAddress(p.spender),
    amount: p.amount.toString(),
    feeBps: p.feeBps,
    period: p.period.toString(),
    start: p.start.toString(),
    end: p.end.toString(),
    salt: p.salt.toString(),
  };
}

/** The permission back from JSON storage. */
export function loadPermission(s: StoredPermission): Permission {
  return {
    payer: getAddress(String(s.payer)),
    merchant: getAddress(String(s.merchant)),
    token: getAddress(String(s.token)),
    spender: getAddress(String(s.spender)),
    amount: BigInt(s.amount),
    feeBps: Number(s.feeBps),
    period: BigInt(s.period),
    start: BigInt(s.start),
    end: BigInt(s.end),
    salt: BigInt(s.salt),
  };
}

/** The salt that names a subscription in its permission. */
export function subscriptionSalt(subscriptionId: string): bigint {
  return BigInt(id(subscriptionId));
}

/** The window of `p` that `time` (Unix seconds) falls in, or null outside the permission's life. */
export function periodIndexAt(p: Pick<Permission, "period" | "start" | "end">, time: bigint): bigint | null {
  return time < p.start || time >= p.end ? null : (time - p.start) / p.period;
}

/** The creation transaction of SubscriptionsV1 for `feeRecipient`, sent to the deterministic deployer. */
export function subscriptionsDeployment(feeRecipient: string): { to: string; data: string } {
  return { to: DETERMINISTIC_DEPLOYER, data: concat([SUBSCRIPTIONS_V1_SALT, initCode(feeRecipient)]) };
}

/** Where SubscriptionsV1 for `feeRecipient` is (or will be) on every chain. */
export function subscriptionsAddress(feeRecipient: string): string {
  return getCreate2Address(DETERMINISTIC_DEPLOYER, SUBSCRIPTIONS_V1_SALT, keccak256(initCode(feeRecipient)));
}

function initCode(feeRecipient: string): string {
  return concat([SubscriptionsV1Artifact.bytecode, AbiCoder.defaultAbiCoder().encode(["address"], [getAddress(feeRecipient)])]);
}

/** Whether SubscriptionsV1 has code at `chain.subscriptions` (checkout offers only the chains where it does). */
export async function subscriptionsDeployed(provider: { getCode(address: string): Promise<string> }, chain: { subscriptions: string }): Promise<boolean> {
  return (await provider.getCode(chain.subscriptions)) !== "0x";
}

/** The permission as the contract's calls take it (a tuple in struct order). */
export function permissionTuple(p: Permission): unknown[] {
  return [p.payer, p.merchant, p.token, p.spender, p.amount, p.feeBps, p.period, p.start, p.end, p.salt];
}

/** Calldata of subscribe(): permit (when given), permission and the first pull (amount 0: none, a trial). */
export function subscribeCalldata(
  p: Permission,
  signature: string,
  permit: { value: bigint; deadline: bigint; signature: string } | null,
  amount: bigint,
): string {
  return subscriptionsInterface.encodeFunctionData("subscribe", [
    permissionTuple(p),
    signature,
    permit?.value ?? 0n,
    permit?.deadline ?? 0n,
    permit?.signature ?? "0x",
    amount,
  ]);
}

/** Calldata of pull(): a renewal. */
export function pullCalldata(p: Permission, amount: bigint): string {
  return subscriptionsInterface.encodeFunctionData("pull", [permissionTuple(p), amount]);
}

/** Calldata of delegate(): `spender`'s role handed to `delegate`, with the spender's EIP-712 signature (key rotation). */
export function delegateCalldata(spender: string, delegate: string, signature: string): string {
  return subscriptionsInterface.encodeFunctionData("delegate", [spender, delegate, signature]);
}

/** Calldata of revoke() (the spender's: the merchant cancelled). */
export function revokeCalldata(p: Permission): string {
  return subscriptionsInterface.encodeFunctionData("revoke", [permissionTuple(p)]);
}
