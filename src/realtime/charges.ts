// Live charge updates: the domain's ChargeFeed and EventFeed over the pub/sub (every committed
// event goes to its merchant and mode's channel, whatever its type), and the streams the GraphQL
// subscriptions serve. A message carries the whole committed charge, so fanning it out to any
// number of subscribers costs no database read; the hosted page's view (paymentSessionUpdated)
// needs the payments too and is read again once per message and process, however many follow it.
//
// Invariants:
// - A stream starts with the current state, read after its subscription is registered: no change
//   committed after the read is missed.
// - A stream never goes back in time: a snapshot older than the last one sent (two processes
//   publishing one charge's changes out of order) makes it reload from the database instead; a
//   state identical to the last one sent is not sent again.
// - Every message is checked against the subscriber's merchant and mode, not only its channel.
// - A charge has at most `subscribersPerCharge` hosted-page subscribers per process (they need no key).
import { hash } from "node:crypto";
import type { Logger } from "pino";
import { AMOUNT_FIELDS, type Charge, chargeFromRow } from "../domain/charges/read.js";
import { toUnits } from "../domain/money.js";
import type { PublicCharge } from "../domain/payment-session.js";
import type { EventFeed, RecordedEvent } from "../domain/events.js";
import type { ChargeFeed, ChargeRef } from "../domain/live.js";
import { AppError } from "../domain/errors.js";
import { modeName, type Scope } from "../domain/scope.js";
import { type Channel, channel, OVERFLOW, type PubSub, RESYNC, type Subscription } from "./pubsub.js";

/** A charge as it travels: bigints as decimal strings, dates as ISO strings. */
type WireCharge = Record<string, unknown>;

/** One committed change to a charge, or (charge null) progress of its payments on chain. */
export interface ChargeMessage {
  chargeId: string;
  merchantId: string;
  livemode: boolean;
  charge: WireCharge | null;
}

/** What a stream yields: the next state, or OVERFLOW just before it ends because its reader fell behind. */
export type Live<T> = T | typeof OVERFLOW;

/** How far before the latest event sent a backfill after an outage starts reading. */
const BACKFILL_MARGIN_MS = 10_000;
/** Ids of events sent, remembered to skip them in a backfill. */
const SENT_IDS_KEPT = 10_000;

const DATE_FIELDS = ["expiresAt", "createdAt", "updatedAt", "completedAt", "deployedAt", "payoutBlockedAt", "reviewAt"] as const;

/** The channel of one charge's changes. */
export function chargeChannel(chargeId: string): Channel<ChargeMessage> {
  return channel(`stablegate:charge:${chargeId}`);
}

/** The channel of a merchant's events (of every type) in one mode. */
export function eventsChannel(scope: Scope): Channel<RecordedEvent> {
  return channel(`stablegate:events:${scope.merchantId}:${modeName(scope.livemode)}`);
}

/** Encodes a charge row for a message (amounts as exact decimal strings of base units). */
export function encodeCharge(c: Charge): WireCharge {
  const wire: WireCharge = { ...c };
  for (const f of AMOUNT_FIELDS) wire[f] = c[f] === null ? null : toUnits(c[f]).toString();
  for (const f of DATE_FIELDS) wire[f] = c[f] === null ? null : c[f].toISOString();
  return wire;
}

/** Decodes a charge row from a message. */
export function decodeCharge(wire: WireCharge): Charge {
  const c: Record<string, unknown> = { ...chargeFromRow(wire) };
  for (const f of DATE_FIELDS) c[f] = wire[f] === null ? null : new Date(wire[f] as string);
  return c as unknown as Charge;
}

/** Announces committed changes and events, and serves the streams that follow them. */
export class LiveCharges implements ChargeFeed, EventFeed {
  /** Hosted-page subscribers per charge in this process. */
  private readonly sessionSubscribers = new Map<string, number>();
  /** The reload each message caused, shared by every subscriber it reached (one object per message and process). */
  private readonly sessionReloads = new WeakMap<object, Promise<PublicCharge>>();

