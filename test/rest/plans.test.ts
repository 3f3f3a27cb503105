// Plans over REST: create, read, list (active, paging), rename and retire; the price and period never
// change; bad input changes nothing; modes and merchants see only their own.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectError, POLLING, startApp, type TestApp } from "../helpers/harness.js";

let app: TestApp;
beforeAll(async () => {
  app = await startApp(POLLING);
}, 60_000);
afterAll(() => app?.stop());

const create = (body: Record<string, unknown>, key = app.testKey) => app.call("POST", "/v1/plans", { key, body });
const ids = (res: { body: { data: { id: string }[] } }) => res.body.data.map((p) => p.id);

describe("plans", () => {
  it("creates, retrieves, lists and renames a plan", async () => {
    const res = await create({ name: "Pro, monthly", amount: "25", interval: "month", trialDays: 14, metadata: { tier: "pro" } });
    expect(res.status, res.text).toBe(201);
    const plan = res.body;
    expect(plan).toMatchObject({
      object: "plan",
      livemode: false,
      name: "Pro, monthly",
      amount: "25.00",
      currency: "USDC",
      interval: "month",
      intervalCount: 1,
      trialDays: 14,
      active: true,
      metadata: { tier: "pro" },
    });
    expect(plan.id).toMatch(/^plan_[0-9A-Za-z]{24}$/);
    expect((await app.call("GET", `/v1/plans/${plan.id}`)).body).toEqual(plan);
    expect(ids(await app.call("GET", "/v1/plans?limit=100"))).toContain(plan.id);

    const renamed = await app.call("PATCH", `/v1/plans/${plan.id}`, { body: { name: "Pro", metadata: { tier: null, seats: 5 } } });
    expect(renamed.status).toBe(200);
    expect(renamed.body).toMatchObject({ name: "Pro", metadata: { seats: 5 }, amount: "25.00", interval: "month", trialDays: 14 });
  });

  it("never changes the price, period or trial: a PATCH naming them is refused and changes nothing", async () => {
    const plan = (await create({ name: "Fixed", amount: "10", interval: "week", intervalCount: 2 })).body;
    for (const [field, value] of [
      ["amount", "1.00"],
      ["interval", "day"],
      ["intervalCount", 1],
      ["trialDays", 3],
    ] as const) {
      expectError(await app.call("PATCH", `/v1/plans/${plan.id}`, { body: { name: "Changed", [field]: value } }), 400, "parameter_unknown", field);
    }
    expect((await app.call("GET", `/v1/plans/${plan.id}`)).body).toEqual(plan);
  });

  it("refuses bad input naming the field, and creates nothing", async () => {
    const before = await app.db.prisma.plan.count();
    const ok = { name: "x", amount: "5", interval: "month" };
    expectError(await create({ amount: "5", interval: "month" }), 400, "parameter_missing", "name");
    expectError(await create({ ...ok, name: " " }), 400, "parameter_invalid", "name");
    expectError(await create({ ...ok, name: "n".repeat(201) }), 400, "parameter_invalid", "name");
    expectError(await create({ name: "x", interval: "month" }), 400, "parameter_missing", "amount");
    for (const amount of ["0", "-1", "1.0000001", "abc", "100000000"]) expectError(await create({ ...ok, amount }), 400, "parameter_invalid", "amount");
    expectError(await create({ ...ok, amount: 5 }), 400, "parameter_invalid", "amount");
    expectError(await create({ name: "x", amount: "5" }), 400, "parameter_missing", "interval");
    expectError(await create({ ...ok, interval: "fortnight" }), 400, "parameter_invalid", "interval");
    for (const intervalCount of [0, -1, 1.5, "x"]) expectError(await create({ ...ok, intervalCount }), 400, "parameter_invalid", "intervalCount");
    // At most a year in total, whatever the unit.
    expectError(await create({ ...ok, intervalCount: 13 }), 400, "parameter_invalid", "intervalCount");
    expectError(await create({ ...ok, interval: "year", intervalCount: 2 }), 400, "parameter_invalid", "intervalCount");
    expectError(await create({ ...ok, interval: "day", intervalCount: 366 }), 400, "parameter_invalid", "intervalCount");
    for (const trialDays of [-1, 731, 1.5]) expectError(await create({ ...ok, trialDays }), 400, "parameter_invalid", "trialDays");
    expectError(
      await create({ ...ok, metadata: Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`k${i}`, "v"])) }),
      400,
      "parameter_invalid",
      "metadata",
    );
    expectError(await create({ ...ok, active: false }), 400, "parameter_unknown", "active");
    expect(await app.db.prisma.plan.count()).toBe(before);
    // The longest periods are allowed.
    for (const [interval, intervalCount] of [
      ["day", 365],
      ["week", 52],
      ["month", 12],
      ["year", 1],
    ] as const) {
      expect((await create({ ...ok, interval, intervalCount })).status).toBe(201);
    }
  });

  it("retires and reactivates a plan; lists filter by active and page by cursor", async () => {
    const made = [];
    for (const name of ["A", "B", "C"]) made.push((await create({ name, amount: "3", interval: "day" })).body);
    const retired = await app.call("PATCH", `/v1/plans/${made[1].id}`, { body: { active: false } });
    expect(retired.body.active).toBe(false);
    expect(ids(await app.call("GET", "/v1/plans?active=false&limit=100"))).toContain(made[1].id);
    expect(ids(await app.call("GET", "/v1/plans?active=true&limit=100"))).not.toContain(made[1].id);
    expectError(await app.call("GET", "/v1/plans?active=maybe"), 400, "parameter_invalid", "active");

    const first = await app.call("GET", "/v1/plans?limit=2");
    expect(ids(first)).toEqual([made[2].id, made[1].id]);
    expect(first.body.hasMore).toBe(true);
    const next = await app.call("GET", `/v1/plans?limit=1&startingAfter=${made[1].id}`);
    expect(ids(next)).toEqual([made[0].id]);
    expectError(await app.call("GET", "/v1/plans?startingAfter=plan_nope"), 400, "resource_missing", "startingAfter");

    expect((await app.call("PATCH", `/v1/plans/${made[1].id}`, { body: { active: true } })).body.active).toBe(true);
  });

  it("another merchant or the other mode sees none of it", async () => {
    const plan = (await create({ name: "Mine", amount: "2", interval: "month" })).body;
    const other = await app.newMerchant();
    for (const key of [other.apiKeys.test.secret, app.liveKey]) {
      expectError(await app.call("GET", `/v1/plans/${plan.id}`, { key }), 404, "resource_missing", "id");
      expectError(await app.call("PATCH", `/v1/plans/${plan.id}`, { key, body: { active: false } }), 404, "resource_missing", "id");
      expect(ids(await app.call("GET", "/v1/plans?limit=100", { key }))).not.toContain(plan.id);
    }
    expect((await app.call("GET", `/v1/plans/${plan.id}`)).body.active).toBe(true);
  });

  it("a live plan needs a live settlement wallet", async () => {
    const other = await app.newMerchant();
    await app.db.prisma.merchant.update({ where: { id: other.merchant.id }, data: { liveWallet: null } });
    const before = await app.db.prisma.plan.count();
    expectError(await create({ name: "Live", amount: "5", interval: "month" }, other.apiKeys.live.secret), 400, "settlement_wallet_missing");
    expect(await app.db.prisma.plan.count()).toBe(before);
    expect((await create({ name: "Test", amount: "5", interval: "month" }, other.apiKeys.test.secret)).status).toBe(201);
  });
});
