// The relayer's gas, counted per UTC day (.docs/payments.md "What the relayer pays for"): what a chain
// spends on payments without gas (CHAIN_<id>_GASLESS_DAILY_GAS) and what each merchant's sweeps,
// buyers' payments without gas and x402 settlements spend on a chain (RELAYER_GAS_BUDGET_PER_MERCHANT). Anyone holding a
// merchant's key, or a buyer on its page, can make the relayer spend; the budget caps what one
// merchant's doors can cost the operator in a day.
//
// Invariants:
// - one count for every budget (`relayerGasToday`): each relayed action's gas from its receipt once
//   known, what its simulation needed until then, nothing for one that failed without being mined;
// - an action counts toward the UTC day its transaction was first sent in (until then, the day it was
//   asked for), so one asked before midnight and sent after still counts once;
// - the budget is checked before anything is sent: at the request (a clear 429 saying when it resets)
//   and again when the gas is claimed, under the chain's budget lock (`withinRelayerBudget`), so a
//   sweep and a payment without gas cannot both pass on the same gas;
// - each refusal is counted (merchant, chain, kind, UTC day) for /metrics.
import type { Prisma } from "../db/client.js";
import { Prisma as P } from "../generated/prisma/client.js";
import { AppError } from "./errors.js";

type Db = Prisma | P.TransactionClient;

const DAY_MS = 86_400_000;

/** Advisory-lock keys for a chain's relayer budgets: a fixed base plus the chain id (apart from the chain runner's). */
const BUDGET_LOCK_BASE = 7_400_000_000;

/** RELAYER_GAS_BUDGET_PER_MERCHANT's default: gas per merchant, chain and UTC day (about 20 payments without gas, or 10 sweeps). */
export const DEFAULT_RELAYER_GAS_BUDGET = 2_000_000n;

/** What the relayer does for a merchant that a budget counts. */
export type RelayedKind = "sweep" | "gasless_payment" | "x402";

/** Every kind: a merchant's budget counts them all together. */
const RELAYED_KINDS: readonly RelayedKind[] = ["sweep", "gasless_payment", "x402"];

/** The UTC day `now` falls in: [start, end). */
export function budgetDay(now: Date): { start: Date; end: Date } {
  const start = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()));
  return { start, end: new Date(start.getTime() + 86_400_000) };
}

/**
 * Relayer gas on `chainId` since the start of the UTC day for `kinds` (a merchant's, or the whole
 * chain's): each action's real gas where its receipt is known, what its simulation needed until then,
 * by the day its transaction was first sent (asked for, until sent).
 */
export async function relayerGasToday(
  db: Db,
  chainId: number,
  scope: { kinds: readonly RelayedKind[]; merchantId?: string },
  now = new Date(),
): Promise<bigint> {
  const { start } = budgetDay(now);
  const merchant = scope.merchantId ?? null;
  const parts: P.Sql[] = [];
  if (scope.kinds.includes("gasless_payment")) {
    parts.push(P.sql`SELECT coalesce(a.gas_used, a.gas_estimate) AS gas FROM authorizations a JOIN charges c ON c.id = a.charge_id
      LEFT JOIN relayer_transactions r ON r.id = a.tx_id
      WHERE a.chain_id = ${chainId} AND a.purpose = 'PAYMENT' AND coalesce(r.created_at, a.created_at) >= ${start} AND (a.status <> 'FAILED' OR a.gas_used IS NOT NULL)
        AND (${merchant}::text IS NULL OR c.merchant_id = ${merchant})`);
  }
  if (scope.kinds.includes("sweep")) {
    parts.push(P.sql`SELECT coalesce(s.gas_used, s.gas_needed) AS gas FROM sweeps s JOIN charges c ON c.id = s.charge_id
      LEFT JOIN relayer_transactions r ON r.id = s.tx_id
      WHERE s.chain_id = ${chainId} AND coalesce(r.created_at, s.created_at) >= ${start} AND (s.status <> 'FAILED' OR s.gas_used IS NOT NULL)
        AND (${merchant}::text IS NULL OR c.merchant_id = ${merchant})`);
  }
  if (scope.kinds.includes("x402")) {
    parts.push(P.sql`SELECT coalesce(x.gas_used, x.gas_estimate) AS gas FROM x402_payments x
      LEFT JOIN relayer_transactions r ON r.id = x.tx_id
      WHERE x.chain_id = ${chainId} AND coalesce(r.created_at, x.created_at) >= ${start} AND (x.status <> 'FAILED' OR x.gas_used IS NOT NULL)
        -- Settle sends within X402_SETTLE_TIMEOUT_MS (80 s at most) or never: older payments are not this day's (bounds the index scan).
        AND x.created_at >= ${new Date(start.getTime() - DAY_MS)} AND ${merchant === null ? P.sql`TRUE` : P.sql`x.merchant_id = ${merchant}`}`);
  }
  if (parts.length === 0) return 0n;
  const [row] = await db.$queryRaw<{ gas: string }[]>`SELECT coalesce(sum(gas), 0)::text AS gas FROM (${P.join(parts, " UNION ALL ")}) g`;
  return BigInt(row!.gas);
}

/** What a merchant's budget check needs: whose, on which chain, for what, and the budget (default where unset). */
export interface BudgetCheck {
  merchantId: string;
  chainId: number;
  kind: RelayedKind;
  budget: bigint | undefined;
}

