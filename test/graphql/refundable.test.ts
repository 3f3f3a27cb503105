// Charge.amountRefundable (.docs/refunds.md): what refunds may still take back, by the rule createRefund
// enforces (domain/refunds.ts: confirmed money received less the refunds that are not cancelled), and
// the live stream the dashboard's charge page follows carrying it with the refunds and payments.
// Money is confirmed by the real posting code without a node (helpers/ledger.ts).
import { getAddress } from "ethers";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ChainMoney, refundableInAll, refundLimit } from "../../src/domain/refunds.js";
import { ChainHistory, chargeOn } from "../helpers/ledger.js";
import { expectError, liveChains, POLLING, startApp, type TestApp } from "../helpers/harness.js";
import { subscribe, wsClient } from "../helpers/live.js";

const DEVNET = 31337;
const BUYER = getAddress("0x00000000000000000000000000000000000b0b03");
const REFUNDABLE = "query($id: ID!) { charge(id: $id) { amountRefundable refundable { chainId left } } }";
const LIVE = "subscription($id: ID!) { chargeUpdated(id: $id) { id amountReceived amountRefundable refunds { id amount } payments { amount } } }";

let app: TestApp;
beforeAll(async () => {
  app = await startApp(POLLING, { chains: liveChains() });
});
afterAll(() => app?.stop());

const refundable = async (id: string) => {
  const res = await app.gql(REFUNDABLE, { id });
  expect(res.errors).toBeUndefined();
  return res.data.charge;
};

describe("Charge.amountRefundable", () => {
  it("is what was received less the refunds not cancelled: createRefund's limit, live on chargeUpdated", async () => {
    const devnet = new ChainHistory(app, DEVNET);
    const charge = await chargeOn(app, app.testKey, DEVNET, "10.00");
    expect(await refundable(charge.id)).toEqual({ amountRefundable: "0.00", refundable: [] });

    const client = wsClient(app.url, app.testKey);
    const live = subscribe(client, LIVE, { id: charge.id });
    await live.waitFor(1);
    // The buyer pays 2.00 too much: all 12.00 received may be refunded.
    await devnet.sees({ from: BUYER, to: charge.address, amount: "12.00" });
    await devnet.confirm(new Date());
    const [, paid] = await live.waitFor(2);
    expect(paid.chargeUpdated).toMatchObject({ amountReceived: "12.00", amountRefundable: "12.00", refunds: [], payments: [{ amount: "12.00" }] });
    expect(live.errors).toEqual([]);
    live.stop();
    await client.dispose();

    const first = await app.call("POST", `/v1/charges/${charge.id}/refunds`, { body: { amount: "4.00", address: BUYER } });
    expect(first.status, first.text).toBe(201);
    // A refund waiting for its payment already counts.
    expect(await refundable(charge.id)).toEqual({ amountRefundable: "8.00", refundable: [{ chainId: DEVNET, left: "8.00" }] });
    const over = await app.gql(`mutation($id: ID!) { createRefund(chargeId: $id, input: { amount: "8.01", address: "${BUYER}" }) { id } }`, { id: charge.id });
    expect(over.errors?.[0]?.extensions).toMatchObject({ code: "refund_exceeds_refundable", param: "amount" });
    expect(over.errors?.[0]?.message).toContain("at most 8.00 USDC");

    // A cancelled refund gives its amount back.
    expect((await app.call("POST", `/v1/refunds/${first.body.id}/cancel`)).status).toBe(200);
    expect((await refundable(charge.id)).amountRefundable).toBe("12.00");
    const all = await app.call("POST", `/v1/charges/${charge.id}/refunds`, { body: { address: BUYER } });
    expect(all.body.amount).toBe("12.00");
    expect(await refundable(charge.id)).toEqual({ amountRefundable: "0.00", refundable: [{ chainId: DEVNET, left: "0.00" }] });
    expectError(await app.call("POST", `/v1/charges/${charge.id}/refunds`, { body: { address: BUYER } }), 409, "charge_not_refundable", "id");
  });
});

describe("refund limits (domain/refunds.ts)", () => {
  const money = (chainId: number, received: bigint, asked: bigint): ChainMoney => ({ chainId, received, asked });

  it("bound each chain by what is left in all, never below zero", () => {
    // Refunds made before they followed the money asked 3 of chain 2, where nothing arrived.
    const all = [money(1, 10n, 2n), money(2, 0n, 3n)];
    expect(refundableInAll(all)).toBe(5n);
    expect(refundLimit(all[0]!, all)).toBe(5n);
    expect(refundLimit(all[1]!, all)).toBe(0n);
    const over = [money(1, 4n, 4n), money(2, 0n, 1n)];
    expect(refundableInAll(over)).toBe(0n);
    expect(refundLimit(over[0]!, over)).toBe(0n);
    expect(refundableInAll([money(1, 6n, 1n), money(8453, 3n, 0n)])).toBe(8n);
  });
});
