import { pino } from "pino";
import { afterAll, describe, expect, it } from "vitest";
import {
  acceptedAmount,
  type ChargeFacts,
  type ChargeStatus,
  type ChargeTrigger,
  cancelStatus,
  nextStatus,
  partialExtensionMinutes,
} from "../../src/domain/charges/lifecycle.js";
import { type Charge, getCharge, getChargeByOrderId } from "../../src/domain/charges/read.js";
import { createCharge } from "../../src/domain/charges/create.js";
import { createSchema } from "../../src/domain/charges/requests.js";
import { ChargeTermsCache } from "../../src/domain/charges/terms.js";
import { predictCloneV2 } from "../../src/chain/clones.js";
import { parseInput } from "../../src/domain/validation.js";
import { createCustomer, getCustomer } from "../../src/domain/customers.js";
import { createMerchant } from "../../src/domain/merchants.js";
import { startExpirySweep } from "../../src/jobs/expiry.js";
import { freshDatabase, WALLET } from "../helpers/harness.js";
import { until } from "../helpers/wait.js";

const fresh = await freshDatabase();
afterAll(() => fresh.drop());
const { prisma } = fresh.db;
const settings = { amount: { min: 10_000n, max: 1_000_000_000_000n }, paymentBaseUrl: "http://pay.test" };
const { merchant } = await createMerchant(prisma, { name: "Shop", testWallet: WALLET }, { feeBps: 100 });
const scope = { merchantId: merchant.id, livemode: false };

