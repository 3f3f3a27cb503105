// Maps object ids to GraphQL node type names by their prefix: every type that implements Node has
// its prefix here (test/graphql/nodes.test.ts fetches one of each implementer through node/nodes).
import { type IdPrefix, looksLikeId } from "../domain/ids.js";

const NODE_TYPES: [IdPrefix, string][] = [
  ["cus", "Customer"],
  ["chrg", "Charge"],
  ["evt", "Event"],
  ["whep", "WebhookEndpoint"],
  ["ref", "Refund"],
  ["inv", "Invoice"],
  ["plink", "PaymentLink"],
  ["plan", "Plan"],
  ["sub", "CustomerSubscription"],
  ["eml", "Email"],
];

/** The GraphQL type of an id such as `cus_…`, or null when `id` lacks a node type's id shape (so garbage never reaches the database). */
export function typenameOfId(id: string): string | null {
  return NODE_TYPES.find(([prefix]) => looksLikeId(prefix, id))?.[1] ?? null;
}
