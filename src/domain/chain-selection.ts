// The buyer's side of a charge before payment: the public view the hosted page shows, and picking
// the chain, which fixes the clone address and queues its deployment. The charge id is the
// capability: these functions take no merchant scope.
import { z } from "zod";
import type { ChainSet, EnabledChain } from "../chain/chains.js";
import { predictCloneAddress } from "../chain/clones.js";
import type { Prisma } from "../db/client.js";
import { notPayableReason } from "./charge-lifecycle.js";
import { type Charge, CHARGE_COLUMNS, type ChangeSettings, chargeResource } from "./charges.js";
import { AppError, notFound } from "./errors.js";
import { paymentStatus } from "./payments.js";
import { recordEvent } from "./events.js";
import { formatAmount, formatAmountOrNull, toUnits } from "./money.js";
import { parseInput } from "./validation.js";

const MINUTE_MS = 60_000;

/** A chain as the hosted page lists it. */
export interface PublicChain {
  chainId: number;
  name: string;
  usdcAddress: string;
  explorerUrl: string | null;
}

/** A payment as the hosted page shows it ("seen, 1 of 3 confirmations"). */
export interface PublicPayment {
  txHash: string;
  amount: string;
  status: "pending" | "confirmed";
  confirmations: number;
}

/** What anyone holding the charge id may see (API.md "Hosted-page endpoints"). */
export interface PublicCharge {
  id: string;
  /** The merchant's order id: the hosted page hands it back to `successUrl`. */
  orderId: string;
  amount: string;
  currency: string;
  status: string;
  amountReceived: string | null;
  amountRemaining: string;
  /** Seen on chain, still waiting for confirmations (not counted in amountReceived yet). */
  amountPending: string;
  /** Confirmations each payment needs on the picked chain. */
  confirmationsRequired: number | null;
  /** Payments to the clone, oldest first, each with its confirmations so far. */
  payments: PublicPayment[];
  chainId: number | null;
  cloneAddress: string | null;
  /** The settlement transaction, once the money was flushed to the merchant. */
  flushTxHash: string | null;
  expiresAt: string;
  description: string | null;
  merchantName: string;
  successUrl: string | null;
  cancelUrl: string | null;
  livemode: boolean;
  chains: PublicChain[];
  /** The status in the buyer's words, as the hosted page shows it. */
  statusMessage: string;
}

/** The hosted page's view of a charge, or 404. */
export async function getPublicCharge(prisma: Prisma, chains: ChainSet, chargeId: string): Promise<PublicCharge> {
  // One statement: anyone may ask (the hosted page, its live view, polling checkouts), so it must be cheap.
  const [row] = await prisma.$queryRaw<(Charge & { merchantName: string; cursorBlock: bigint | null; paymentRows: PaymentRow[] })[]>`
    SELECT ${CHARGE_COLUMNS},
      (SELECT name FROM merchants m WHERE m.id = charges.merchant_id) AS "merchantName",
      (SELECT block_number FROM chain_cursors cc WHERE cc.chain_id = charges.chain_id) AS "cursorBlock",
      coalesce((SELECT json_agg(json_build_object('txHash', p.tx_hash, 'amount', p.amount::text, 'status', p.status::text, 'blockNumber', p.block_number::text)
        ORDER BY p.block_number, p.log_index) FROM payments p WHERE p.charge_id = charges.id), '[]'::json) AS "paymentRows"
    FROM charges WHERE id = ${chargeId}`;
  if (!row) throw notFound("charge", chargeId);
  const { merchantName, cursorBlock, paymentRows, ...charge } = row;
  const payments = paymentRows.map((p) => {
    const block = BigInt(p.blockNumber);
    return {
      txHash: p.txHash,
      amount: BigInt(p.amount),
      status: paymentStatus(p.status),
      confirmations: cursorBlock !== null && cursorBlock >= block ? Number(cursorBlock - block) + 1 : 0,
    };
  });
  return publicCharge(charge, merchantName, chains.forMode(charge.livemode), payments);
}

/** A payment as the public view's query returns it (numbers as decimal strings). */
interface PaymentRow {
  txHash: string;
  amount: string;
  status: "SEEN" | "CONFIRMED";
  blockNumber: string;
}

/** The body of POST /v1/public/charges/:id/chain and the hosted page's chain form. */
export const selectSchema = z.strictObject({ chainId: z.number({ error: "must be a chain id (a number)" }).int() }, { error: "must be a JSON object" });

/**
 * Picks the chain a charge will be paid on, once. Fixes the clone address (CREATE2, computed
 * locally), the confirmations and a new expiry (the merchant's payment window), queues the clone's
 * deployment and records `charge.chain_selected`, all in one transaction. Returns the public view.
 */