describe("state machine", () => {
  const now = new Date("2026-11-22T12:00:00Z");
  const charge = (over: Partial<ChargeFacts> = {}): ChargeFacts => ({
    status: "PENDING",
    amount: 25_000_000n,
    underpaymentToleranceBps: 0,
    amountReceived: null,
    settledAmount: 0n,
    expiresAt: new Date("2026-11-22T12:30:00Z"),
    ...over,
  });

  it("allows exactly the documented steps", () => {
    const allowed: [ChargeTrigger, ChargeStatus, ChargeStatus][] = [];
    const all: ChargeStatus[] = ["PENDING", "RECEIVED", "COMPLETED", "EXPIRED", "CANCELLED"];
    for (const trigger of ["cancel", "expire", "receive", "complete", "reopen"] as const) {
      for (const status of all) {
        // The friendliest facts for each trigger: due, fully paid (and paid out) for receive and complete; nothing left for reopen.
        const paid = trigger === "receive" || trigger === "complete";
        const facts = charge({
          status,
          expiresAt: new Date(now.getTime() - 1),
          amountReceived: paid ? 25_000_000n : null,
          settledAmount: paid ? 25_000_000n : 0n,
        });
        try {
          allowed.push([trigger, status, nextStatus(facts, trigger, now)]);
        } catch {}
      }
    }
    expect(allowed).toEqual([
      ["cancel", "PENDING", "CANCELLED"],
      ["expire", "PENDING", "EXPIRED"],
      ["receive", "PENDING", "RECEIVED"],
      ["complete", "RECEIVED", "COMPLETED"],
      ["reopen", "RECEIVED", "PENDING"],
    ]);
  });

  it("guards each step on the facts", () => {
    expect(() => nextStatus(charge(), "expire", now)).toThrow(/not reached its expiry/);
    expect(nextStatus(charge({ expiresAt: now }), "expire", now)).toBe("EXPIRED");
    expect(() => nextStatus(charge({ amountReceived: 24_999_999n }), "receive", now)).toThrow(/less than the amount/);
    expect(nextStatus(charge({ amountReceived: 30_000_000n }), "receive", now)).toBe("RECEIVED");
    // With a tolerance of 1% (0.25 of 25.00), 24.75 is paid and 24.749999 is not.
    expect(acceptedAmount(charge({ underpaymentToleranceBps: 100 }))).toBe(24_750_000n);
    expect(acceptedAmount({ amount: 10_001n, underpaymentToleranceBps: 1 })).toBe(10_000n);
    expect(nextStatus(charge({ underpaymentToleranceBps: 100, amountReceived: 24_750_000n }), "receive", now)).toBe("RECEIVED");
    expect(() => nextStatus(charge({ underpaymentToleranceBps: 100, amountReceived: 24_749_999n }), "receive", now)).toThrow(/less than the amount/);
    // Confirmed partial money does not stop a cancel: it is paid out to the merchant.
    expect(nextStatus(charge({ amountReceived: 1n }), "cancel", now)).toBe("CANCELLED");
    // Complete only once everything received has left the clone, whoever flushed it.
    const received = charge({ status: "RECEIVED", amountReceived: 30_000_000n });
    expect(() => nextStatus({ ...received, settledAmount: 25_000_000n }, "complete", now)).toThrow(/not all the money received has been paid out/);
    expect(nextStatus({ ...received, settledAmount: 30_000_000n }, "complete", now)).toBe("COMPLETED");
    // Reopen (a deep reorg took payments away) only when what is left no longer pays it and nothing was paid out.
    expect(nextStatus({ ...received, amountReceived: 0n }, "reopen", now)).toBe("PENDING");
    expect(nextStatus({ ...received, amountReceived: 24_999_999n }, "reopen", now)).toBe("PENDING");
    expect(() => nextStatus({ ...received, amountReceived: 25_000_000n }, "reopen", now)).toThrow(/still pays the amount/);
    expect(() => nextStatus({ ...received, amountReceived: 0n, settledAmount: 1n }, "reopen", now)).toThrow(/paid out of it/);
  });

  it("makes cancel idempotent, waits for a confirming payment, and maps refusals to 409 charge_not_cancellable", () => {
    expect(cancelStatus({ ...charge({ status: "CANCELLED" }), id: "chrg_x" }, false, now)).toBeNull();
    expect(cancelStatus({ ...charge(), id: "chrg_x" }, false, now)).toBe("CANCELLED");
    expect(cancelStatus({ ...charge({ amountReceived: 10_000_000n }), id: "chrg_x" }, false, now)).toBe("CANCELLED");
    expect(() => cancelStatus({ ...charge(), id: "chrg_x" }, true, now)).toThrow(expect.objectContaining({ code: "charge_payment_confirming" }));
    for (const status of ["EXPIRED", "RECEIVED", "COMPLETED"] as const) {
      expect(() => cancelStatus({ ...charge({ status }), id: "chrg_x" }, false, now)).toThrow(expect.objectContaining({ code: "charge_not_cancellable" }));
    }
  });

  it("extends expiry for a partial payment of at least 1% (and 0.01 USDC), never for dust, 60 minutes at most", () => {
    const c = { amount: 25_000_000n, expiryExtendedMinutes: 0 };
    expect(partialExtensionMinutes(c, [250_000n], 15)).toBe(15); // exactly 1%
    expect(partialExtensionMinutes(c, [249_999n], 15)).toBe(0); // dust
    expect(partialExtensionMinutes(c, [1n, 2n, 249_999n], 15)).toBe(0); // many crumbs are still dust
    expect(partialExtensionMinutes(c, [1n, 10_000_000n], 15)).toBe(15);
    // 1% of a 0.50 charge is 0.005: the 0.01 floor decides.
    expect(partialExtensionMinutes({ amount: 500_000n, expiryExtendedMinutes: 0 }, [5_000n], 15)).toBe(0);
    expect(partialExtensionMinutes({ amount: 500_000n, expiryExtendedMinutes: 0 }, [10_000n], 15)).toBe(15);
    // The cap: 60 minutes in all.
    expect(partialExtensionMinutes({ ...c, expiryExtendedMinutes: 45 }, [10_000_000n], 15)).toBe(15);
    expect(partialExtensionMinutes({ ...c, expiryExtendedMinutes: 50 }, [10_000_000n], 15)).toBe(10);
    expect(partialExtensionMinutes({ ...c, expiryExtendedMinutes: 60 }, [10_000_000n], 15)).toBe(0);
  });
});

