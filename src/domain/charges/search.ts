// Charge search (GraphQL's and REST's `search`, the dashboard's search box): one text, read as every
// thing it could name at once. Prefixes of a charge id, an order id, a clone address, a transaction
// hash (of a payment, a payout, a fee or a refund) or a customer's email; a hash as the dashboard
// shortens it ("0x1234abcd…89abcdef": its start and end); an exact amount ("12.50").
//
// `searchTerms` reads the text once; the lists find the matches in SQL (`searchCondition`): one lookup
// per reading through an index of its own (migration 20261204030000: `text_pattern_ops`, so LIKE
// 'prefix%' uses it whatever the database's collation; hex through lower()), so the cost follows the
// matches, never the merchant's charge count. The CSV export, which reads its whole range anyway,
// takes the same readings as a Prisma filter (`searchFilter`).
import { Prisma as P } from "../../generated/prisma/client.js";
import { parseAmount } from "../money.js";
import type { Scope } from "../scope.js";

/** What a search text can name. */
export interface SearchTerms {
  /** The start of a charge id or an order id: the text as given. */
  text: string;
  /** The start of a customer's email: the text in lower case. */
  email: string;
  /** A hex start and, for a shortened hash, its end ("" when whole): clone addresses and transaction hashes, in lower case. */
  hex: { start: string; end: string } | null;
  /** Exactly this amount, in base units. */
  amount: bigint | null;
}

// The shortest hex start worth a lookup: "0x" and a few digits would match nearly everything.
const HEX = /^0x[0-9a-f]{4,64}$/;
// How the dashboard shortens a hash or an address (ui.tsx Explorer): its start, an ellipsis, its end.
const SHORTENED = /^(0x[0-9a-f]{4,64})(?:…|\.{3})([0-9a-f]{4,64})$/;
const AMOUNT = /^(\d{1,15}(?:\.\d{1,6})?)(?:\s*usdc)?$/;

/** Reads a (trimmed, non-empty) search text as every thing it could name. */
export function searchTerms(text: string): SearchTerms {
  const lower = text.toLowerCase();
  const shortened = SHORTENED.exec(lower);
  const amount = AMOUNT.exec(lower)?.[1];
  return {
    text,
    email: lower,
    hex: shortened ? { start: shortened[1]!, end: shortened[2]! } : HEX.test(lower) ? { start: lower, end: "" } : null,
    amount: amount === undefined ? null : parseAmount(amount),
  };
}

/** `text` taken literally by LIKE: its wildcards and the escape character escaped. */
function literal(text: string): string {
  return text.replace(/[\\%_]/g, "\\$&");
}

/** LIKE's pattern for values starting with `text`. */
function startsWith(text: string): string {
  return `${literal(text)}%`;
}

/** LIKE's pattern for values ending with `text`. */
function endsWith(text: string): string {
  return `%${literal(text)}`;
}

/** A condition on `charges` (the list's table, unaliased): the charge is one of `scope` the search finds. */
export function searchCondition(scope: Scope, text: string): P.Sql {
  const t = searchTerms(text);
  const { merchantId, livemode } = scope;
  const mine = P.sql`merchant_id = ${merchantId} AND livemode = ${livemode}`;
  const lookups = [
    P.sql`SELECT id FROM charges WHERE id LIKE ${startsWith(t.text)} AND ${mine}`,
    P.sql`SELECT id FROM charges WHERE ${mine} AND order_id LIKE ${startsWith(t.text)}`,
    P.sql`SELECT c.id FROM customers u JOIN charges c ON c.customer_id = u.id
          WHERE u.merchant_id = ${merchantId} AND u.livemode = ${livemode} AND u.email_lower LIKE ${startsWith(t.email)}`,
  ];
  if (t.hex) {
    // The start through the index, the end (of a shortened hash) on the few rows it finds.
    const [start, end] = [startsWith(t.hex.start), endsWith(t.hex.end)];
    lookups.push(
      // IS NOT NULL: the partial indexes' predicate, said so the planner need not prove it.
      P.sql`SELECT id FROM charges WHERE clone_address IS NOT NULL AND lower(clone_address) LIKE ${start} AND lower(clone_address) LIKE ${end} AND ${mine}`,
      P.sql`SELECT id FROM charges WHERE flush_tx_hash IS NOT NULL AND lower(flush_tx_hash) LIKE ${start} AND lower(flush_tx_hash) LIKE ${end} AND ${mine}`,
      // Any merchant's transfers: the list's own condition keeps the charges of `scope`.
      P.sql`SELECT charge_id FROM chain_transfers WHERE lower(tx_hash) LIKE ${start} AND lower(tx_hash) LIKE ${end}`,
    );
  }
  if (t.amount !== null) lookups.push(P.sql`SELECT id FROM charges WHERE ${mine} AND amount = ${t.amount}`);
  return P.sql`charges.id IN (${P.join(lookups, " UNION ALL ")})`;
}

/**
 * The same search as a Prisma filter on charges (for readers that scan a range anyway: the CSV export).
 * Prisma writes startsWith and endsWith as LIKE without escaping the text: it is escaped here.
 */
export function searchFilter(text: string): P.ChargeWhereInput {
  const t = searchTerms(text);
  const or: P.ChargeWhereInput[] = [
    { id: { startsWith: literal(t.text) } },
    { orderId: { startsWith: literal(t.text) } },
    { customer: { emailLower: { startsWith: literal(t.email) } } },
  ];
  if (t.hex) {
    const hex = { startsWith: t.hex.start, endsWith: t.hex.end, mode: "insensitive" } as const;
    or.push({ cloneAddress: hex }, { flushTxHash: hex }, { transfers: { some: { txHash: hex } } });
  }
  if (t.amount !== null) or.push({ amount: t.amount });
  return { OR: or };
}
