// The event log: one row per change a merchant can be told about, written in the same transaction
// as the change so an event exists exactly when its change committed. (Delivery comes later.)
import { Prisma as P } from "../generated/prisma/client.js";
import { newId } from "./ids.js";
import { inScope, type Scope } from "./scope.js";

/** Every event type API.md names. */
export type EventType =
  | "charge.pending"
  | "charge.chain_selected"
  | "charge.partial"
  | "charge.received"
  | "charge.completed"
  | "charge.underpaid"
  | "charge.expired"
  | "charge.cancelled"
  | "charge.late_payment"
  | "customer.created"
  | "customer.updated"
  | "customer.deleted";

/** An event to record: whose, what kind, and the object as it is after the change. */
export interface NewEvent {
  scope: Scope;
  type: EventType;
  data: object;
}

/** Appends an event carrying `data` (the object as it is after the change) inside transaction `tx`. */
export async function recordEvent(tx: P.TransactionClient, scope: Scope, type: EventType, data: object): Promise<void> {
  await recordEvents(tx, [{ scope, type, data }]);
}

/** Appends several events in one statement inside transaction `tx`. */
export async function recordEvents(tx: P.TransactionClient, events: NewEvent[]): Promise<void> {
  if (events.length === 0) return;
  await tx.event.createMany({
    data: events.map((e) => ({ id: newId("evt"), ...inScope(e.scope), type: e.type, data: e.data as P.InputJsonObject })),
  });
}
