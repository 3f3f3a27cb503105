// Live announcements of committed charge changes. The domain only speaks to this interface; the
// realtime module (src/realtime) implements it over Redis or in-process pub/sub.
//
// Invariant: a domain function announces a change only after the transaction that made it has
// committed, so no subscriber ever sees a change that was rolled back.
import type { Charge } from "./charges/read.js";

/** Identifies a charge and whose it is, for announcements that carry no snapshot. */
export interface ChargeRef {
  id: string;
  merchantId: string;
  livemode: boolean;
}

/** Where committed charge changes are announced. Never throws; announcing is best effort. */
export interface ChargeFeed {
  /** Charges whose stored state changed (their events are announced on their own: domain/events.ts announceCommittedEvents). */
  changed(charges: readonly Charge[]): void;
  /** Charges whose payments moved on chain without changing the charge (seen, one more confirmation, rolled back). */
  progressed(charges: readonly ChargeRef[]): void;
}