describe("reads", () => {
  it("getCharge's SQL returns exactly what the Prisma model does, field for field", async () => {
    const created = await createCharge(
      prisma,
      scope,
      parseInput(createSchema, { orderId: "cols", amount: "12.5", metadata: { a: "b" }, description: "d", cancelUrl: "http://x.test/c" }),
      settings,
    );
    await prisma.charge.update({
      where: { id: created.id },
      data: {
        amountReceived: (2n ** 128n).toString(),
        feeAmount: "2",
        netAmount: "3",
        settlements: [{ txHash: "0xab", chainId: 31337, blockNumber: 7, netAmount: "3", feeAmount: "2", confirmedAt: new Date(0).toISOString() }],
        payoutBlockedReason: "token_paused",
        payoutBlockedAt: new Date(),
        chainId: 31337,
        cloneAddress: WALLET,
        flushTxHash: "0xab",
        completedAt: new Date(),
        deployedAt: new Date(),
      },
    });
    const viaModel = await prisma.charge.findUniqueOrThrow({ where: { id: created.id } });
    expect(await getCharge(prisma, scope, created.id)).toStrictEqual(viaModel);
    expect(await getChargeByOrderId(prisma, scope, "cols")).toStrictEqual(viaModel);
    // Through Prisma (a client the database module did not open): the same rows.
    const unregistered = { $queryRawUnsafe: prisma.$queryRawUnsafe.bind(prisma) } as unknown as typeof prisma;
    expect(await getCharge(unregistered, scope, created.id)).toStrictEqual(viaModel);
  });

  it("getCustomer's SQL returns exactly what the Prisma model does", async () => {
    const created = await createCustomer(prisma, scope, { email: "cols@example.com", name: "C", metadata: { a: "b" }, address: { country: "FR" } });
    expect(await getCustomer(prisma, scope, created.id)).toStrictEqual(await prisma.customer.findUniqueOrThrow({ where: { id: created.id } }));
  });
});