export async function selectChain(
  prisma: Prisma,
  chains: ChainSet,
  settings: ChangeSettings,
  chargeId: string,
  input: unknown,
  now = new Date(),
): Promise<PublicCharge> {
  const { chainId } = parseInput(selectSchema, input);
  const { updated, event, view } = await prisma.$transaction(async (tx) => {
    // The row lock makes a second, concurrent selection wait and then see the first.
    const locked = await tx.$queryRaw<{ id: string }[]>`SELECT id FROM charges WHERE id = ${chargeId} FOR UPDATE`;
    if (locked.length === 0) throw notFound("charge", chargeId);
    const charge = await tx.charge.findUniqueOrThrow({
      where: { id: chargeId },
      include: { merchant: { select: { name: true, paymentWindowMinutes: true } } },
    });
    const chain = chains.get(chainId);
    if (!chain || chain.testnet === charge.livemode) {
      const offered = chains.forMode(charge.livemode).map((c) => c.chainId);
      throw new AppError("chain_unsupported", `Chain ${chainId} is not available for this charge; choose one of: ${offered.join(", ") || "none"}`, "chainId");
    }
    if (charge.chainId !== null) throw new AppError("chain_already_selected", `A chain (${charge.chainId}) has already been picked for this charge`, "chainId");
    const refusal = notPayableReason(charge, now);
    if (refusal) throw new AppError("charge_not_payable", `This charge cannot be paid: ${refusal}`, null);

    const cloneAddress = predictCloneAddress({
      factory: chain.factory,
      implementation: chain.implementation,
      chargeId,
      wallet: charge.settlementWallet,
      feeBps: charge.feeBps,
    });
    const updated = await tx.charge.update({
      where: { id: chargeId },
      data: {
        chainId,
        confirmations: chain.confirmations,
        cloneAddress,
        expiresAt: new Date(now.getTime() + charge.merchant.paymentWindowMinutes * MINUTE_MS),
      },
    });
    await tx.cloneDeployment.create({ data: { chargeId, chainId } });
    const event = await recordEvent(tx, updated, "charge.chain_selected", chargeResource(updated, settings));
    return { updated, event, view: publicCharge(updated, charge.merchant.name, chains.forMode(updated.livemode), []) };
  });
  settings.feed?.changed([updated], [event]);
  return view;
}

/** The public view of a charge, its payments and the chains offered for its mode. */
function publicCharge(c: Charge, merchantName: string, chains: EnabledChain[], payments: (Omit<PublicPayment, "amount"> & { amount: bigint })[]): PublicCharge {
  const received = c.amountReceived === null ? 0n : toUnits(c.amountReceived);
  const pending = payments.reduce((sum, p) => (p.status === "pending" ? sum + p.amount : sum), 0n);
  const view = {
    id: c.id,
    orderId: c.orderId,
    amount: formatAmount(c.amount),
    currency: c.currency,
    status: c.status,
    amountReceived: formatAmountOrNull(c.amountReceived),
    amountRemaining: formatAmount(received >= c.amount ? 0n : c.amount - received),
    amountPending: formatAmount(pending),
    confirmationsRequired: c.confirmations,
    payments: payments.map((p) => ({ ...p, amount: formatAmount(p.amount) })),
    chainId: c.chainId,
    cloneAddress: c.cloneAddress,
    flushTxHash: c.flushTxHash,
    expiresAt: c.expiresAt.toISOString(),
    description: c.description,
    merchantName,
    successUrl: c.successUrl,
    cancelUrl: c.cancelUrl,
    livemode: c.livemode,
    chains: chains.map(publicChain),
  };
  return { ...view, statusMessage: statusMessage(view) };
}

/** What the hosted page's status line says about `s`. */
export function statusMessage(s: Pick<PublicCharge, "status" | "amountReceived" | "amount" | "amountRemaining" | "amountPending" | "chainId">): string {
  switch (s.status) {
    case "COMPLETED":
      return "Payment complete. Thank you!";
    case "RECEIVED":
      return "Payment received. Sending it to the shop…";
    case "EXPIRED":
      return "This payment has expired. If you sent money after it expired, it still reaches the shop; contact them.";
    case "CANCELLED":
      return "This payment was cancelled by the shop.";
  }
  if (s.amountPending !== "0.00") return `Payment seen (${s.amountPending} USDC), waiting for confirmations…`;
  if (s.amountReceived) return `Received ${s.amountReceived} of ${s.amount} USDC. Send ${s.amountRemaining} more.`;
  return s.chainId === null ? "Choose a network to pay on." : "Waiting for your payment…";
}

/** A chain as buyers and merchants see it. */
export function publicChain(chain: EnabledChain): PublicChain {
  return { chainId: chain.chainId, name: chain.name, usdcAddress: chain.usdc, explorerUrl: chain.explorer };
}
