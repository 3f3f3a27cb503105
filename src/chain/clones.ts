// Charge payment addresses, computed locally: no RPC call is needed to know where a charge is paid.
//
// Version 2 (ChargeFactoryV2, the current one): a charge's address is the CREATE2 address of a
// 44-byte minimal proxy of the factory under keccak256(abi.encode(charge, wallet, feeBps)). The
// factory itself is deployed through the deterministic deployment proxy with the fee recipient as
// its only argument, so the factory, and with it every charge's address, is the same on every chain:
// the address is fixed when the charge is made, before any chain is picked.
//
// Version 1 (ChargeFactoryV1, kept so its clones still settle): the CREATE2 address of a 67-byte
// clone (implementation and immutable arguments appended), one per chain, fixed when the chain was
// picked. Mirrors ChargeFactoryV1._initCode.
import { AbiCoder, concat, getAddress, getCreate2Address, id, keccak256, toBeHex, zeroPadValue } from "ethers";
import { ChargeFactoryV2Artifact } from "./artifacts.js";

/** The contract versions charges may have; new charges take the last. */
export const CONTRACT_VERSIONS = [1, 2] as const;
export type ContractVersion = (typeof CONTRACT_VERSIONS)[number];
export const CURRENT_CONTRACT_VERSION: ContractVersion = 2;

/** Arachnid's deterministic deployment proxy: at this address on every chain (and in anvil). */
export const DETERMINISTIC_DEPLOYER = "0x4e59b44847b379578588920cA78FbF26c0B4956C";
/** The salt ChargeFactoryV2 is deployed under through the deterministic deployer. */
export const FACTORY_V2_SALT = id("stablegate.ChargeFactoryV2");
/** Multicall3, at this address on every public chain (the devnet deploys a stand-in there). */
export const MULTICALL3 = "0xcA11bde05977b3631167028862bE2a173976CA11";

const abi = AbiCoder.defaultAbiCoder();

/** The 32 bytes that name a charge on chain: the version 2 `charge` argument and the version 1 salt. */
export function chargeKey(chargeId: string): string {
  return id(chargeId);
}

/** The creation transaction of ChargeFactoryV2 for `feeRecipient`, sent to the deterministic deployer. */
export function factoryV2Deployment(feeRecipient: string): { to: string; data: string } {
  return { to: DETERMINISTIC_DEPLOYER, data: concat([FACTORY_V2_SALT, factoryV2InitCode(feeRecipient)]) };
}

/** Where ChargeFactoryV2 for `feeRecipient` is (or will be) on every chain. */
export function factoryV2Address(feeRecipient: string): string {
  return getCreate2Address(DETERMINISTIC_DEPLOYER, FACTORY_V2_SALT, keccak256(factoryV2InitCode(feeRecipient)));
}

function factoryV2InitCode(feeRecipient: string): string {
  return concat([ChargeFactoryV2Artifact.bytecode, abi.encode(["address"], [getAddress(feeRecipient)])]);
}

/** Per factory, what every charge's CREATE2 address shares: 0xff ‖ factory, and the proxy's code hash. */
const create2Prefixes = new Map<string, { prefix: string; codeHash: string }>();

/**
 * The address of a charge's version 2 clone, on every chain where `factory` is. Every charge made
 * computes one, so the bytes are laid out by hand (the same as abi.encode and CREATE2's formula) and
 * what depends on the factory alone is computed once.
 */
export function predictCloneV2(p: { factory: string; chargeId: string; wallet: string; feeBps: number }): string {
  checkFeeBps(p.feeBps);
  if (!ADDRESS.test(p.wallet)) throw new TypeError(`not an address: ${p.wallet}`);
  let shared = create2Prefixes.get(p.factory);
  if (shared === undefined) {
    const factory = getAddress(p.factory);
    const codeHash = keccak256(concat(["0x602c8060095f395ff3365f5f375f5f365f73", factory, "0x5af43d5f5f3e5f3d91602a57fd5bf3"]));
    shared = { prefix: `0xff${factory.slice(2).toLowerCase()}`, codeHash: codeHash.slice(2) };
    create2Prefixes.set(p.factory, shared);
  }
  const salt = keccak256(`${chargeKey(p.chargeId)}${p.wallet.slice(2).toLowerCase().padStart(64, "0")}${p.feeBps.toString(16).padStart(64, "0")}`);
  return getAddress(`0x${keccak256(`${shared.prefix}${salt.slice(2)}${shared.codeHash}`).slice(-40)}`);
}

const ADDRESS = /^0x[0-9a-fA-F]{40}$/;

/** The address of a charge's version 1 clone made by `factory` (whose implementation is `implementation`). */
export function predictCloneV1(p: { factory: string; implementation: string; chargeId: string; wallet: string; feeBps: number }): string {
  checkFeeBps(p.feeBps);
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
  return getCreate2Address(getAddress(p.factory), chargeKey(p.chargeId), keccak256(initCode));
}

/** ChargeFactoryV2.DEPLOYED: the account flag of a clone that has code. */
const DEPLOYED = 1n << 255n;
/** The most a payout entry's amount field holds (79 bits); larger balances are paid out whole. */
const MAX_ENTRY_AMOUNT = (1n << 79n) - 1n;

/** One clone in a ChargeFactoryV2 `payout`: what it pays, to whom, and whether it has code yet. */
export interface PayoutEntry {
  chargeId: string;
  wallet: string;
  feeBps: number;
  /** Base units to pay out; 0 (or more than an entry holds) pays all the clone holds. */
  amount: bigint;
  deployed: boolean;
}

/** The two words of `entry` in ChargeFactoryV2's `payout(token, entries)`. */
export function payoutWords(entry: PayoutEntry): [string, bigint] {
  checkFeeBps(entry.feeBps);
  const amount = entry.amount > MAX_ENTRY_AMOUNT ? 0n : entry.amount;
  const account = BigInt(getAddress(entry.wallet)) | (BigInt(entry.feeBps) << 160n) | (amount << 176n) | (entry.deployed ? DEPLOYED : 0n);
  return [chargeKey(entry.chargeId), account];
}

function checkFeeBps(feeBps: number): void {
  if (!Number.isInteger(feeBps) || feeBps < 0 || feeBps > 10_000) throw new RangeError(`feeBps out of range: ${feeBps}`);
}

function uint16(n: number): string {
  return zeroPadValue(toBeHex(n), 2);
}
