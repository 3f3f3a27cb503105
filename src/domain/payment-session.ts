// The buyer's view of a charge (.docs/payments.md "The hosted payment page"): what the hosted page, the public REST
// routes and the paymentSession GraphQL field show, with the status wording for people. The charge
// id is the capability: these functions take no merchant scope.
import { z } from "zod";
import type { ChainSet, EnabledChain } from "../chain/chains.js";
import { type Prisma, selectRows } from "../db/client.js";
import { amountOverpaid } from "./charges/display.js";
import { type Charge, CHARGE_COLUMNS_TEXT, chargeFromRow } from "./charges/read.js";
import { notFound } from "./errors.js";
import { paymentStatus } from "./payments.js";
import { amountRemaining } from "./charges/lifecycle.js";
import { formatAmount, formatAmountOrNull } from "./money.js";
import { Coalescer } from "../lib/coalesce.js";

/** A chain as the hosted page lists it. */
const PublicChain = z.object({ chainId: z.number().int(), name: z.string(), usdcAddress: z.string(), explorerUrl: z.string().nullable() });
export type PublicChain = z.infer<typeof PublicChain>;

/** A payment as the hosted page shows it ("seen, 1 of 3 confirmations"). */
const PublicPayment = z.object({ txHash: z.string(), amount: z.string(), status: z.enum(["pending", "confirmed"]), confirmations: z.number().int() });
export type PublicPayment = z.infer<typeof PublicPayment>;

/** What anyone holding the charge id may see (.docs/payments.md "The hosted payment page"). */
export const PublicCharge = z.object({
  id: z.string(),
  orderId: z.string().describe("The merchant's order id: the hosted page hands it back to `successUrl`."),
  amount: z.string(),
  currency: z.string(),
  status: z.string(),
  amountReceived: z.string().nullable(),
  amountRemaining: z.string(),
  amountOverpaid: z.string().describe('Confirmed money beyond amount ("0.00" when none): the hosted page tells the buyer the merchant was told.'),
  amountPending: z.string().describe("Seen on chain, still waiting for confirmations (not counted in amountReceived yet)."),
  confirmationsRequired: z.number().int().nullable().describe("Confirmations each payment needs on the picked chain."),
  payments: z.array(PublicPayment).describe("Payments to the clone, oldest first, each with its confirmations so far."),
  chainId: z.number().int().nullable(),
  cloneAddress: z.string().nullable(),
  flushTxHash: z.string().nullable().describe("The settlement transaction, once the money was paid out to the merchant."),
  expiresAt: z.string(),
  paymentWindowMinutes: z
    .number()
    .int()
    .describe("Minutes the buyer has to pay once a chain is picked: picking one sets expiresAt to that moment plus these (the merchant's payment window)."),
  description: z.string().nullable(),
  merchantName: z.string(),
  successUrl: z.string().nullable(),
  cancelUrl: z.string().nullable(),
  livemode: z.boolean(),
  chains: z.array(PublicChain),
  statusMessage: z.string().describe("The status in the buyer's words, as the hosted page shows it."),
});
export type PublicCharge = z.infer<typeof PublicCharge>;

/** The public view's row: the charge, its merchant's name, its chain's cursor and its payments (on the picked chain; others count by the ledger). */
type PublicRow = Charge & { merchant: Seller; cursorBlock: bigint | null; paymentRows: PaymentRow[] };

/** What the public view shows of the merchant. */
interface Seller {
  name: string;
  paymentWindowMinutes: number;
}

/**
 * Reads in flight per database. Anyone may ask for this view (the hosted page, its live view,
 * polling checkouts, a flood), so concurrent askers of one charge share a read (lib/coalesce.ts).
 */
const reads = new WeakMap<Prisma, Coalescer<string, PublicRow | undefined>>();

/** The hosted page's view of a charge, or 404. */
export async function getPublicCharge(prisma: Prisma, chains: ChainSet, chargeId: string): Promise<PublicCharge> {
  let coalescer = reads.get(prisma);
  if (!coalescer) reads.set(prisma, (coalescer = new Coalescer()));
  const row = await coalescer.get(chargeId, () => readPublicRow(prisma, chargeId));
  if (!row) throw notFound("charge", chargeId);
  const { merchant, cursorBlock, paymentRows, ...charge } = row;
  const payments = paymentRows.map((p) => {
    const block = BigInt(p.blockNumber);
    return {
      txHash: p.txHash,
      amount: BigInt(p.amount),
      status: paymentStatus(p.status),
      // Counted on the picked chain, whose cursor the row carries (money on another chain shows as it stands).
      confirmations: p.chainId !== charge.chainId ? 0 : cursorBlock !== null && cursorBlock >= block ? Number(cursorBlock - block) + 1 : 0,
    };
  });
  return publicCharge(charge, merchant, chains.forMode(charge.livemode), payments);
}

