import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expireDueCharges } from "../../src/domain/charges/expire.js";
import { newId } from "../../src/domain/ids.js";
import { parseAmount } from "../../src/domain/money.js";
import { expectError, liveChains, recordPayment, SETTINGS, startApp, type TestApp, WALLET } from "../helpers/harness.js";

let app: TestApp;
beforeAll(async () => {
  app = await startApp({ PAYMENT_BASE_URL: "https://pay.example.com/c" }, { chains: liveChains() });
});
afterAll(() => app?.stop());

let seq = 0;
const order = () => `order-${++seq}`;
const create = (body: Record<string, unknown>, key?: string) => app.call("POST", "/v1/charges", { body: { orderId: order(), amount: "25", ...body }, key });
const chargeRows = () => app.db.prisma.charge.count();
const inAnHour = () => new Date(Date.now() + 3 * 60 * 60_000);

describe("create and retrieve", () => {
  it("creates a PENDING charge with every field of the spec and the OpenAPI Charge schema", async () => {
    const before = Date.now();
    const res = await create({
      orderId: "A-1",
      amount: "25",
      description: "Two mugs",
      metadata: { sku: "mug", qty: 2 },
      successUrl: "https://shop.example/ok",
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const id = res.body.id;
    expect(res.body).toEqual({
      id: expect.stringMatching(/^chrg_[0-9A-Za-z]{24}$/),
      object: "charge",
      livemode: false,
      orderId: "A-1",
      amount: "25.00",
      amountReceived: null,
      amountOverpaid: "0.00",
      amountRefunded: "0.00",
      feeAmount: null,
      netAmount: null,
      currency: "USDC",
      status: "PENDING",
      cloneAddress: null,
      chainId: null,
      paymentUrl: `https://pay.example.com/c/${id}`,
      explorerUrl: null,
      feeBps: 100,
      flushTxHash: null,
      expiresAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      createdAt: expect.stringMatching(/Z$/),
      completedAt: null,
      deployedAt: null,
      customerId: null,
      description: "Two mugs",
      metadata: { sku: "mug", qty: 2 },
      successUrl: "https://shop.example/ok",
      cancelUrl: null,
      settlements: [],
      payoutBlockedReason: null,
      needsReview: false,
      reviewReason: null,
      strayAssets: [],
      invoiceId: null,
      paymentLinkId: null,
      customerEmail: null,
    });
    const lifetime = Date.parse(res.body.expiresAt) - before;
    expect(lifetime).toBeGreaterThanOrEqual(30 * 60_000 - 1000);
    expect(lifetime).toBeLessThanOrEqual(30 * 60_000 + 5000);

    const got = await app.call("GET", `/v1/charges/${id}`);
    expect(got.status).toBe(200);
    expect(got.body).toEqual(res.body);
  });

  it("round-trips amounts exactly, with 2 to 6 decimals", async () => {
    const low = await startApp({ CHARGE_MIN_AMOUNT: "0.000001" });
    try {
      for (const [sent, shown] of [
        ["25", "25.00"],
        ["0.000001", "0.000001"],
        ["1.234567", "1.234567"],
        ["1000000", "1000000.00"],
        ["0.1", "0.10"],
        ["007.50", "7.50"],
      ]) {
        const res = await low.call("POST", "/v1/charges", { body: { orderId: `amt-${sent}`, amount: sent } });
        expect(res.status, JSON.stringify(res.body)).toBe(201);
        expect(res.body.amount).toBe(shown);
        expect((await low.call("GET", `/v1/charges/${res.body.id}`)).body.amount).toBe(shown);
      }
    } finally {
      await low.stop();
    }
  });

  it("snapshots the merchant's fee and wallet: later settings changes never redirect a charge", async () => {
    const res = await create({});
    await app.db.prisma.merchant.update({
      where: { id: app.merchant.merchant.id },
      data: { testWallet: "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC", feeBps: 250 },
    });
    try {
      const row = await app.db.prisma.charge.findUniqueOrThrow({ where: { id: res.body.id } });
      expect(row.settlementWallet).toBe(WALLET);
      expect((await app.call("GET", `/v1/charges/${res.body.id}`)).body.feeBps).toBe(100);
      expect((await create({})).body.feeBps).toBe(250);
    } finally {
      await app.db.prisma.merchant.update({ where: { id: app.merchant.merchant.id }, data: { testWallet: WALLET, feeBps: 100 } });
    }
  });

  it("links a customer of the same merchant and mode", async () => {
    const customer = (await app.call("POST", "/v1/customers", { body: { email: "link@example.com", name: "Link" } })).body;
    const res = await create({ customerId: customer.id });
    expect(res.status).toBe(201);
    expect(res.body.customerId).toBe(customer.id);
  });

  it("refuses every bad input with 400, the code and the param, and writes nothing", async () => {
    const other = await app.newMerchant();
    const foreign = (await app.call("POST", "/v1/customers", { body: { email: "x@example.com", name: "X" }, key: other.apiKeys.test.secret })).body;
    const liveCustomer = (await app.call("POST", "/v1/customers", { body: { email: "live@example.com", name: "L" }, key: app.liveKey })).body;
    const cases: [Record<string, unknown>, string, string][] = [
      [{ amount: "0" }, "parameter_invalid", "amount"],
      [{ amount: "-1" }, "parameter_invalid", "amount"],
      [{ amount: "1e3" }, "parameter_invalid", "amount"],
      [{ amount: "1.1234567" }, "parameter_invalid", "amount"],
      [{ amount: 25 }, "parameter_invalid", "amount"],
      [{ amount: "" }, "parameter_invalid", "amount"],
      [{ amount: " 25" }, "parameter_invalid", "amount"],
      [{ amount: "0.009" }, "parameter_invalid", "amount"],
      [{ amount: "1000000.01" }, "parameter_invalid", "amount"],
      [{ amount: null }, "parameter_invalid", "amount"],
      [{ amount: undefined }, "parameter_missing", "amount"],
      [{ orderId: undefined }, "parameter_missing", "orderId"],
      [{ orderId: "" }, "parameter_invalid", "orderId"],
      [{ orderId: "x".repeat(201) }, "parameter_invalid", "orderId"],
      [{ orderId: "line\nbreak" }, "parameter_invalid", "orderId"],
      [{ orderId: 42 }, "parameter_invalid", "orderId"],
      [{ metadata: { nested: { a: 1 } } }, "parameter_invalid", "metadata.nested"],
      [{ metadata: "x" }, "parameter_invalid", "metadata"],
      [{ metadata: Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`k${i}`, i])) }, "parameter_invalid", "metadata"],
      [{ customerId: newId("cus") }, "resource_missing", "customerId"],
      [{ customerId: foreign.id }, "resource_missing", "customerId"],
      [{ customerId: liveCustomer.id }, "resource_missing", "customerId"],
      [{ successUrl: "not a url" }, "parameter_invalid", "successUrl"],
      [{ successUrl: "ftp://shop.example/ok" }, "parameter_invalid", "successUrl"],
      [{ cancelUrl: "javascript:alert(1)" }, "parameter_invalid", "cancelUrl"],
      [{ cancelUrl: "/relative" }, "parameter_invalid", "cancelUrl"],
      [{ expiresInMinutes: 4 }, "parameter_invalid", "expiresInMinutes"],
      [{ expiresInMinutes: 10_081 }, "parameter_invalid", "expiresInMinutes"],
      [{ expiresInMinutes: 7.5 }, "parameter_invalid", "expiresInMinutes"],
      [{ expiresInMinutes: "ten" }, "parameter_invalid", "expiresInMinutes"],
      [{ description: "d".repeat(1001) }, "parameter_invalid", "description"],
      [{ currency: "EUR" }, "parameter_unknown", "currency"],
      [{ status: "COMPLETED" }, "parameter_unknown", "status"],
    ];
    const before = await chargeRows();
    for (const [body, code, param] of cases) {
      const res = await create(body);
      expectError(res, 400, code, param);
    }
    expectError(await app.call("POST", "/v1/charges", { body: ["orderId"] }), 400, "body_invalid_json", null);
    expect(await chargeRows()).toBe(before);
  });

  it("accepts http redirect URLs in test mode only", async () => {
    expect((await create({ successUrl: "http://localhost:3000/thanks" })).status).toBe(201);
    const live = await create({ successUrl: "http://shop.example/thanks" }, app.liveKey);
    expectError(live, 400, "parameter_invalid", "successUrl");
    expect((await create({ successUrl: "https://shop.example/thanks" }, app.liveKey)).status).toBe(201);
  });

  it("refuses a merchant without a settlement wallet for the mode, naming the setting", async () => {
    const shop = await app.newMerchant();
    await app.db.prisma.merchant.update({ where: { id: shop.merchant.id }, data: { liveWallet: null } });
    const res = await create({}, shop.apiKeys.live.secret);
    expectError(res, 400, "settlement_wallet_missing", "liveWallet");
    expect(res.body.message).toContain("Set a live settlement wallet in the dashboard's Settings");
    expect(await app.db.prisma.charge.count({ where: { merchantId: shop.merchant.id } })).toBe(0);
    expect((await create({}, shop.apiKeys.test.secret)).status).toBe(201);
  });

  it("keeps merchants and modes apart: another's charge is 404", async () => {
    const mine = (await create({ orderId: "iso-1" })).body;
    const other = await app.newMerchant();
    expectError(await app.call("GET", `/v1/charges/${mine.id}`, { key: other.apiKeys.test.secret }), 404, "resource_missing", "id");
    expectError(await app.call("GET", `/v1/charges/${mine.id}`, { key: app.liveKey }), 404, "resource_missing", "id");
    expectError(await app.call("DELETE", `/v1/charges/${mine.id}`, { key: other.apiKeys.test.secret }), 404, "resource_missing", "id");
    expectError(await app.call("GET", "/v1/charges/order/iso-1", { key: app.liveKey }), 404, "resource_missing", "orderId");
    expect((await app.call("GET", "/v1/charges", { key: other.apiKeys.test.secret })).body.total).toBe(0);
    expectError(await app.call("GET", `/v1/charges/${mine.id}`, { key: null }), 401, "api_key_missing");
  });

  it("replays an idempotent create instead of creating twice", async () => {
    const headers = { "idempotency-key": `idem-${order()}` };
    const body = { orderId: order(), amount: "9.99" };
    const first = await app.call("POST", "/v1/charges", { body, headers });
    const again = await app.call("POST", "/v1/charges", { body, headers });
    expect(first.status).toBe(201);
    expect(again.status).toBe(201);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.text).toBe(first.text);
    expect(await app.db.prisma.charge.count({ where: { orderId: body.orderId } })).toBe(1);
  });
});

