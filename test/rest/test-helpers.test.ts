// POST /v1/test_helpers/charges/:id/expire: a test-mode charge expires now, as the sweep would.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectError, liveChains, POLLING, recordPayment, startApp, type TestApp } from "../helpers/harness.js";

describe("test helpers", () => {
  let app: TestApp;
  let n = 0;
  beforeAll(async () => {
    app = await startApp(POLLING, { chains: liveChains() });
  }, 60_000);
  afterAll(() => app?.stop());
  const newCharge = async (key = app.testKey) => (await app.call("POST", "/v1/charges", { key, body: { orderId: `helper-${++n}`, amount: "10" } })).body;
  const expire = (id: string, key = app.testKey) => app.call("POST", `/v1/test_helpers/charges/${id}/expire`, { key });
  const eventTypes = async (id: string) =>
    (await app.db.prisma.event.findMany({ where: { data: { path: ["id"], equals: id } }, orderBy: { createdAt: "asc" } })).map((e) => e.type);

  it("expires a PENDING charge now, with charge.expired, and only once", async () => {
    const charge = await newCharge();
    const res = await expire(charge.id);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: charge.id, status: "EXPIRED" });
    expect(new Date(res.body.expiresAt).getTime()).toBeLessThanOrEqual(Date.now());
    expect(await eventTypes(charge.id)).toEqual(["charge.pending", "charge.expired"]);
    expectError(await expire(charge.id), 409, "charge_not_payable", "id");
  });

  it("reports confirmed partial money as charge.underpaid, as the sweep does", async () => {
    const charge = await newCharge();
    await app.db.prisma.charge.update({ where: { id: charge.id }, data: { amountReceived: "4000000" } });
    expect((await expire(charge.id)).body).toMatchObject({ status: "EXPIRED", amountReceived: "4.00" });
    expect(await eventTypes(charge.id)).toEqual(["charge.pending", "charge.underpaid"]);
  });

  it("refuses a live key, a payment waiting for confirmations, and another merchant's charge", async () => {
    const live = await newCharge(app.liveKey);
    expectError(await expire(live.id, app.liveKey), 400, "test_mode_only");
    expect((await app.call("GET", `/v1/charges/${live.id}`, { key: app.liveKey })).body.status).toBe("PENDING");

    const confirming = await newCharge();
    await app.db.prisma.charge.update({ where: { id: confirming.id }, data: { chainId: 31337, cloneAddress: "0x2222222222222222222222222222222222222222" } });
    await recordPayment(app.db.prisma, { chargeId: confirming.id, amount: "10000000" });
    expectError(await expire(confirming.id), 409, "charge_payment_confirming", "id");

    const other = await app.newMerchant();
    const theirs = await newCharge(other.apiKeys.test.secret);
    expectError(await expire(theirs.id), 404, "resource_missing", "id");
    expect((await app.call("GET", `/v1/charges/${theirs.id}`, { key: other.apiKeys.test.secret })).body.status).toBe("PENDING");
  });
});
