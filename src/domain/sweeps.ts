// Sweeps (.docs/payments.md "Chains and the payment contract"): another token, or the native coin, that reached a charge's
// address is paid out to the merchant's wallet (less the fee, as the clone pays everything it pays).
// Asked for by the merchant (GraphQL `sweepCharge`) or an operator (`stablegate sweep`); the worker
// that holds the chain's relayer sends it (jobs/sweeps.ts). USDC is never swept: the service pays it
// out itself, by the charge's rules.
import { getAddress } from "ethers";
import { z } from "zod";
import type { ChainSet } from "../chain/chains.js";
import { UNREADABLE_BALANCE } from "../chain/holdings.js";
import type { Prisma } from "../db/client.js";
import type { Prisma as P, Sweep } from "../generated/prisma/client.js";
import type { AuthorizationReaders } from "./authorizations.js";
import { type Charge, CHARGE_COLUMNS } from "./charges/read.js";
import type { ChargeSettings } from "./charges/settings.js";
import { AppError, invalidParam, notFound } from "./errors.js";
import { newId } from "./ids.js";
import { toUnits } from "./money.js";
import { checkRelayerBudget } from "./relayer-budget.js";
import { inScope, type Scope } from "./scope.js";
import type { SweepRequest } from "./sweep-requests.js";

export type { Sweep };

/**
 * The least gas a sweep is counted for until the worker knows what it needs: a payout of one clone
 * costs 60–100k gas, more with an expensive token (the worker checks the gas it really needs before it
 * sends, and does not simulate one for a merchant with less than this left).
 */
export const SWEEP_MIN_GAS = 100_000n;

/** The most sweeps a charge lists, newest first: a bound on the answer, well past the tokens one address holds. */
export const CHARGE_SWEEPS_LISTED = 50;

/** Where a sweep's changes are announced: the charge feed (none in a process that serves no one live, like the CLI). */
export type SweepSettings = Pick<ChargeSettings, "feed">;

/** A sweep as the API shows it. */
export const SweepResource = z.object({
  id: z.string().describe("The sweep's id (swp_…)."),
  object: z.literal("sweep"),
  chargeId: z.string().describe("The charge whose address is swept."),
  chainId: z.number().int().describe("The chain it is swept on."),
  token: z.string().describe('The token\'s address, or "native".'),
  status: z.enum(["PENDING", "SENT", "DONE", "FAILED"]).describe("PENDING (the worker sends it soon), SENT, DONE, or FAILED (see error)."),
  txHash: z.string().nullable().describe("The worker's transaction, once sent."),
  error: z.string().nullable().describe("Why it FAILED; null otherwise."),
  createdAt: z.string().describe("When it was requested."),
});
export type SweepResource = z.infer<typeof SweepResource>;

/** Shapes a sweep (with its transaction's hash, once sent). */
export function sweepResource(s: Sweep & { tx?: { txHash: string | null; txHashes: string[] } | null }): SweepResource {
  return {
    id: s.id,
    object: "sweep",
    chargeId: s.chargeId,
    chainId: s.chainId,
    token: s.token,
    status: s.status,
    txHash: s.tx ? (s.tx.txHash ?? s.tx.txHashes.at(-1) ?? null) : null,
    error: s.error,
    createdAt: s.createdAt.toISOString(),
  };
}

/** What a sweep request is checked against (the chains, each chain's view of balances, RELAYER_GAS_BUDGET_PER_MERCHANT), and the feed it is announced on. */
export interface SweepDoor extends SweepSettings {
  chains: ChainSet;
  readers: AuthorizationReaders;
  relayerGasBudget?: bigint | undefined;
}

/**
 * Asks for `input.token` at charge `chargeId`'s address to be paid out to its merchant (`scope`: the
 * merchant's; null: an operator's). The same sweep asked again while one waits is that one. 400 for
 * a bad token or chain, 409 `sweep_not_possible` for USDC or what the charge's contracts cannot move,
 * 409 `sweep_unchanged` when the last sweep of it moved nothing and the balance is what it was then,
 * 429 `relayer_budget_exhausted` when the merchant's relayer gas for the day cannot pay for this sweep
 * and those still waiting, each at SWEEP_MIN_GAS.
 */