describe("creating with remembered terms", () => {
  const FACTORY = "0x5FbDB2315678afecb367f032d93F642f64180aa3";
  const OTHER_WALLET = "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC";

  /** `prisma` counting its reads of merchants: a remembered merchant is not read. */
  function counting() {
    const counts = { merchantReads: 0 };
    const client = new Proxy(prisma, {
      get(target, key) {
        if (key === "merchant") counts.merchantReads++;
        const value = Reflect.get(target, key, target) as unknown;
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
    return { client, counts };
  }

  it("reads a merchant once, and a wallet or fee changed elsewhere still applies to the very next charge", async () => {
    const { merchant: m } = await createMerchant(prisma, { name: "Terms", testWallet: WALLET }, { feeBps: 100 });
    const own = { merchantId: m.id, livemode: false };
    const remembering = { ...settings, factory: FACTORY, terms: new ChargeTermsCache() };
    const { client, counts } = counting();
    const create = (orderId: string) => createCharge(client, own, parseInput(createSchema, { orderId, amount: "5" }), remembering);

    const first = await create("t1");
    const second = await create("t2");
    expect(counts.merchantReads).toBe(1);
    expect([first.settlementWallet, second.settlementWallet, second.feeBps]).toEqual([WALLET, WALLET, 100]);

    // Another process changes the settings: this one still remembers the old ones.
    await prisma.merchant.update({ where: { id: m.id }, data: { testWallet: OTHER_WALLET, feeBps: 50, underpaymentToleranceBps: 25 } });
    const third = await create("t3");
    expect(third).toMatchObject({ settlementWallet: OTHER_WALLET, feeBps: 50, underpaymentToleranceBps: 25 });
    expect(third.depositAddress).toBe(predictCloneV2({ factory: FACTORY, chargeId: third.id, wallet: OTHER_WALLET, feeBps: 50 }));
    expect(await getCharge(prisma, own, third.id)).toStrictEqual(third);
    expect(counts.merchantReads).toBe(2);
    // The write its stale terms refused left nothing: one charge and one charge.pending event per order.
    expect(await prisma.charge.count({ where: { merchantId: m.id } })).toBe(3);
    const events = await prisma.event.findMany({ where: { merchantId: m.id, type: "charge.pending" } });
    expect(events.map((e) => (e.data as { id: string }).id).sort()).toEqual([first.id, second.id, third.id].sort());

    await create("t4");
    expect(counts.merchantReads).toBe(2);
    // Below the ORM on the client the database module opened: the same row as the model's.
    const direct = await createCharge(prisma, own, parseInput(createSchema, { orderId: "t5", amount: "5" }), remembering);
    expect(direct).toStrictEqual(await prisma.charge.findUniqueOrThrow({ where: { id: direct.id } }));
  });

  it("refuses another merchant's customer, and a wallet removed since, though the terms are remembered", async () => {
    const { merchant: m } = await createMerchant(prisma, { name: "Terms 2", testWallet: WALLET }, { feeBps: 100 });
    const own = { merchantId: m.id, livemode: false };
    const remembering = { ...settings, terms: new ChargeTermsCache() };
    const create = (body: Record<string, unknown>) => createCharge(prisma, own, parseInput(createSchema, { amount: "5", ...body }), remembering);
    await create({ orderId: "r1" });
    const foreign = await createCustomer(prisma, scope, { email: "foreign@example.com", name: "F", metadata: null, address: null });
    await expect(create({ orderId: "r2", customerId: foreign.id })).rejects.toMatchObject({ code: "resource_missing", param: "customerId" });
    const mine = await createCustomer(prisma, own, { email: "mine@example.com", name: "M", metadata: null, address: null });
    expect((await create({ orderId: "r3", customerId: mine.id })).customerId).toBe(mine.id);

    await prisma.merchant.update({ where: { id: m.id }, data: { testWallet: null } });
    await expect(create({ orderId: "r4" })).rejects.toMatchObject({ code: "settlement_wallet_missing" });
    expect(await prisma.charge.count({ where: { merchantId: m.id } })).toBe(2);
  });
});

describe("expiry sweep", () => {
  it("expires each due PENDING charge exactly once with two sweeps running at once, and nothing else", async () => {
    const t0 = Date.now();
    const make = (orderId: string, minutes: number) =>
      createCharge(prisma, scope, parseInput(createSchema, { orderId, amount: "1", expiresInMinutes: minutes }), settings, new Date(t0));
    const due = await Promise.all(Array.from({ length: 120 }, (_, i) => make(`due-${i}`, 5)));
    const later = await make("later", 60);
    const cancelled = await make("cancelled", 5);
    await prisma.charge.update({ where: { id: cancelled.id }, data: { status: "CANCELLED" } });

    // The clock moves 10 minutes ahead: the 5-minute charges are due, the 60-minute one is not.
    const now = () => new Date(t0 + 10 * 60_000);
    const clockReads = [0, 0];
    const seen: string[] = [];
    const onExpired = (charges: Charge[]) => seen.push(...charges.map((c) => c.id));
    const logger = pino({ level: "silent" });
    const sweeps = [0, 1].map((i) =>
      startExpirySweep(prisma, settings, logger, { intervalMs: 20, now: () => (clockReads[i]!++, now()), batchSize: 25, onExpired }),
    );
    await until("every due charge expired", () => seen.length >= due.length, 10_000);
    // Each sweep looks again (a pass reads the clock twice) before they stop: a charge expired twice would show.
    const after = [...clockReads];
    await until("each sweep's next pass", () => clockReads.every((n, i) => n >= after[i]! + 3), 10_000);
    await Promise.all(sweeps.map((s) => s.stop()));

    expect(seen.length).toBe(due.length);
    expect(new Set(seen)).toEqual(new Set(due.map((c) => c.id)));
    const statuses = await prisma.charge.groupBy({
      by: ["status"],
      where: { merchantId: merchant.id, orderId: { in: ["later", "cancelled", ...due.map((c) => c.orderId)] } },
      _count: true,
    });
    expect(Object.fromEntries(statuses.map((s) => [s.status, s._count]))).toEqual({ EXPIRED: 120, PENDING: 1, CANCELLED: 1 });
  });
});
