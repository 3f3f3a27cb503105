// The pub/sub's guarantees without a network: registration before the first read, bounded queues
// for slow readers, abort, resync; the charge codec's round trip; and a live charge stream's rules.
import { pino } from "pino";
import { describe, expect, it } from "vitest";
import type { Charge } from "../../src/domain/charges/read.js";
import { Prisma } from "../../src/generated/prisma/client.js";
import { chargeChannel, decodeCharge, encodeCharge, LiveCharges } from "../../src/realtime/charges.js";
import { channel, OVERFLOW, PubSub, RESYNC } from "../../src/realtime/pubsub.js";

const ch = channel<{ n: number }>("test:numbers");

describe("PubSub (in-process)", () => {
  it("delivers what is published after subscribe returns, before the first read, in order", async () => {
    const pubsub = PubSub.inProcess();
    const sub = pubsub.subscribe(ch);
    pubsub.publish(ch, { n: 1 });
    pubsub.publish(ch, { n: 2 });
    pubsub.publish(channel<{ n: number }>("test:other"), { n: 99 });
    expect((await sub.next()).value).toEqual({ n: 1 });
    expect((await sub.next()).value).toEqual({ n: 2 });
    await sub.return();
    expect(pubsub.subscriptions).toBe(0);
  });

  it("cuts off a reader that falls more than maxQueued behind: OVERFLOW once, then done, and nothing held", async () => {
    const pubsub = PubSub.inProcess();
    const slow = pubsub.subscribe(ch, { maxQueued: 5 });
    const fast = pubsub.subscribe(ch, { maxQueued: 5 });
    const got: unknown[] = [];
    const reading = (async () => {
      for await (const m of fast) got.push(m);
    })();
    for (let n = 0; n < 1000; n++) {
      pubsub.publish(ch, { n });
      await Promise.resolve();
    }
    expect(await slow.next()).toEqual({ value: OVERFLOW, done: false });
    expect(await slow.next()).toEqual({ value: undefined, done: true });
    expect(pubsub.subscriptions).toBe(1);
    await fast.return();
    await reading;
    expect(got.length).toBe(1000);
  });

  it("ends on abort, and tells every open subscription to resync (once, however often asked)", async () => {
    const pubsub = PubSub.inProcess();
    const controller = new AbortController();
    const sub = pubsub.subscribe(ch, { signal: controller.signal });
    const other = pubsub.subscribe(ch);
    pubsub.resyncAll();
    pubsub.resyncAll();
    pubsub.publish(ch, { n: 1 });
    expect((await sub.next()).value).toBe(RESYNC);
    controller.abort();
    expect((await sub.next()).done).toBe(true);
    expect((await other.next()).value).toBe(RESYNC);
    expect((await other.next()).value).toEqual({ n: 1 });
    await pubsub.close();
    expect((await other.next()).done).toBe(true);
    expect(pubsub.subscriptions).toBe(0);
  });
});

/** A charge with every field set (and every kind of value). */
const SAMPLE: Charge = {
  id: "chrg_1",
  merchantId: "mer_1",
  livemode: true,
  kind: "charge",
  customerId: "cus_1",
  orderId: "o-1",
  amount: 25_000_000n,
  amountReceived: new Prisma.Decimal((2n ** 128n + 1n).toString()),
  feeAmount: new Prisma.Decimal("250000"),
  netAmount: new Prisma.Decimal("24750001"),
  currency: "USDC",
  status: "COMPLETED",
  feeBps: 100,
  underpaymentToleranceBps: 0,
  settlementWallet: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8",
  contractVersion: 2,
  depositAddress: "0x5FbDB2315678afecb367f032d93F642f64180aa3",
  chainId: 8453,
  confirmations: 3,
  cloneAddress: "0x0000000000000000000000000000000000000001",
  flushTxHash: "0xabc",
  description: "d",
  metadata: { a: 1, b: "x", c: true },
  successUrl: "https://shop/ok",
  cancelUrl: null,
  expiresAt: new Date("2026-01-01T00:00:00.001Z"),
  createdAt: new Date("2026-01-01T00:00:00.002Z"),
  updatedAt: new Date("2026-01-01T00:00:00.003Z"),
  completedAt: new Date("2026-01-01T00:00:00.004Z"),
  deployedAt: null,
  settledAmount: new Prisma.Decimal((2n ** 200n).toString()),
  amountRefunded: new Prisma.Decimal(0),
  settlements: [{ txHash: "0xabc", chainId: 31337, blockNumber: 9, netAmount: "24750001", feeAmount: "250000", confirmedAt: "2026-01-01T00:00:00.004Z" }],
  payoutBlockedReason: "wallet_blacklisted",
  payoutBlockedAt: new Date("2026-01-01T00:00:00.006Z"),
  expiryExtendedMinutes: 15,
  reviewReason: "a difference",
  reviewAt: new Date("2026-01-01T00:00:00.007Z"),
  reviewedReason: null,
  strayAssets: [{ chainId: 31337, token: "native", amount: "5" }],
  invoiceId: null,
  paymentLinkId: null,
  customerEmail: null,
  linkSessionHash: null,
};

