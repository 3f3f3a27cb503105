// The webhook doorbell between processes. A dispatcher claims what its own process queues at once
// (domain/events.ts onQueuedDeliveries); what an API process queues, a worker's dispatcher would
// otherwise find only at its next poll. With Redis, every process whose commit queued webhook
// deliveries rings this channel, and every dispatcher claims when it hears it.
//
// Invariants:
// - A ring carries nothing and promises nothing: the outbox is the truth, a lost ring (Redis away)
//   only means the poll finds the deliveries; a RESYNC after an outage rings too.
// - A process rings at most once per RING_EVERY_MS, however many commits queued deliveries: a busy API
//   costs Redis and each dispatcher a bounded number of rings (and claims) a second.
import type { Prisma } from "../db/client.js";
import { onQueuedDeliveries } from "../domain/events.js";
import { channel, type PubSub } from "./pubsub.js";

const WEBHOOKS_DUE = channel<0>("stablegate:webhooks:due");
/** The most a ring waits for more commits to ring for. */
const RING_EVERY_MS = 5;
/** Rings are consumed as they come; a dispatcher this far behind has missed nothing its poll will not find. */
const MAX_QUEUED_RINGS = 1_000;

/** Rings every process's dispatchers after this process commits webhook deliveries; returns the function that stops it. */
export function ringWebhooksOnCommit(prisma: Prisma, pubsub: PubSub): () => void {
  let pending = false;
  return onQueuedDeliveries(prisma, () => {
    if (pending) return;
    pending = true;
    setTimeout(() => {
      pending = false;
      pubsub.publish(WEBHOOKS_DUE, 0);
    }, RING_EVERY_MS).unref();
  });
}

/** Calls `ring` whenever a process rang (and after a Redis outage); returns the function that stops listening. */
export function onWebhooksDue(pubsub: PubSub, ring: () => void): () => void {
  const rings = pubsub.subscribe(WEBHOOKS_DUE, { maxQueued: MAX_QUEUED_RINGS });
  void (async () => {
    // OVERFLOW ends the subscription: the poll still finds everything, so it is not renewed.
    for await (const _ of rings) ring();
  })();
  return () => void rings.return();
}
