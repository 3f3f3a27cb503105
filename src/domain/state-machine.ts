// The mechanism of a status table (charges: charges/lifecycle.ts, invoices: invoice-lifecycle.ts): each
// trigger names the statuses it may leave, the one it reaches and what else must hold. Pure: no I/O.
// Kept apart from the tables so every lifecycle reads the same way and refuses the same way.

/** One step: the statuses it may leave, the status it reaches, and what else must hold. */
export interface Rule<S extends string, F> {
  from: readonly S[];
  /** The status it reaches; null for a step that keeps the status (an edit, a payment, a delete). */
  to: S | null;
  /** Why the step may not happen to these facts, or null when it may. */
  guard?: (facts: F, now: Date) => string | null;
}

/** A lifecycle's table: one rule per trigger. */
export type Rules<T extends string, S extends string, F> = Record<T, Rule<S, F>>;

/** Why a step was refused: the status is not one it leaves, or its guard said no (and why). */
export type Refusal<S extends string> = { kind: "status"; status: S; allowed: readonly S[] } | { kind: "guard"; status: S; reason: string };

/** The outcome of a step: the status to write, or the refusal. */
export type Step<S extends string> = { ok: true; to: S } | { ok: false; refusal: Refusal<S> };

/** The status `trigger` moves `facts` to under `rules`, or why it may not; the status is checked before the guard. */
export function step<T extends string, S extends string, F extends { status: S }>(rules: Rules<T, S, F>, trigger: T, facts: F, now: Date): Step<S> {
  const rule = rules[trigger];
  if (!rule.from.includes(facts.status)) return { ok: false, refusal: { kind: "status", status: facts.status, allowed: rule.from } };
  const reason = rule.guard?.(facts, now) ?? null;
  if (reason !== null) return { ok: false, refusal: { kind: "guard", status: facts.status, reason } };
  return { ok: true, to: rule.to ?? facts.status };
}