describe("charge codec", () => {
  it("round-trips every field of a charge, bigints and dates included", () => {
    const charge = SAMPLE;
    const wire = JSON.parse(JSON.stringify(encodeCharge(charge)));
    expect(wire.amountReceived).toBe((2n ** 128n + 1n).toString());
    const decoded = decodeCharge(wire);
    expect(decoded).toStrictEqual(charge);
    expect(decoded.settledAmount.toFixed()).toBe((2n ** 200n).toString());
  });
});

describe("a live charge stream", () => {
  const scope = { merchantId: SAMPLE.merchantId, livemode: SAMPLE.livemode };
  const at = (ms: number) => new Date(SAMPLE.updatedAt.getTime() + ms);
  const message = (c: Charge) => ({ chargeId: c.id, merchantId: c.merchantId, livemode: c.livemode, charge: encodeCharge(c) });
  const take = async (stream: AsyncIterator<unknown>) => {
    const r = await stream.next();
    return r.done ? "done" : r.value === OVERFLOW ? "overflow" : (r.value as Charge).status;
  };

  it("sends the loaded state, then each newer one once; an older one makes it reload; another merchant's is ignored", async () => {
    const pubsub = PubSub.inProcess();
    const live = new LiveCharges(pubsub, pino({ level: "silent" }), 10);
    let stored: Charge = SAMPLE;
    let loads = 0;
    const load = async () => (loads++, stored);
    const stream = (await live.chargeUpdates(scope, SAMPLE.id, load))[Symbol.asyncIterator]();
    expect(await take(stream)).toBe("COMPLETED");

    const received = { ...SAMPLE, status: "RECEIVED" as const, updatedAt: at(10) };
    const ch = chargeChannel(SAMPLE.id);
    pubsub.publish(ch, message(received));
    pubsub.publish(ch, message(received)); // the same state again: not sent twice
    pubsub.publish(ch, { ...message({ ...SAMPLE, status: "EXPIRED" }), merchantId: "mer_other" });
    // Older than what was sent: the database has the last word.
    stored = { ...SAMPLE, status: "CANCELLED", updatedAt: at(20) };
    pubsub.publish(ch, message({ ...SAMPLE, status: "PENDING", updatedAt: at(5) }));
    expect(await take(stream)).toBe("RECEIVED");
    expect(await take(stream)).toBe("CANCELLED");
    expect(loads).toBe(2);

    await stream.return!();
    expect(pubsub.subscriptions).toBe(0);
    expect(await take(stream)).toBe("done");
  });

  it("a reader that falls behind gets OVERFLOW, then the end; one returned before reading holds nothing", async () => {
    const pubsub = PubSub.inProcess();
    const live = new LiveCharges(pubsub, pino({ level: "silent" }), 3);
    const stream = (await live.chargeUpdates(scope, SAMPLE.id, async () => SAMPLE))[Symbol.asyncIterator]();
    for (let i = 1; i <= 5; i++) pubsub.publish(chargeChannel(SAMPLE.id), message({ ...SAMPLE, updatedAt: at(i) }));
    expect(await take(stream)).toBe("COMPLETED");
    expect(await take(stream)).toBe("overflow");
    expect(await take(stream)).toBe("done");
    expect(pubsub.subscriptions).toBe(0);

    const unread = await live.chargeUpdates(scope, SAMPLE.id, async () => SAMPLE);
    expect(pubsub.subscriptions).toBe(1);
    await unread[Symbol.asyncIterator]().return!();
    expect(pubsub.subscriptions).toBe(0);
  });
});