/** One statement below the ORM (db/client.ts, selectRows): the row of the public view. */
async function readPublicRow(prisma: Prisma, chargeId: string): Promise<PublicRow | undefined> {
  const [row] = await selectRows<Record<string, unknown> & { merchant: Seller; cursorBlock: string | null; paymentRows: PaymentRow[] }>(
    prisma,
    `SELECT ${CHARGE_COLUMNS_TEXT},
      (SELECT json_build_object('name', m.name, 'paymentWindowMinutes', m.payment_window_minutes) FROM merchants m WHERE m.id = charges.merchant_id) AS "merchant",
      (SELECT block_number::text FROM chain_cursors cc WHERE cc.chain_id = charges.chain_id) AS "cursorBlock",
      coalesce((SELECT json_agg(json_build_object('txHash', p.tx_hash, 'amount', p.amount::text, 'status', p.status::text, 'blockNumber', p.block_number::text,
          'chainId', p.chain_id) ORDER BY p.block_number, p.log_index)
        FROM chain_transfers p WHERE p.charge_id = charges.id AND p.kind = 'PAYMENT' AND p.status <> 'REVERSED'), '[]'::json) AS "paymentRows"
    FROM charges WHERE id = $1 AND kind = 'charge'`,
    [chargeId],
  );
  if (!row) return undefined;
  const { merchant, cursorBlock, paymentRows, ...charge } = row;
  return { ...chargeFromRow(charge), merchant, cursorBlock: cursorBlock === null ? null : BigInt(cursorBlock), paymentRows };
}

/** A payment as the public view's query returns it (numbers as decimal strings). */
interface PaymentRow {
  txHash: string;
  amount: string;
  status: "SEEN" | "CONFIRMED";
  blockNumber: string;
  chainId: number;
}

/** The public view of a charge (sold by `merchant`), its payments and the chains offered for its mode. */
export function publicCharge(
  c: Charge,
  merchant: Seller,
  chains: EnabledChain[],
  payments: (Omit<PublicPayment, "amount"> & { amount: bigint })[],
): PublicCharge {
  const pending = payments.reduce((sum, p) => (p.status === "pending" ? sum + p.amount : sum), 0n);
  const view = {
    id: c.id,
    orderId: c.orderId,
    amount: formatAmount(c.amount),
    currency: c.currency,
    status: c.status,
    amountReceived: formatAmountOrNull(c.amountReceived),
    amountRemaining: formatAmount(amountRemaining(c)),
    amountOverpaid: formatAmount(amountOverpaid(c)),
    amountPending: formatAmount(pending),
    confirmationsRequired: c.confirmations,
    payments: payments.map((p) => ({ ...p, amount: formatAmount(p.amount) })),
    chainId: c.chainId,
    cloneAddress: c.cloneAddress,
    flushTxHash: c.flushTxHash,
    expiresAt: c.expiresAt.toISOString(),
    paymentWindowMinutes: merchant.paymentWindowMinutes,
    description: c.description,
    merchantName: merchant.name,
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

/**
 * The name buyers know the seller by, for the record a hosted page shows (a charge, invoice, payment
 * link, refund or subscription id): what its error page is signed with. Null when the id names none of them.
 */
export async function sellerName(prisma: Prisma, id: string): Promise<string | null> {
  const where = { where: { id }, select: { merchant: { select: { name: true } } } };
  const [kind] = id.split("_", 1);
  const row =
    kind === "chrg"
      ? await prisma.charge.findUnique(where)
      : kind === "inv"
        ? await prisma.invoice.findUnique(where)
        : kind === "plink"
          ? await prisma.paymentLink.findUnique(where)
          : kind === "ref"
            ? await prisma.refund.findUnique(where)
            : kind === "sub"
              ? await prisma.subscription.findUnique(where)
              : null;
  return row?.merchant.name ?? null;
}