export async function requestSweep(
  prisma: Prisma,
  door: SweepDoor,
  scope: Scope | null,
  chargeId: string,
  data: SweepRequest,
  now = new Date(),
): Promise<Sweep> {
  const { chains } = door;
  const charge = await prisma.charge.findFirst({ where: { id: chargeId, ...(scope && inScope(scope)) } });
  if (!charge) throw notFound("charge", chargeId);
  const chainId = data.chainId ?? charge.chainId;
  if (chainId === null) throw invalidParam("chainId", "Invalid chainId: the charge has no chain yet; name the chain to sweep on");
  const chain = chains.get(chainId);
  if (!chain || chain.testnet === charge.livemode) throw invalidParam("chainId", `Invalid chainId: chain ${chainId} is not enabled for this charge's mode`);
  const native = /^(native|eth)$/i.test(data.token);
  let token = "native";
  if (!native) {
    try {
      token = getAddress(data.token);
    } catch {
      throw invalidParam("token", `Invalid token: ${data.token} is neither a token address nor "native"`);
    }
  }
  if (token === getAddress(chain.usdc)) {
    throw new AppError(
      "sweep_not_possible",
      "USDC is not swept: the service pays it out itself as the charge's rules say (see the charge's settlements).",
      "token",
    );
  }
  const version = charge.chainId === chainId || charge.contractVersion === 2 ? charge.contractVersion : null;
  if (version === null || charge.depositAddress === null)
    throw new AppError("sweep_not_possible", `Charge ${chargeId} has no address on chain ${chainId}.`, "chainId");
  if (version === 1 && native) throw new AppError("sweep_not_possible", "Clones made before version 2 cannot move the native coin.", "token");
  if (version === 1 && !chain.v1)
    throw new AppError("sweep_not_possible", `Chain ${chainId} has no CHAIN_${chainId}_FACTORY_V1 for this charge's clone.`, "chainId");
  const waiting = await prisma.sweep.findFirst({ where: { chargeId, chainId, token, status: { in: ["PENDING", "SENT"] } } });
  if (waiting) return waiting;
  await refuseUnchanged(prisma, door.readers, { chargeId, chainId, token, address: charge.depositAddress });
  // Each sweep still waiting counts at the least a sweep costs: a burst of requests is refused once
  // they could not all fit, rather than queued for the worker to simulate and refuse one by one.
  const pending = await prisma.sweep.count({ where: { chainId, status: "PENDING", charge: { merchantId: charge.merchantId } } });
  const needed = SWEEP_MIN_GAS * BigInt(pending + 1);
  await checkRelayerBudget(prisma, { merchantId: charge.merchantId, chainId, kind: "sweep", budget: door.relayerGasBudget }, needed, null, now);
  const sweep = await prisma.sweep.create({ data: { id: newId("swp"), chargeId, chainId, token, createdAt: now, updatedAt: now } });
  await announceSweepChange(prisma, door, chargeId);
  return sweep;
}

/**
 * 409 `sweep_unchanged` when the last sweep of this token at this address moved nothing and the
 * address holds what it held then: sending it again would only spend the relayer's gas again.
 */
async function refuseUnchanged(
  prisma: Prisma,
  readers: AuthorizationReaders,
  s: { chargeId: string; chainId: number; token: string; address: string },
): Promise<void> {
  // A sweep that failed without a look at the balance (refused for the budget, dropped) says nothing
  // about it: the last one that moved something, or saw what stayed, decides.
  const last = await prisma.sweep.findFirst({
    where: { chargeId: s.chargeId, chainId: s.chainId, token: s.token, OR: [{ status: "DONE" }, { status: "FAILED", balanceSeen: { not: null } }] },
    orderBy: [{ createdAt: "desc" }, { id: "desc" }],
  });
  if (last?.status !== "FAILED" || last.balanceSeen === null) return;
  const reader = readers(s.chainId);
  // A token that will not tell its balance stays refused for as long as it will not; a node that
  // cannot be reached is no answer (it throws).
  const holds = reader ? await reader.holding(s.token, s.address) : null;
  if (holds !== toUnits(last.balanceSeen)) return;
  throw new AppError(
    "sweep_unchanged",
    `The last sweep of ${s.token} here (${last.id}) moved nothing, and ` +
      (holds === UNREADABLE_BALANCE ? "the token still will not tell the address's balance" : `the address still holds the same ${holds} base units`) +
      ": it is not sent again until that balance changes.",
    "token",
  );
}