describe("orderId", () => {
  it("lets exactly one of 20 concurrent creates for an order win, and frees the order once the charge expires", async () => {
    const orderId = `race-${order()}`;
    const results = await Promise.all(
      Array.from({ length: 20 }, () => app.call("POST", "/v1/charges", { body: { orderId, amount: "5", expiresInMinutes: 5 } })),
    );
    const statuses = results.map((r) => r.status).sort();
    expect(statuses).toEqual([201, ...Array(19).fill(409)]);
    for (const r of results.filter((r) => r.status === 409)) expectError(r, 409, "duplicate_order_id", "orderId");
    const winner = results.find((r) => r.status === 201)!.body;
    expect(await app.db.prisma.charge.count({ where: { orderId } })).toBe(1);

    await expireDueCharges(app.db.prisma, SETTINGS, inAnHour());
    expect((await app.call("GET", `/v1/charges/${winner.id}`)).body.status).toBe("EXPIRED");
    const second = await app.call("POST", "/v1/charges", { body: { orderId, amount: "6" } });
    expect(second.status).toBe(201);
    const byOrder = await app.call("GET", `/v1/charges/order/${orderId}`);
    expect(byOrder.status).toBe(200);
    expect(byOrder.body.id).toBe(second.body.id);
    expect(byOrder.body.amount).toBe("6.00");
  });

  it("frees the order once the charge is cancelled, and is per mode", async () => {
    const orderId = `cancel-${order()}`;
    const first = (await app.call("POST", "/v1/charges", { body: { orderId, amount: "5" } })).body;
    expect((await app.call("POST", "/v1/charges", { body: { orderId, amount: "5" }, key: app.liveKey })).status).toBe(201);
    expect((await app.call("POST", "/v1/charges", { body: { orderId, amount: "5" } })).status).toBe(409);
    expect((await app.call("DELETE", `/v1/charges/${first.id}`)).status).toBe(200);
    expect((await app.call("POST", "/v1/charges", { body: { orderId, amount: "5" } })).status).toBe(201);
  });

  it("finds orderIds with any printable characters, slashes included", async () => {
    const orderId = "INV/2026/ü 7#?";
    const created = (await app.call("POST", "/v1/charges", { body: { orderId, amount: "1" } })).body;
    const res = await app.call("GET", `/v1/charges/order/${encodeURIComponent(orderId)}`);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.id).toBe(created.id);
    expectError(await app.call("GET", "/v1/charges/order/no-such-order"), 404, "resource_missing", "orderId");
  });
});