/** The gas `check.merchantId` may still have the relayer spend on its chain today (0 or less: none). */
export async function merchantGasLeft(db: Db, check: BudgetCheck, now = new Date()): Promise<bigint> {
  const spent = await relayerGasToday(db, check.chainId, { kinds: RELAYED_KINDS, merchantId: check.merchantId }, now);
  return (check.budget ?? DEFAULT_RELAYER_GAS_BUDGET) - spent;
}

/** The 429 `relayer_budget_exhausted` for `check` (with Retry-After: until the day's end). */
export function budgetExhausted(check: BudgetCheck, needed: bigint, now = new Date(), param: string | null = null): AppError {
  const { end } = budgetDay(now);
  const message =
    `The relayer gas for sweeps, payments without gas and x402 settlements on chain ${check.chainId} is spent for today ` +
    `(RELAYER_GAS_BUDGET_PER_MERCHANT, ${check.budget ?? DEFAULT_RELAYER_GAS_BUDGET} gas${needed > 0n ? `; this needs ${needed}` : ""}); it resets at ${end.toISOString()}.`;
  const retryAfter = Math.max(1, Math.ceil((end.getTime() - now.getTime()) / 1000));
  return new AppError("relayer_budget_exhausted", message, param, { headers: { "Retry-After": String(retryAfter) } });
}

/**
 * Whether `needed` more gas fits `check.merchantId`'s day on its chain (none left: nothing fits). A
 * refusal is counted for /metrics.
 */
export async function fitsRelayerBudget(db: Prisma, check: BudgetCheck, needed: bigint, now = new Date()): Promise<boolean> {
  const left = await merchantGasLeft(db, check, now);
  if (left > 0n && needed <= left) return true;
  await countRelayerRefusal(db, check, now);
  return false;
}

/** Throws the 429 `relayer_budget_exhausted` (counted) when `needed` more gas does not fit the merchant's day; nothing else changes. */
export async function checkRelayerBudget(db: Prisma, check: BudgetCheck, needed: bigint, param: string | null, now = new Date()): Promise<void> {
  if (!(await fitsRelayerBudget(db, check, needed, now))) throw budgetExhausted(check, needed, now, param);
}

/** Takes the chain's budget lock until the end of `tx`: one claim of its relayer gas at a time. */
export async function lockRelayerBudget(tx: P.TransactionClient, chainId: number): Promise<void> {
  await tx.$executeRaw`SELECT pg_advisory_xact_lock(${BigInt(BUDGET_LOCK_BASE + chainId)})`;
}

/**
 * Under the chain's budget lock (taken here, held until `tx` ends): whether `needed` more gas fits
 * `check.merchantId`'s day; the caller claims it in `tx` when it does. A refusal is not counted here
 * (`tx` may roll back): the caller counts it with `countRelayerRefusal`.
 */
export async function withinRelayerBudget(tx: P.TransactionClient, check: BudgetCheck, needed: bigint, now = new Date()): Promise<boolean> {
  await lockRelayerBudget(tx, check.chainId);
  const left = await merchantGasLeft(tx, check, now);
  return left > 0n && needed <= left;
}

/** Counts one refusal of `check` for /metrics (merchant, chain, kind, UTC day). */
export async function countRelayerRefusal(db: Prisma, check: BudgetCheck, now = new Date()): Promise<void> {
  const day = budgetDay(now).start;
  await db.relayerBudgetRefusal.upsert({
    where: { merchantId_chainId_kind_day: { merchantId: check.merchantId, chainId: check.chainId, kind: check.kind, day } },
    create: { merchantId: check.merchantId, chainId: check.chainId, kind: check.kind, day, count: 1 },
    update: { count: { increment: 1 } },
  });
}

/** What /metrics reports of the relayer's work: gas used (all time) by chain and kind, and budget refusals by chain and kind. */
export async function relayerGasFigures(prisma: Prisma): Promise<{
  gasUsed: { chainId: number; kind: string; gas: bigint }[];
  refusals: { chainId: number; kind: string; count: bigint }[];
}> {
  const [gasUsed, refusals] = await Promise.all([
    prisma.$queryRaw<{ chainId: number; kind: string; gas: string }[]>`
      SELECT chain_id AS "chainId", CASE purpose WHEN 'PAYMENT' THEN 'gasless_payment' ELSE 'refund_authorization' END AS kind, sum(gas_used)::text AS gas
      FROM authorizations WHERE gas_used IS NOT NULL GROUP BY 1, 2
      UNION ALL
      SELECT chain_id, 'sweep', sum(gas_used)::text FROM sweeps WHERE gas_used IS NOT NULL GROUP BY 1
      UNION ALL
      SELECT chain_id, 'x402', sum(gas_used)::text FROM x402_payments WHERE gas_used IS NOT NULL GROUP BY 1
      ORDER BY 1, 2`,
    prisma.$queryRaw<{ chainId: number; kind: string; count: bigint }[]>`
      SELECT chain_id AS "chainId", kind, sum(count)::bigint AS count FROM relayer_budget_refusals GROUP BY 1, 2 ORDER BY 1, 2`,
  ]);
  return { gasUsed: gasUsed.map((g) => ({ ...g, gas: BigInt(g.gas) })), refusals };
}