/** A sweep of charge `chargeId` (any merchant's when `scope` is null), or 404. */
export async function getSweep(prisma: Prisma, scope: Scope | null, id: string) {
  const sweep = await prisma.sweep.findFirst({
    where: { id, ...(scope && { charge: inScope(scope) }) },
    include: { tx: { select: { txHash: true, txHashes: true } } },
  });
  if (!sweep) throw notFound("sweep", id);
  return sweep;
}

/** The newest sweeps of charge `chargeId` (CHARGE_SWEEPS_LISTED at most), newest first; the caller has checked the charge is the reader's. */
export function chargeSweeps(prisma: Prisma, chargeId: string) {
  return prisma.sweep.findMany({
    where: { chargeId },
    include: { tx: { select: { txHash: true, txHashes: true } } },
    orderBy: [{ createdAt: "desc" }, { id: "desc" }],
    take: CHARGE_SWEEPS_LISTED,
  });
}

/**
 * Announces charge `chargeId` as changed by one of its sweeps, once that change has committed:
 * `chargeUpdated` sends the charge, and its sweeps, again. A sweep changes no column of the charge,
 * and a live stream skips a charge identical to the last one it sent, so the charge's `updatedAt`
 * moves on (by a millisecond at least: two changes within one must not look like one).
 * Its own statement, after the sweep's: the claim's transaction holds the chain's budget lock, and
 * locking the charge there too would risk a deadlock with a payout; a crash between the two only
 * leaves the page to learn of the sweep with the charge's next change or reload.
 */
export async function announceSweepChange(prisma: Prisma, settings: SweepSettings, chargeId: string): Promise<void> {
  const [charge] = await prisma.$queryRaw<Charge[]>`
    UPDATE charges SET updated_at = GREATEST(now(), updated_at + interval '1 millisecond') WHERE id = ${chargeId} RETURNING ${CHARGE_COLUMNS}`;
  if (charge) settings.feed?.changed([charge]);
}

/**
 * A PENDING sweep the worker will not send: why, and the balance the address held when it looked
 * (`balanceSeen`; null when it did not look), so the same sweep is refused until that balance changes.
 */
export async function failSweep(prisma: Prisma, settings: SweepSettings, id: string, error: string, balanceSeen: bigint | null = null): Promise<void> {
  const failed = await prisma.sweep.updateManyAndReturn({
    where: { id, status: "PENDING" },
    data: { status: "FAILED", error, balanceSeen: balanceSeen?.toString() ?? null },
    select: { chargeId: true },
  });
  for (const { chargeId } of failed) await announceSweepChange(prisma, settings, chargeId);
}

/**
 * Claims a PENDING sweep for the relayer transaction `txId`, in the transaction that stores it; false
 * when it is no longer PENDING. The caller announces it (announceSweepChange) once that transaction has committed.
 */
export async function claimSweep(tx: P.TransactionClient, id: string, txId: string, gasNeeded: bigint): Promise<boolean> {
  const { count } = await tx.sweep.updateMany({ where: { id, status: "PENDING" }, data: { status: "SENT", txId, gasNeeded } });
  return count === 1;
}

/**
 * How the relayer transaction `txId` of a sweep ended: DONE when the clone gave up the token, else
 * FAILED with why and, when it was looked at, the balance that stayed (`balanceSeen`).
 */
export async function endSweep(
  prisma: Prisma,
  settings: SweepSettings,
  txId: string,
  end: { done: true; gasUsed: bigint } | { done: false; error: string; gasUsed?: bigint; balanceSeen?: bigint | null },
): Promise<void> {
  const data = end.done
    ? { status: "DONE" as const, error: null, gasUsed: end.gasUsed }
    : {
        status: "FAILED" as const,
        error: end.error,
        gasUsed: end.gasUsed,
        balanceSeen: end.balanceSeen === undefined ? undefined : (end.balanceSeen?.toString() ?? null),
      };
  const ended = await prisma.sweep.updateManyAndReturn({ where: { txId }, data, select: { chargeId: true } });
  for (const { chargeId } of ended) await announceSweepChange(prisma, settings, chargeId);
}
