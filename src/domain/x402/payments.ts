// x402 payments as merchants see them: the `x402.payment` event each confirmed payment to a merchant's
// x402 address sends, and the list of what settle handled. The money itself is the ledger's: a
// payment row of the address's charges row, written when the chain's transfer is confirmed, whoever
// sent it; what settle stored (the resource, the description) only describes it.
import { z } from "zod";
import type { Prisma } from "../../db/client.js";
import type { Prisma as P, X402Payment } from "../../generated/prisma/client.js";
import type { NewEvent } from "../events.js";
import { formatAmount, type Units } from "../money.js";
import { keysetPage, type Page, type PageEnd, type PageRequest } from "../paging.js";
import { inScope, type Scope } from "../scope.js";
import { networkOf } from "./verify.js";

/** An x402 payment as the API, webhooks and the dashboard show it. */
export const X402PaymentResource = z.object({
  id: z.string().nullable().describe("The settlement's id (x402pay_…); null for money sent to the x402 address some other way."),
  object: z.literal("x402_payment"),
  livemode: z.boolean().describe("True in live mode, false in test mode."),
  status: z
    .enum(["RELAYING", "SENT", "SETTLED", "FAILED", "CONFIRMED"])
    .describe("RELAYING/SENT: on its way; SETTLED: in a block; FAILED: see error; CONFIRMED: in the ledger (its confirmations reached)."),
  amount: z.string().describe('USDC, e.g. "0.01".'),
  payer: z.string().describe("The address that paid."),
  payTo: z.string().describe("The merchant's x402 address it paid."),
  network: z.string().describe('The chain, as a CAIP-2 id ("eip155:8453").'),
  txHash: z.string().nullable().describe("The transaction that moved the money."),
  resource: z.string().nullable().describe("What was paid for: the URL the resource server named."),
  description: z.string().nullable().describe("The resource server's description of it."),
  error: z.string().nullable().describe("Why it FAILED; null otherwise."),
  createdAt: z.string().describe("When settle received it (for money sent some other way: when it was confirmed)."),
});
export type X402PaymentResource = z.infer<typeof X402PaymentResource>;

/** Shapes a settlement. */
export function x402PaymentResource(p: X402Payment): X402PaymentResource {
  return {
    id: p.id,
    object: "x402_payment",
    livemode: p.livemode,
    status: p.status,
    amount: formatAmount(p.value),
    payer: p.fromAddress,
    payTo: p.toAddress,
    network: networkOf(p.chainId),
    txHash: p.txHash,
    resource: p.resource,
    description: p.description,
    error: p.error,
    createdAt: p.createdAt.toISOString(),
  };
}

/** A confirmed payment to an x402 address, as confirming a chain's money reads it. */
export interface ConfirmedX402 {
  /** The chain transfer. */
  id: string;
  anchor: Scope & { id: string; depositAddress: string | null };
  chainId: number;
  txHash: string;
  fromAddress: string;
  amount: Units;
  /** The event's cause (the chain fact and which inclusion of it): a replay records nothing new. */
  cause: string;
}

/**
 * The settlements among confirmed payments to x402 addresses, by chain transfer id: the payment's
 * transaction is one its relayer transaction was sent as (the ledger may confirm the transfer before
 * the relayer has read the receipt, so before txHash is set), from the same payer.
 */
export async function x402Settlements(
  tx: P.TransactionClient,
  payments: readonly (Pick<ConfirmedX402, "id" | "chainId" | "txHash" | "fromAddress"> & { chargeId: string })[],
): Promise<Map<string, X402Payment>> {
  if (payments.length === 0) return new Map();
  const settled = await tx.x402Payment.findMany({
    where: {
      OR: payments.map((c) => ({
        chainId: c.chainId,
        chargeId: c.chargeId,
        fromAddress: c.fromAddress,
        OR: [{ txHash: c.txHash }, { tx: { txHashes: { has: c.txHash } } }],
      })),
    },
    include: { tx: { select: { txHashes: true } } },
  });
  const found = new Map<string, X402Payment>();
  for (const c of payments) {
    const s = settled.find(
      (s) =>
        s.chainId === c.chainId && s.chargeId === c.chargeId && s.fromAddress === c.fromAddress && (s.txHash === c.txHash || s.tx?.txHashes.includes(c.txHash)),
    );
    if (s) found.set(c.id, s);
  }
  return found;
}

/** The `x402.payment` events of confirmed payments to x402 addresses, each with what settle stored about it when settle relayed it. */
export function x402PaymentEvents(confirmed: readonly ConfirmedX402[], settled: ReadonlyMap<string, X402Payment>, now: Date): NewEvent[] {
  return confirmed.map((c) => {
    const s = settled.get(c.id);
    const data: X402PaymentResource = {
      ...(s ? x402PaymentResource(s) : { id: null, resource: null, description: null, error: null, createdAt: now.toISOString() }),
      object: "x402_payment",
      livemode: c.anchor.livemode,
      status: "CONFIRMED",
      amount: formatAmount(c.amount),
      payer: c.fromAddress,
      payTo: c.anchor.depositAddress ?? "",
      network: networkOf(c.chainId),
      txHash: c.txHash,
    };
    return { scope: c.anchor, type: "x402.payment", data, cause: c.cause };
  });
}

/** One page of the settlements settle handled for the scope, newest first. */
export function listX402Payments(prisma: Prisma, scope: Scope, page: PageRequest, end: PageEnd = "newest"): Promise<Page<X402Payment>> {
  return keysetPage(
    "x402_payment",
    page,
    (id) => prisma.x402Payment.findFirst({ where: { id, ...inScope(scope) }, select: { id: true, createdAt: true } }),
    (q) => prisma.x402Payment.findMany({ where: { AND: [inScope(scope), q.where] }, orderBy: q.orderBy, take: q.take }),
    end,
  );
}

/** How many settlements settle handled for the scope (GraphQL's `totalCount`). */
export function countX402Payments(prisma: Prisma, scope: Scope): Promise<number> {
  return prisma.x402Payment.count({ where: inScope(scope) });
}
