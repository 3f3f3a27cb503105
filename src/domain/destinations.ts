// Where money may be sent (.docs/refunds.md "Addresses refused"): a refund address or a settlement
// wallet is an address someone can spend from. Money sent to a charge's deposit address is counted as
// that charge's payment and paid out to its merchant again (less a second fee); a factory, an
// implementation or a token contract cannot send USDC on, so money sent there is lost; nobody holds
// the zero address's key; and a refund paid to the charge's own settlement wallet pays nobody.
//
// Invariants:
// - every door that takes a refund address (REST, GraphQL, the buyer's claim page) or a settlement
//   wallet (GraphQL settings, the CLI) asks `refuseDestination` before anything is written: a refused
//   address is 400 `parameter_invalid` naming the field, the reason in the message, and changes nothing;
// - deposit addresses are looked up across every charge, of every merchant, mode and contract
//   version: money sent there would be another charge's payment;
// - the contracts refused are those of every enabled chain (factories, version 1's implementation,
//   USDC and the watched tokens) and every token the registry knows, on whatever chain the money goes.
import { getAddress } from "ethers";
import type { ChainSet } from "../chain/chains.js";
import { knownChains } from "../chain/registry.js";
import type { Prisma } from "../db/client.js";
import type { Prisma as P } from "../generated/prisma/client.js";
import { AppError } from "./errors.js";

const ZERO = "0x0000000000000000000000000000000000000000";

/** What is being given: the words the refusal uses. */
export type DestinationKind = "refund address" | "settlement wallet";

/** The refund's charge, when the address is a refund's: its own address and wallet are refused with their own words. */
export interface RefundOf {
  chargeId: string;
  settlementWallet: string;
}

/** The contracts no money may be sent to, by lowercase address, each with what it is. */
export function refusedContracts(chains: Pick<ChainSet, "all"> | undefined): Map<string, string> {
  const contracts = new Map<string, string>();
  const add = (address: string | null | undefined, what: string) => {
    if (address && !contracts.has(address.toLowerCase())) contracts.set(address.toLowerCase(), what);
  };
  for (const c of knownChains()) {
    add(c.usdc, `the USDC token contract on ${c.name}`);
    for (const t of c.watchTokens) add(t, `a token contract on ${c.name}`);
  }
  for (const c of chains?.all() ?? []) {
    add(c.factory, `the charge factory (ChargeFactoryV2) on ${c.name}`);
    add(c.v1?.factory, `the version 1 charge factory on ${c.name}`);
    add(c.v1?.implementation, `the version 1 charge contract on ${c.name}`);
    add(c.usdc, `the USDC token contract on ${c.name}`);
    for (const t of c.watchTokens) add(t, `a token contract on ${c.name}`);
  }
  return contracts;
}

/**
 * 400 `parameter_invalid` naming `param` when money sent to `address` could not be spent by the one
 * meant to get it: a charge's deposit address, one of our contracts or a known token, the zero address,
 * or (for a refund) the charge's own settlement wallet. Reads only.
 */
export async function refuseDestination(
  db: Prisma | P.TransactionClient,
  address: string,
  { kind, param, chains, refund }: { kind: DestinationKind; param: string; chains: Pick<ChainSet, "all"> | undefined; refund?: RefundOf },
): Promise<void> {
  const why = await refusalReason(db, address, chains, refund);
  if (why === null) return;
  const Kind = kind[0]!.toUpperCase() + kind.slice(1);
  throw new AppError("parameter_invalid", `${Kind} ${address} refused: ${why}. Give the address of a wallet that can spend what it receives.`, param);
}

async function refusalReason(
  db: Prisma | P.TransactionClient,
  address: string,
  chains: Pick<ChainSet, "all"> | undefined,
  refund: RefundOf | undefined,
): Promise<string | null> {
  const lower = address.toLowerCase();
  if (lower === ZERO) return "it is the zero address, whose key nobody holds: money sent there is lost";
  if (refund && lower === refund.settlementWallet.toLowerCase()) {
    return "it is the settlement wallet that pays this refund: the wallet would pay itself and the buyer would get nothing";
  }
  const contract = refusedContracts(chains).get(lower);
  if (contract) return `it is ${contract}, which cannot send USDC on: money sent there is lost`;
  const charge = await depositAddressOf(db, getAddress(address));
  if (charge === null) return null;
  if (refund && charge === refund.chargeId) {
    return "it is the address this charge was paid to: money sent back there would count as a new payment and be paid out to the shop again, never reaching the buyer";
  }
  return "it is the deposit address of a charge: money sent there counts as that charge's payment and is paid out to its merchant";
}

/** The charge whose deposit (or clone) address `address` is, on any chain, of any version; null if none. */
async function depositAddressOf(db: Prisma | P.TransactionClient, address: string): Promise<string | null> {
  // Addresses are stored checksummed (chain/clones.ts); both lookups are indexed.
  const [row] = await db.$queryRaw<{ id: string }[]>`
    (SELECT id FROM charges WHERE deposit_address = ${address} LIMIT 1)
    UNION ALL (SELECT charge_id FROM clones WHERE address = ${address} LIMIT 1)
    LIMIT 1`;
  return row?.id ?? null;
}
