// The facilitator's settle (x402 v2): a verified payment is stored for the worker to relay with the
// service's gas (one transferWithAuthorization, nothing else), and the answer waits until it is in a
// block, it failed, or X402_SETTLE_TIMEOUT_MS has passed.
//
// Invariants:
// - a signed nonce is stored once (a unique index), so a replay is refused before any gas is spent;
//   the same payment handed in again (the resource server retries after `settlement_pending`) gets
//   the first one's outcome, never a second transaction;
// - every settlement is counted against the merchant's relayer gas budget for the day, with its
//   simulated gas until its receipt's is known (domain/relayer-budget.ts);
// - an answer that gives up on a payment the worker has not sent yet fails it first (compare and
//   set), so a payment answered as failed is never sent afterwards; one already sent is answered
//   `settlement_pending` with its transaction;
// - what reaches the merchant's books is the chain's transfer to its x402 address, whoever sent it:
//   the ledger never depends on this row (domain/x402/payments.ts only describes it).
import type { Prisma } from "../../db/client.js";
import { isUniqueViolation } from "../../db/errors.js";
import type { X402Payment } from "../../generated/prisma/client.js";
import type { ChainSet } from "../../chain/chains.js";
import { type AuthorizationReaders, authorizationRow } from "../authorizations.js";
import type { ChargeSettings } from "../charges/settings.js";
import { AppError } from "../errors.js";
import { newId } from "../ids.js";
import { formatAmount, toUnits } from "../money.js";
import { budgetExhausted, checkRelayerBudget, countRelayerRefusal, withinRelayerBudget } from "../relayer-budget.js";
import type { Scope } from "../scope.js";
import type { FacilitatorRequest, X402Refusal } from "./requests.js";
import { type CheckedPayment, checkPayment, chainOfNetwork, networkOf, type X402Deps } from "./verify.js";

/** What settle is bound by besides verify's: the merchant's gas budget and how long an answer waits. */
export interface SettleDeps extends X402Deps {
  /** RELAYER_GAS_BUDGET_PER_MERCHANT; the default where unset. */
  relayerGasBudget?: bigint | undefined;
  /** X402_SETTLE_TIMEOUT_MS. */
  timeoutMs: number;
  /** How often the answer looks at the payment while it waits. */
  pollMs?: number;
}

/** Settle's wait for a transaction when X402_SETTLE_TIMEOUT_MS is not configured. */
const DEFAULT_SETTLE_TIMEOUT_MS = 30_000;

/** The facilitator's dependencies, from the service's charge settings, chains and token readers. */
export function x402Deps(prisma: Prisma, settings: ChargeSettings, chains: ChainSet, readers: AuthorizationReaders): SettleDeps {
  return {
    prisma,
    chains,
    readers,
    factory: settings.factory,
    minAmount: settings.x402?.minAmount,
    relayerGasBudget: settings.relayerGasBudget,
    timeoutMs: settings.x402?.settleTimeoutMs ?? DEFAULT_SETTLE_TIMEOUT_MS,
  };
}

/** The settle answer (SettleResponse), before it is shaped for the wire. */
export type Settlement =
  | { success: true; transaction: string; network: string; payer: string; amount: string }
  | { success: false; errorReason: X402Refusal["reason"]; errorMessage: string; transaction: string; network: string; payer?: string };

/** Settles `request` for the scope's merchant and answers once it is mined, failed or timed out. */
export async function settlePayment(deps: SettleDeps, scope: Scope, request: FacilitatorRequest, now = new Date()): Promise<Settlement> {
  const network = request.paymentRequirements.network;
  const failed = (refusal: X402Refusal, payer?: string, transaction = ""): Settlement => ({
    success: false,
    errorReason: refusal.reason,
    errorMessage: refusal.message,
    transaction,
    network,
    ...(payer && { payer }),
  });
  const same = await storedTwin(deps, scope, request);
  if (same) return answer(deps, same, network);
  const checked = await checkPayment(deps, scope, request, now);
  if ("refusal" in checked) return failed(checked.refusal, checked.payer);
  const { payment } = checked;
  let stored: X402Payment;
  try {
    stored = await storePayment(deps, scope, request, payment, now);
  } catch (e) {
    if (e instanceof AppError && e.code === "relayer_budget_exhausted")
      return failed({ reason: "invalid_transaction_state", message: e.message }, payment.payer);
    // A racing twin stored the same nonce first: the same payment gets its outcome, any other is a replay.
    const twin = isUniqueViolation(e) ? await storedTwin(deps, scope, request) : null;
    if (twin) return answer(deps, twin, network);
    if (isUniqueViolation(e))
      return failed(
        { reason: "invalid_exact_evm_nonce_already_used", message: "paymentPayload.payload.authorization.nonce has already been settled" },
        payment.payer,
      );
    throw e;
  }
  return answer(deps, stored, network);
}

/** The payment stored for this exact request (same merchant, mode, nonce and signature), if any. */
async function storedTwin(deps: X402Deps, scope: Scope, request: FacilitatorRequest): Promise<X402Payment | null> {
  const chain = chainOfNetwork(deps.chains, scope.livemode, request.paymentRequirements.network);
  if (!chain) return null;
  const { signature, authorization } = request.paymentPayload.payload;
  const stored = await deps.prisma.x402Payment.findUnique({
    where: { chainId_fromAddress_nonce: { chainId: chain.chainId, fromAddress: authorization.from, nonce: authorization.nonce } },
  });
  const same =
    stored && stored.merchantId === scope.merchantId && stored.livemode === scope.livemode && stored.signature.toLowerCase() === signature.toLowerCase();
  return same ? stored : null;
}

