import type { Role } from "./permissions.js";

/** Whose records a caller may touch: one merchant in one mode. Every query is filtered by both. */
export interface Scope {
  merchantId: string;
  livemode: boolean;
}

/** The caller behind an API key or a dashboard session. */
export interface Principal extends Scope {
  /** The API key (key_…) or session (ses_…): budgets and live connections count per credential. */
  credentialId: string;
  /** Set for a dashboard session: its user, who may also change the merchant's settings. */
  userId?: string;
  /** Set for a dashboard session: what its user may do (domain/permissions.ts). */
  role?: Role;
}

/** "live" or "test", as shown in key prefixes and messages. */
export function modeName(livemode: boolean): "live" | "test" {
  return livemode ? "live" : "test";
}

/** The where-clause fields that confine a query to `scope` (and nothing else a caller object carries). */
export function inScope(scope: Scope): Scope {
  return { merchantId: scope.merchantId, livemode: scope.livemode };
}