describe("cancel", () => {
  it("cancels PENDING, returns CANCELLED unchanged, and refuses every other state with 409", async () => {
    const charge = (await create({})).body;
    const cancelled = await app.call("DELETE", `/v1/charges/${charge.id}`);
    expect(cancelled.status).toBe(200);
    expect(cancelled.body).toMatchObject({ id: charge.id, status: "CANCELLED", amountReceived: null, cloneAddress: null, completedAt: null });
    const again = await app.call("DELETE", `/v1/charges/${charge.id}`);
    expect(again.status).toBe(200);
    expect(again.body).toEqual(cancelled.body);

    const expired = (await create({ expiresInMinutes: 5 })).body;
    await expireDueCharges(app.db.prisma, SETTINGS, inAnHour());
    expectError(await app.call("DELETE", `/v1/charges/${expired.id}`), 409, "charge_not_cancellable", "id");

    for (const data of [
      { status: "RECEIVED" as const, amountReceived: "25000000" },
      { status: "COMPLETED" as const, amountReceived: "25000000" },
    ]) {
      const c = (await create({})).body;
      await app.db.prisma.charge.update({ where: { id: c.id }, data });
      const res = await app.call("DELETE", `/v1/charges/${c.id}`);
      expectError(res, 409, "charge_not_cancellable", "id");
      expect((await app.db.prisma.charge.findUniqueOrThrow({ where: { id: c.id } })).status).toBe(data.status);
    }
    expectError(await app.call("DELETE", `/v1/charges/${newId("chrg")}`), 404, "resource_missing", "id");
  });
});

