// What the worker last saw of each chain's relayer: its gas balance against the minimum it should
// keep (CHAIN_<id>_RELAYER_MIN_BALANCE). Written by the chain runner, read by /readyz and /metrics in
// any process, so an operator hears about a relayer running dry before payouts stop.
import { formatEther } from "ethers";
import type { Prisma } from "../db/client.js";
import { toUnits } from "./money.js";

/** A relayer's balance as last checked. */
export interface RelayerBalance {
  chainId: number;
  relayerAddress: string;
  balance: bigint;
  minBalance: bigint;
  checkedAt: Date;
}

/** Stores the relayer's balance for its chain (one row per chain, replaced each check). */
export async function recordRelayerBalance(prisma: Prisma, b: RelayerBalance): Promise<void> {
  const row = {
    relayerAddress: b.relayerAddress,
    relayerBalance: b.balance.toString(),
    relayerMinBalance: b.minBalance.toString(),
    checkedAt: b.checkedAt,
  };
  await prisma.chainStatus.upsert({ where: { chainId: b.chainId }, create: { chainId: b.chainId, ...row }, update: row });
}

/** The last check of every chain's relayer. */
export async function relayerBalances(prisma: Prisma): Promise<RelayerBalance[]> {
  const rows = await prisma.chainStatus.findMany({ orderBy: { chainId: "asc" } });
  return rows.map((r) => ({
    chainId: r.chainId,
    relayerAddress: r.relayerAddress,
    balance: toUnits(r.relayerBalance),
    minBalance: toUnits(r.relayerMinBalance),
    checkedAt: r.checkedAt,
  }));
}

/** Why the relayers of `chainIds` need attention, in words for /readyz (none when all are funded). */
export async function relayerProblems(prisma: Prisma, chains: readonly { chainId: number; nativeSymbol: string }[]): Promise<string[]> {
  const symbol = new Map(chains.map((c) => [c.chainId, c.nativeSymbol]));
  return (await relayerBalances(prisma))
    .filter((b) => symbol.has(b.chainId) && b.balance < b.minBalance)
    .map((b) => {
      const unit = symbol.get(b.chainId)!;
      return `chain ${b.chainId}: relayer ${b.relayerAddress} has ${formatEther(b.balance)} ${unit}, below the minimum ${formatEther(b.minBalance)} ${unit}; fund it or deployments and payouts will stop`;
    });
}