  constructor(
    private readonly pubsub: PubSub,
    private readonly logger: Logger,
    private readonly maxQueued: number,
    private readonly subscribersPerCharge = Number.POSITIVE_INFINITY,
  ) {}

  changed(charges: readonly Charge[]): void {
    this.guard(() => {
      for (const c of charges)
        this.pubsub.publish(chargeChannel(c.id), { chargeId: c.id, merchantId: c.merchantId, livemode: c.livemode, charge: encodeCharge(c) });
    });
  }

  recorded(events: readonly RecordedEvent[]): void {
    this.guard(() => {
      for (const e of events) this.pubsub.publish(eventsChannel({ merchantId: e.merchantId, livemode: e.livemode }), e);
    });
  }

  progressed(charges: readonly ChargeRef[]): void {
    this.guard(() => {
      for (const c of charges) this.pubsub.publish(chargeChannel(c.id), { chargeId: c.id, merchantId: c.merchantId, livemode: c.livemode, charge: null });
    });
  }

  /**
   * A charge of `scope` as it changes: `load()` (which reads it, scoped, or throws 404) first, then
   * every committed change. Rejects with `load`'s error, holding nothing.
   */
  async chargeUpdates(scope: Scope, chargeId: string, load: () => Promise<Charge>, signal?: AbortSignal): Promise<AsyncIterable<Live<Charge>>> {
    const source = this.pubsub.subscribe(chargeChannel(chargeId), { maxQueued: this.maxQueued, signal });
    const first = await loadOrClose(source, load);
    // All a stream keeps of the states it derived: the time of the latest.
    let latest = first.updatedAt;
    return new Follow(source, first, async (delivery) => {
      let next: Charge;
      if (delivery === RESYNC) next = await load();
      else {
        if (delivery.charge === null || !inScope(delivery, scope)) return null;
        next = decodeCharge(delivery.charge);
        // Older than what was sent: messages crossed (or clocks differ). The database has the last word.
        if (next.updatedAt < latest) next = await load();
      }
      latest = next.updatedAt;
      return next;
    });
  }

  /**
   * The hosted page's view of a charge as it and its payments change (confirmations included):
   * `load()` first, then again after every message, sent when it differs.
   */
  async sessionUpdates(chargeId: string, load: () => Promise<PublicCharge>, signal?: AbortSignal): Promise<AsyncIterable<Live<PublicCharge>>> {
    this.refuseWhenFull(chargeId);
    this.sessionSubscribers.set(chargeId, (this.sessionSubscribers.get(chargeId) ?? 0) + 1);
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      const left = (this.sessionSubscribers.get(chargeId) ?? 1) - 1;
      if (left > 0) this.sessionSubscribers.set(chargeId, left);
      else this.sessionSubscribers.delete(chargeId);
    };
    const source = this.pubsub.subscribe(chargeChannel(chargeId), { maxQueued: this.maxQueued, signal, onClose: release });
    const first = await loadOrClose(source, load);
    return new Follow(source, first, (delivery) => {
      if (delivery === RESYNC) return load();
      let reload = this.sessionReloads.get(delivery);
      if (!reload) this.sessionReloads.set(delivery, (reload = load()));
      return reload;
    });
  }

  /** 429 `rate_limited` when `chargeId` already has `subscribersPerCharge` hosted-page subscribers in this process. */
  refuseWhenFull(chargeId: string): void {
    if ((this.sessionSubscribers.get(chargeId) ?? 0) >= this.subscribersPerCharge) {
      throw new AppError("rate_limited", `This charge already has ${this.subscribersPerCharge} live subscribers on this server; close one first.`);
    }
  }

  /**
   * The events of `scope` whose type is in `types` (every type when empty), as they are committed.
   * After a Redis outage, `since(after)` backfills what was missed from the event log.
   */
  events(scope: Scope, types: readonly string[], since: (after: Date) => Promise<RecordedEvent[]>, signal?: AbortSignal): AsyncIterable<Live<RecordedEvent>> {
    const source = this.pubsub.subscribe(eventsChannel(scope), { maxQueued: this.maxQueued, signal });
    const wanted = (e: RecordedEvent) => inScope(e, scope) && (types.length === 0 || types.includes(e.type));
    return closing(
      source,
      (async function* () {
        // Events are stamped just before their commit, so one may arrive stamped earlier than one
        // already sent: a backfill looks back a margin before the latest stamp (never before the
        // subscription began), and skips what was sent.
        const started = Date.now();
        let latest = new Date(started);
        const sent = new Set<string>();
        for await (const delivery of source) {
          if (delivery === OVERFLOW) return yield OVERFLOW;
          const batch = delivery === RESYNC ? await since(new Date(Math.max(started, latest.getTime() - BACKFILL_MARGIN_MS))) : [delivery];
          for (const e of batch) {
            if (!wanted(e) || sent.has(e.id)) continue;
            sent.add(e.id);
            if (sent.size > SENT_IDS_KEPT) sent.delete(sent.values().next().value!);
            const at = new Date(e.timestamp);
            if (at > latest) latest = at;
            yield e;
          }
        }
      })(),
    );
  }

  private guard(publish: () => void): void {
    try {
      publish();
    } catch (err) {
      // Announcing is best effort: the change has committed whatever happens here.
      this.logger.warn({ err }, "live update not published");
    }
  }
}