describe("cancel with money on the way", () => {
  it("cancels a PENDING charge with confirmed partial money: the event carries it, the payout follows", async () => {
    const c = (await create({})).body;
    await app.db.prisma.charge.update({ where: { id: c.id }, data: { amountReceived: "10000000" } });
    const res = await app.call("DELETE", `/v1/charges/${c.id}`);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({ status: "CANCELLED", amountReceived: "10.00", settlements: [], payoutBlockedReason: null });
    const event = await app.db.prisma.event.findFirstOrThrow({ where: { type: "charge.cancelled", data: { path: ["id"], equals: c.id } } });
    expect(event.data).toMatchObject({ status: "CANCELLED", amountReceived: "10.00" });
  });

  it("refuses with 409 charge_payment_confirming while a payment is seen but not confirmed, and changes nothing", async () => {
    const c = (await create({})).body;
    await app.db.prisma.charge.update({ where: { id: c.id }, data: { chainId: 31337, confirmations: 3, cloneAddress: WALLET } });
    await recordPayment(app.db.prisma, { chargeId: c.id, blockNumber: 10n, fromAddress: WALLET, toAddress: WALLET, amount: "25000000" });
    const before = await app.db.prisma.charge.findUniqueOrThrow({ where: { id: c.id } });
    expectError(await app.call("DELETE", `/v1/charges/${c.id}`), 409, "charge_payment_confirming", "id");
    expect(await app.db.prisma.charge.findUniqueOrThrow({ where: { id: c.id } })).toEqual(before);
    expect(await app.db.prisma.event.count({ where: { type: "charge.cancelled", data: { path: ["id"], equals: c.id } } })).toBe(0);
  });
});

