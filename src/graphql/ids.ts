// Maps object ids to GraphQL type names by their prefix.
const PREFIXES: Record<string, string> = { cus: "Customer", chrg: "Charge", evt: "Event" };

/** The GraphQL type of an id such as `cus_…`, or "Unknown". */
export function typenameOfId(id: string): string {
  return PREFIXES[id.slice(0, id.indexOf("_"))] ?? "Unknown";
}