/** Stores a checked payment for the worker, its simulated gas claimed against the merchant's day under the chain's budget lock. */
async function storePayment(deps: SettleDeps, scope: Scope, request: FacilitatorRequest, p: CheckedPayment, now: Date): Promise<X402Payment> {
  const { gasEstimate } = p;
  const budget = { merchantId: scope.merchantId, chainId: p.chain.chainId, kind: "x402" as const, budget: deps.relayerGasBudget };
  await checkRelayerBudget(deps.prisma, budget, gasEstimate, null, now);
  const resource = request.paymentPayload.resource;
  try {
    return await deps.prisma.$transaction(async (tx) => {
      if (!(await withinRelayerBudget(tx, budget, gasEstimate, now))) throw budgetExhausted(budget, gasEstimate, now);
      return tx.x402Payment.create({
        data: {
          id: newId("x402pay"),
          merchantId: scope.merchantId,
          livemode: scope.livemode,
          chargeId: p.anchor.id,
          chainId: p.chain.chainId,
          gasEstimate,
          resource: resource?.url ?? null,
          description: resource?.description ?? null,
          ...authorizationRow(p.authorization, now),
        },
      });
    });
  } catch (e) {
    // Refused under the lock: counted now that the transaction has rolled back.
    if (e instanceof AppError && e.code === "relayer_budget_exhausted") await countRelayerRefusal(deps.prisma, budget, now);
    throw e;
  }
}

/** Waits for `payment`'s outcome up to the timeout; gives up on one not sent yet (it is failed, never to be sent). */
async function answer(deps: SettleDeps, payment: X402Payment, network: string): Promise<Settlement> {
  const until = Date.now() + deps.timeoutMs;
  let current = payment;
  while ((current.status === "RELAYING" || current.status === "SENT") && Date.now() < until) {
    await new Promise((r) => setTimeout(r, deps.pollMs ?? 100));
    current = (await deps.prisma.x402Payment.findUnique({ where: { id: payment.id } })) ?? current;
  }
  const payer = current.fromAddress;
  if (current.status === "SETTLED") {
    // One payment pays for one request: of the settle calls that carry it (requests sent at once with
    // the same payment all pass verify), only the first to see it settled is told so.
    const { count } = await deps.prisma.x402Payment.updateMany({ where: { id: current.id, answeredAt: null }, data: { answeredAt: new Date() } });
    if (count === 0) {
      const errorMessage = "this payment's settlement was already answered to another request: one payment pays for one request";
      return { success: false, errorReason: "invalid_exact_evm_nonce_already_used", errorMessage, transaction: current.txHash!, network, payer };
    }
    return { success: true, transaction: current.txHash!, network, payer, amount: toUnits(current.value).toString() };
  }
  if (current.status === "RELAYING") {
    const error = `not sent within X402_SETTLE_TIMEOUT_MS (${deps.timeoutMs} ms)`;
    const { count } = await deps.prisma.x402Payment.updateMany({ where: { id: current.id, status: "RELAYING" }, data: { status: "FAILED", error } });
    // The worker took it at this very moment: it is on its way after all (read again, answered as it now stands).
    if (count === 0) return answer({ ...deps, timeoutMs: 0 }, await deps.prisma.x402Payment.findUniqueOrThrow({ where: { id: current.id } }), network);
    return {
      success: false,
      errorReason: "invalid_transaction_state",
      errorMessage: `the payment was ${error}; it will not be sent`,
      transaction: "",
      network,
      payer,
    };
  }
  const transaction = await latestHash(deps.prisma, current);
  if (current.status === "SENT") {
    const errorMessage = `the transaction carrying ${formatAmount(current.value)} USDC is on its way but not in a block after ${deps.timeoutMs} ms; settle again to wait for it`;
    return { success: false, errorReason: "settlement_pending", errorMessage, transaction, network, payer };
  }
  return { success: false, errorReason: "invalid_transaction_state", errorMessage: current.error ?? "the transaction failed", transaction, network, payer };
}

/** The hash the payment's transaction was last sent as (a fee bump replaces it), or "". */
async function latestHash(prisma: Prisma, p: X402Payment): Promise<string> {
  if (p.txHash) return p.txHash;
  if (!p.txId) return "";
  const tx = await prisma.relayerTransaction.findUnique({ where: { id: p.txId }, select: { txHash: true, txHashes: true } });
  return tx?.txHash ?? tx?.txHashes.at(-1) ?? "";
}

/** The answer to `GET /x402/supported`: `exact` on every chain enabled for the key's mode. */
export function supportedKinds(deps: Pick<X402Deps, "chains">, scope: Scope) {
  return {
    kinds: deps.chains.forMode(scope.livemode).map((c) => ({ x402Version: 2, scheme: "exact", network: networkOf(c.chainId) })),
    extensions: [] as string[],
    signers: {} as Record<string, string[]>,
  };
}
