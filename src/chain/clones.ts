// Charge clone addresses, computed locally: the CREATE2 address of a charge's clone follows from the
// factory, its implementation, the salt (from the charge id) and the immutable arguments, so the
// payment address is known before (and without) any RPC call. Mirrors ChargeFactory._initCode.
import { concat, getAddress, getCreate2Address, id, keccak256, toBeHex, zeroPadValue } from "ethers";

/** The CREATE2 salt of a charge's clone. */
export function cloneSalt(chargeId: string): string {
  return id(chargeId);
}

/** Where the factory deploys the clone of `chargeId` paying `wallet` with `feeBps`. */
export function predictCloneAddress(p: { factory: string; implementation: string; chargeId: string; wallet: string; feeBps: number }): string {
  if (!Number.isInteger(p.feeBps) || p.feeBps < 0 || p.feeBps > 10_000) throw new RangeError(`feeBps out of range: ${p.feeBps}`);
  const initCode = concat([
    "0x61",
    uint16(45 + 22),
    "0x3d81600a3d39f3",
    "0x363d3d373d3d3d363d73",
    getAddress(p.implementation),
    "0x5af43d82803e903d91602b57fd5bf3",
    getAddress(p.wallet),
    uint16(p.feeBps),
  ]);
  return getCreate2Address(getAddress(p.factory), cloneSalt(p.chargeId), keccak256(initCode));
}

function uint16(n: number): string {
  return zeroPadValue(toBeHex(n), 2);
}
