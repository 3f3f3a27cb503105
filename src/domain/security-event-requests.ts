// The request contract of the security history: GraphQL's securityEvents arguments and the query of
// the dashboard's /dashboard/security-events.csv. The doors parse a request with these (parseInput)
// and hand the domain the typed result. The event types live here, as the filter names them;
// domain/security-events.ts hands them on.
import { z } from "zod";
import { pageParams } from "./paging.js";
import { instantParam } from "./validation.js";

/** What the history records. */
export const SECURITY_EVENT_TYPES = [
  "sign_in",
  "sign_in_failed",
  "sign_out",
  "session_expired",
  "password_changed",
  "password_reset",
  "api_key_created",
  "api_key_rolled",
  "api_key_revoked",
  "wallet_changed",
  "user_invited",
  "user_joined",
  "user_removed",
  "role_changed",
  "two_factor_enabled",
  "two_factor_disabled",
  "webhook_endpoint_changed",
] as const;

const filterFields = {
  type: z.enum(SECURITY_EVENT_TYPES, { error: `must be one of ${SECURITY_EVENT_TYPES.join(", ")}` }).optional(),
  userId: z.string().min(1).max(100).optional(),
  createdGte: instantParam().optional(),
  createdLt: instantParam().optional(),
};
/** The history's filters: one type, one user, a creation range (the CSV export's query, GraphQL's count). */
export const filterSchema = z.strictObject(filterFields, { error: "must be an object" });
/** A page of the history and its filters (GraphQL's connection). */
export const listSchema = z.strictObject({ ...pageParams, ...filterFields }, { error: "must be an object" });

/** A page of the history, parsed (listSchema). */
export type SecurityEventListQuery = z.output<typeof listSchema>;
/** The history's filters, parsed (filterSchema). */
export type SecurityEventFilters = z.output<typeof filterSchema>;