function inScope(item: { merchantId: string; livemode: boolean }, scope: Scope): boolean {
  return item.merchantId === scope.merchantId && item.livemode === scope.livemode;
}

async function loadOrClose<T, M>(source: Subscription<M>, load: () => Promise<T>): Promise<T> {
  try {
    await source.ready;
    return await load();
  } catch (e) {
    await source.return();
    throw e;
  }
}

/**
 * Yields `first`, then for each delivery the state `next` derives from it (null: nothing new),
 * skipping a state identical to the last one sent; ends `source` whenever it ends (also when
 * returned before its first `next()`). One object per stream, not a generator and its wrappers:
 * an idle subscription holds its source, its callback and a digest of the last state sent.
 */
class Follow<T, M> implements AsyncIterableIterator<Live<T>> {
  private first: T | undefined;
  private sent: string;

  constructor(
    private readonly source: Subscription<M>,
    first: T,
    private readonly derive: (delivery: M | typeof RESYNC) => Promise<T | null>,
  ) {
    this.first = first;
    this.sent = fingerprint(first);
  }

  async next(): Promise<IteratorResult<Live<T>>> {
    if (this.first !== undefined) {
      const value = this.first;
      this.first = undefined;
      return { value, done: false };
    }
    try {
      for (;;) {
        const delivery = await this.source.next();
        if (delivery.done) return delivery;
        if (delivery.value === OVERFLOW) {
          await this.source.return();
          return { value: OVERFLOW, done: false };
        }
        const state = await this.derive(delivery.value);
        if (state === null) continue;
        const digest = fingerprint(state);
        if (digest === this.sent) continue;
        this.sent = digest;
        return { value: state, done: false };
      }
    } catch (e) {
      await this.source.return();
      throw e;
    }
  }

  async return(): Promise<IteratorResult<Live<T>>> {
    this.first = undefined;
    await this.source.return();
    return { value: undefined, done: true };
  }

  [Symbol.asyncIterator](): this {
    return this;
  }
}

/**
 * `stream`, ending `source` whenever it ends: also when it is returned before its first `next()`,
 * which a generator's own `finally` would not see.
 */
function closing<T, M>(source: Subscription<M>, stream: AsyncGenerator<T>): AsyncIterableIterator<T> {
  return {
    async next() {
      try {
        return await stream.next();
      } catch (e) {
        await source.return();
        throw e;
      }
    },
    async return() {
      await source.return();
      return stream.return(undefined);
    },
    [Symbol.asyncIterator]() {
      return this;
    },
  };
}

/** A digest of `value`'s JSON: what a stream keeps of the last state it sent (44 bytes, not the whole JSON). */
function fingerprint(value: unknown): string {
  return hash(
    "sha256",
    JSON.stringify(value, (_key, v) => (typeof v === "bigint" ? v.toString() : v)),
    "base64",
  );
}
