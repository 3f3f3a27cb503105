// What the worker last saw of each chain's relayer: its gas balance against the minimum it should
// keep (CHAIN_<id>_RELAYER_MIN_BALANCE), its transactions stuck unmined past the chain's limit
// (CHAIN_<id>_RELAYER_STUCK_AFTER), and whether SubscriptionsV1 has code there. Read by /readyz and
// /metrics in any process, so an operator hears about a relayer running dry or stuck before payouts
// stop, and about a chain where subscriptions cannot be offered.
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
  /** Whether SubscriptionsV1 had code on the chain at the check (null: not checked yet; absent when recording: unchanged). */
  subscriptionsDeployed?: boolean | null;
}

/** Stores the relayer's balance for its chain (one row per chain, replaced each check). */
export async function recordRelayerBalance(prisma: Prisma, b: RelayerBalance): Promise<void> {
  const row = {
    relayerAddress: b.relayerAddress,
    relayerBalance: b.balance.toString(),
    relayerMinBalance: b.minBalance.toString(),
    checkedAt: b.checkedAt,
    ...(b.subscriptionsDeployed !== undefined && { subscriptionsDeployed: b.subscriptionsDeployed }),
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
    subscriptionsDeployed: r.subscriptionsDeployed,
  }));
}

/** The chains where the worker last found SubscriptionsV1 deployed: the only ones a subscription's checkout may offer. */
export async function subscriptionChainIds(prisma: Prisma): Promise<number[]> {
  const rows = await prisma.chainStatus.findMany({ where: { subscriptionsDeployed: true }, orderBy: { chainId: "asc" }, select: { chainId: true } });
  return rows.map((r) => r.chainId);
}

/** A relayer transaction waiting to be mined for longer than its chain allows. */
export interface StuckRelayerTx {
  chainId: number;
  id: string;
  nonce: number;
  createdAt: Date;
}

/** The relayer transactions of `chains` unmined past each chain's limit, oldest first per chain. */
export async function stuckRelayerTxs(
  prisma: Prisma,
  chains: readonly { chainId: number; stuckAfterSeconds: number }[],
  now = new Date(),
): Promise<StuckRelayerTx[]> {
  if (chains.length === 0) return [];
  return prisma.relayerTransaction.findMany({
    where: { status: "SENT", OR: chains.map((c) => ({ chainId: c.chainId, createdAt: { lte: new Date(now.getTime() - c.stuckAfterSeconds * 1000) } })) },
    orderBy: [{ chainId: "asc" }, { nonce: "asc" }],
    select: { chainId: true, id: true, nonce: true, createdAt: true },
  });
}

/** Why the relayers of `chains` need attention, in words for /readyz (none when all are funded and moving). */
export async function relayerProblems(
  prisma: Prisma,
  chains: readonly { chainId: number; nativeSymbol: string; stuckAfterSeconds: number }[],
  now = new Date(),
): Promise<string[]> {
  const symbol = new Map(chains.map((c) => [c.chainId, c.nativeSymbol]));
  const [balances, stuck] = await Promise.all([relayerBalances(prisma), stuckRelayerTxs(prisma, chains, now)]);
  const low = balances
    .filter((b) => symbol.has(b.chainId) && b.balance < b.minBalance)
    .map((b) => {
      const unit = symbol.get(b.chainId)!;
      return `chain ${b.chainId}: relayer ${b.relayerAddress} has ${formatEther(b.balance)} ${unit}, below the minimum ${formatEther(b.minBalance)} ${unit}; fund it or payouts will stop`;
    });
  // Only a check that found no code counts: a chain not checked yet is not reported.
  const undeployed = balances
    .filter((b) => symbol.has(b.chainId) && b.subscriptionsDeployed === false)
    .map(
      (b) =>
        `chain ${b.chainId}: SubscriptionsV1 is not deployed, so subscriptions cannot be offered there; deploy it with npm run contracts:deploy -- --chain ${b.chainId}`,
    );
  const first = new Map<number, StuckRelayerTx>();
  for (const t of stuck) if (!first.has(t.chainId)) first.set(t.chainId, t);
  const late = [...first.values()].map((t) => {
    const minutes = Math.floor((now.getTime() - t.createdAt.getTime()) / 60_000);
    return `chain ${t.chainId}: relayer transaction ${t.id} (nonce ${t.nonce}) unmined for ${minutes} min; later payouts wait behind it (check the node and the chain's fee ceiling)`;
  });
  return [...low, ...late, ...undeployed];
}