describe("list", () => {
  it("pages newest first with totals, hasMore and a stable order", async () => {
    const shop = await app.newMerchant();
    const key = shop.apiKeys.test.secret;
    const ids: string[] = [];
    for (let i = 0; i < 23; i++) ids.unshift((await app.call("POST", "/v1/charges", { body: { orderId: `p-${i}`, amount: "1" }, key })).body.id);
    const seen: string[] = [];
    for (let page = 1; page <= 3; page++) {
      const res = await app.call("GET", `/v1/charges?page=${page}&limit=10`, { key });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ object: "list", page, limit: 10, total: 23, hasMore: page < 3 });
      seen.push(...res.body.data.map((c: { id: string }) => c.id));
    }
    expect(seen).toEqual(ids);
    const beyond = await app.call("GET", "/v1/charges?page=4&limit=10", { key });
    expect(beyond.body).toMatchObject({ data: [], total: 23, hasMore: false });
    expect((await app.call("GET", "/v1/charges", { key })).body).toMatchObject({ page: 1, limit: 10, hasMore: true });
  });

  it("filters by status and customer", async () => {
    const shop = await app.newMerchant();
    const key = shop.apiKeys.test.secret;
    const customer = (await app.call("POST", "/v1/customers", { body: { email: "f@example.com", name: "F" }, key })).body;
    const a = (await app.call("POST", "/v1/charges", { body: { orderId: "f1", amount: "1", customerId: customer.id }, key })).body;
    await app.call("POST", "/v1/charges", { body: { orderId: "f2", amount: "1" }, key });
    await app.call("DELETE", `/v1/charges/${a.id}`, { key });
    const cancelled = (await app.call("GET", "/v1/charges?status=CANCELLED", { key })).body;
    expect(cancelled.data.map((c: { id: string }) => c.id)).toEqual([a.id]);
    expect(cancelled.total).toBe(1);
    expect((await app.call("GET", "/v1/charges?status=PENDING", { key })).body.total).toBe(1);
    const mine = (await app.call("GET", `/v1/charges?customerId=${customer.id}`, { key })).body;
    expect(mine.data.map((c: { id: string }) => c.id)).toEqual([a.id]);
  });

  it("refuses bad list parameters", async () => {
    expectError(await app.call("GET", "/v1/charges?page=0"), 400, "parameter_invalid", "page");
    expectError(await app.call("GET", "/v1/charges?limit=101"), 400, "parameter_invalid", "limit");
    expectError(await app.call("GET", "/v1/charges?limit=abc"), 400, "parameter_invalid", "limit");
    expectError(await app.call("GET", "/v1/charges?status=pending"), 400, "parameter_invalid", "status");
    expectError(await app.call("GET", "/v1/charges?sort=asc"), 400, "parameter_unknown", "sort");
  });
});

describe("customer stats", () => {
  it("counts linked charges and sums COMPLETED amounts exactly (0.1 + 0.2 = 0.30)", async () => {
    const customer = (await app.call("POST", "/v1/customers", { body: { email: "stats@example.com", name: "S" } })).body;
    const received = ["0.1", "0.2", "1.000001"];
    for (const amount of received) {
      const c = (await create({ customerId: customer.id, amount })).body;
      await app.db.prisma.charge.update({ where: { id: c.id }, data: { status: "COMPLETED", amountReceived: parseAmount(amount)!.toString() } });
    }
    await create({ customerId: customer.id });
    const res = await app.call("GET", `/v1/customers/${customer.id}?expand=stats`);
    expect(res.body).toMatchObject({ chargeCount: 4, totalSpent: "1.300001", invoiceCount: 0 });
  });
});
