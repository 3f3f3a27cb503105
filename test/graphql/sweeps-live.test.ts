// A charge's sweeps over chargeUpdated: each change of a sweep (asked for, refused by the worker, sent,
// done) is announced through the live feed and sends the charge again with its `sweeps`, newest first;
// nothing is read on a timer. The worker's steps are the domain's own (as jobs/sweeps.ts calls them),
// announcing on the service's feed: the chain is tested in test/chain/sweeps.test.ts.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { announceSweepChange, claimSweep, endSweep, failSweep } from "../../src/domain/sweeps.js";
import { liveChains, startApp, type TestApp } from "../helpers/harness.js";
import { subscribe, wsClient } from "../helpers/live.js";

let app: TestApp;
beforeAll(async () => {
  app = await startApp({}, { chains: liveChains() });
});
afterAll(() => app?.stop());

const SWEEP_FIELDS = "id chainId token status txHash error";
const CHARGE_SWEEPS = `subscription($id: ID!) { chargeUpdated(id: $id) { id status sweeps { ${SWEEP_FIELDS} } } }`;
const SWEEP_CHARGE = `mutation($id: ID!, $token: String!) { sweepCharge(id: $id, token: $token) { ${SWEEP_FIELDS} } }`;
const TOKEN = "0x7777777777777777777777777777777777777777";
const TX_HASH = `0x${"ab".repeat(32)}`;

/** A live charge with Base picked: it has an address to sweep. */
async function pickedCharge(orderId: string): Promise<string> {
  const created = await app.call("POST", "/v1/charges", { key: app.liveKey, body: { orderId, amount: "5.00" } });
  expect(created.status, created.text).toBe(201);
  const picked = await app.call("POST", `/v1/public/charges/${created.body.id}/chain`, { key: null, body: { chainId: 8453 } });
  expect(picked.status, picked.text).toBe(200);
  return created.body.id;
}

describe("a charge's sweeps, live", () => {
  it("chargeUpdated sends each sweep's change as it commits: PENDING, FAILED; then PENDING, SENT, DONE", async () => {
    const id = await pickedCharge("sweep-live-1");
    const client = wsClient(app.url, app.liveKey);
    const live = subscribe(client, CHARGE_SWEEPS, { id });
    await live.waitFor(1);
    expect(live.values[0].chargeUpdated).toEqual({ id, status: "PENDING", sweeps: [] });
    const feed = { feed: app.live };
    const sweepsSent = () => live.values.map((v) => v.chargeUpdated.sweeps.map((s: { status: string }) => s.status));

    // Asked for by the merchant: the mutation announces it.
    const asked = await app.gql(SWEEP_CHARGE, { id, token: TOKEN }, app.liveKey);
    expect(asked.errors).toBeUndefined();
    const first = asked.data.sweepCharge;
    expect(first).toMatchObject({ chainId: 8453, token: TOKEN, status: "PENDING", txHash: null });
    await live.waitFor(2);
    expect(live.values[1].chargeUpdated.sweeps).toEqual([first]);

    // The worker will not send it (nothing to sweep): FAILED, with why.
    await failSweep(app.db.prisma, feed, first.id, "nothing to sweep: the address holds none of it");
    await live.waitFor(3);
    expect(live.values[2].chargeUpdated.sweeps).toEqual([{ ...first, status: "FAILED", error: "nothing to sweep: the address holds none of it" }]);

    // Asked again, sent, and done: the newest first, the failed one still listed.
    const again = (await app.gql(SWEEP_CHARGE, { id, token: TOKEN }, app.liveKey)).data.sweepCharge;
    await live.waitFor(4);
    await app.db.prisma.$transaction(async (tx) => {
      await tx.relayerTransaction.create({ data: { id: "rtx_sweeplive1", chainId: 8453, kind: "SWEEP", nonce: 1, rawTx: "0x", txHashes: [TX_HASH] } });
      expect(await claimSweep(tx, again.id, "rtx_sweeplive1", 90_000n)).toBe(true);
    });
    await announceSweepChange(app.db.prisma, feed, id);
    await live.waitFor(5);
    expect(live.values[4].chargeUpdated.sweeps[0]).toEqual({ ...again, status: "SENT", txHash: TX_HASH });
    await endSweep(app.db.prisma, feed, "rtx_sweeplive1", { done: true, gasUsed: 80_000n });
    await live.waitFor(6);
    // A fence: one more announcement, so that a message sent in between would show before it.
    await announceSweepChange(app.db.prisma, feed, id);
    await live.waitFor(7);
    expect(sweepsSent()).toEqual([[], ["PENDING"], ["FAILED"], ["PENDING", "FAILED"], ["SENT", "FAILED"], ["DONE", "FAILED"], ["DONE", "FAILED"]]);
    expect(live.values[5].chargeUpdated.sweeps.map((s: { id: string }) => s.id)).toEqual([again.id, first.id]);
    expect(live.errors).toEqual([]);

    // `sweep(id)` reads it as before.
    const read = await app.gql(`query($id: ID!) { sweep(id: $id) { ${SWEEP_FIELDS} } }`, { id: again.id }, app.liveKey);
    expect(read.data.sweep).toEqual({ ...again, status: "DONE", txHash: TX_HASH });
    live.stop();
    await client.dispose();
  });
});
