// The webhook doorbell between processes. A dispatcher claims what its own process queues at once
// (domain/events.ts onQueuedDeliveries); what an API process queues, a worker's dispatcher would
// otherwise find only at its next poll. With Redis, every process whose commit queued webhook
// deliveries rings this channel, and every dispatcher claims when it hears it.
//
// Invariants:
// - A ring carries nothing and promises nothing: the outbox is the truth, a lost ring (Redis away)
//   only means the poll finds the deliveries; a RESYNC after an outage rings too.
// - A ring names its ringer: a process's own dispatcher was rung in-process already and skips it.
// - A process rings at most once per RING_EVERY_MS, however many commits queued deliveries: a busy API
//   costs Redis and each dispatcher a bounded number of rings (and claims) a second.
import { randomUUID } from "node:crypto";
import type { Prisma } from "../db/client.js";
import { onQueuedDeliveries } from "../domain/events.js";
import { channel, type PubSub } from "./pubsub.js";

/** Carries the ringer's id. */
const WEBHOOKS_DUE = channel<string>("stablegate:webhooks:due");
/** The most a ring waits for more commits to ring for. */
const RING_EVERY_MS = 5;
/** Rings are consumed as they come; a dispatcher this far behind has missed nothing its poll will not find. */
const MAX_QUEUED_RINGS = 1_000;

/**
 * Rings every other process's dispatchers after `prisma` commits webhook deliveries. Returns the
 * ringer's id (for onWebhooksDue in the same process) and the function that stops it.
 */
export function ringWebhooksOnCommit(prisma: Prisma, pubsub: PubSub): { ringer: string; stop: () => void } {
  const ringer = randomUUID();
  let pending = false;
  const stop = onQueuedDeliveries(prisma, () => {
    if (pending) return;
    pending = true;
    setTimeout(() => {
      pending = false;
      pubsub.publish(WEBHOOKS_DUE, ringer);
    }, RING_EVERY_MS).unref();
  });
  return { ringer, stop };
}

/**
 * Calls `ring` whenever a process other than `self` (a ringer id) rang, and after a Redis outage;
 * returns the function that stops listening.
 */
export function onWebhooksDue(pubsub: PubSub, ring: () => void, self?: string): () => void {
  const rings = pubsub.subscribe(WEBHOOKS_DUE, { maxQueued: MAX_QUEUED_RINGS });
  void (async () => {
    // OVERFLOW ends the subscription: the poll still finds everything, so it is not renewed.
    for await (const from of rings) if (from !== self) ring();
  })();
  return () => void rings.return();
}
