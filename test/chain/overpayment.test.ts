// Overpayment shown: a charge paid beyond its amount carries `amountOverpaid` (confirmed money beyond
// `amount`, "0.00" when none) in every door (REST, GraphQL, the buyer's public view, the CSV export,
// the event snapshot), and the hosted page tells the buyer what was paid too much and that the
// merchant was told. On anvil with Circle's FiatToken, paid and paid out by the chain runner.
import { parseUnits } from "ethers";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ChainSet, type EnabledChain } from "../../src/chain/chains.js";
import { startChainRunner } from "../../src/jobs/chain-runner.js";
import type { Periodic } from "../../src/lib/periodic.js";
import { blockProducer, startTestChain, type TestChain, waitFor } from "../helpers/chain.js";
import { POLLING, SETTINGS, startApp, type TestApp } from "../helpers/harness.js";

const usdc = (s: string) => parseUnits(s, 6);

let chain: TestChain;
let app: TestApp;
let devnet: EnabledChain;
let runner: Periodic;
const { start: startProducer, stop: stopProducer } = blockProducer(() => chain.mine());

beforeAll(async () => {
  chain = await startTestChain();
  devnet = await chain.enabled(1);
  app = await startApp(POLLING, { chains: new ChainSet([devnet]) });
  runner = startChainRunner(app.db, devnet, pino({ level: "silent" }), { intervalMs: 50, settings: { ...SETTINGS, feed: app.live }, bumpAfterMs: 60_000 });
  startProducer();
}, 60_000);
afterAll(async () => {
  stopProducer();
  await runner?.stop();
  await app?.stop();
  await chain?.stop();
});

let seq = 0;
/** A 10 USDC charge with its chain picked. */
async function payableCharge(): Promise<{ id: string; clone: string }> {
  const charge = (await app.call("POST", "/v1/charges", { body: { orderId: `overpaid-${++seq}`, amount: "10" } })).body;
  expect(charge.amountOverpaid).toBe("0.00");
  const picked = await app.call("POST", `/v1/public/charges/${charge.id}/chain`, { body: { chainId: devnet.chainId }, key: null });
  expect(picked.status, JSON.stringify(picked.body)).toBe(200);
  return { id: charge.id, clone: picked.body.cloneAddress };
}
const getCharge = async (id: string) => (await app.call("GET", `/v1/charges/${id}`)).body;
const completed = (id: string) =>
  waitFor(`charge ${id} to complete`, async () => {
    const c = await getCharge(id);
    return c.status === "COMPLETED" && c.flushTxHash !== null ? c : undefined;
  });
const hostedPage = async (id: string) => (await fetch(`${app.url}/pay/${id}`)).text();
const OVERPAID_TEXT = /You paid (\S+) USDC more than asked\. The merchant has been notified and can refund it\./;

describe("overpayment", () => {
  let exact: string;
  let over: string;
  beforeAll(async () => {
    const a = await payableCharge();
    const b = await payableCharge();
    // Before any money: nothing overpaid, and a partial payment is not an overpayment either.
    await chain.pay(chain.wallet(3), b.clone, usdc("4"));
    await waitFor("the partial payment", async () => (await getCharge(b.id)).amountReceived === "4.00");
    expect((await getCharge(b.id)).amountOverpaid).toBe("0.00");
    await chain.pay(chain.wallet(3), a.clone, usdc("10"));
    await chain.pay(chain.wallet(4), b.clone, usdc("11"));
    await Promise.all([completed(a.id), completed(b.id)]);
    [exact, over] = [a.id, b.id];
  }, 60_000);

  it("REST: 0.00 for an exact payment, 5.00 for 15 paid on a 10 charge, in the charge, the list and the events", async () => {
    expect(await getCharge(exact)).toMatchObject({ amount: "10.00", amountReceived: "10.00", amountOverpaid: "0.00" });
    expect(await getCharge(over)).toMatchObject({ amount: "10.00", amountReceived: "15.00", amountOverpaid: "5.00", feeAmount: "0.15" });
    const list = (await app.call("GET", "/v1/charges?limit=100")).body.data;
    expect(list.find((c: { id: string }) => c.id === over).amountOverpaid).toBe("5.00");
    expect(list.find((c: { id: string }) => c.id === exact).amountOverpaid).toBe("0.00");
    // The merchant is told: the events carry the charge with its excess (and charge.completed its overpaidAmount, as before).
    const events = (await app.call("GET", "/v1/events?limit=100")).body.data.filter((e: { data: { id: string } }) => e.data.id === over);
    const byType = Object.fromEntries(events.map((e: { type: string; data: unknown }) => [e.type, e.data]));
    expect(byType["charge.partial"]).toMatchObject({ amountOverpaid: "0.00" });
    expect(byType["charge.received"]).toMatchObject({ amountReceived: "15.00", amountOverpaid: "5.00" });
    expect(byType["charge.completed"]).toMatchObject({ amountOverpaid: "5.00", overpaidAmount: "5.00" });
  });

  it("GraphQL: Charge.amountOverpaid, and the buyer's paymentSession", async () => {
    const query = `query($a: ID!, $b: ID!) {
      a: charge(id: $a) { amountReceived amountOverpaid }
      b: charge(id: $b) { amountReceived amountOverpaid }
    }`;
    const res = await app.gql(query, { a: exact, b: over });
    expect(res.errors).toBeUndefined();
    expect(res.data).toEqual({ a: { amountReceived: "10.00", amountOverpaid: "0.00" }, b: { amountReceived: "15.00", amountOverpaid: "5.00" } });
    const session = await app.gql(`query($id: ID!) { paymentSession(chargeId: $id) { amountOverpaid } }`, { id: over }, null);
    expect(session).toEqual({ data: { paymentSession: { amountOverpaid: "5.00" } } });
  });

  it("the buyer's public view and hosted page say what was paid too much and that the merchant was told", async () => {
    expect((await app.call("GET", `/v1/public/charges/${over}`, { key: null })).body.amountOverpaid).toBe("5.00");
    expect((await app.call("GET", `/v1/public/charges/${exact}`, { key: null })).body.amountOverpaid).toBe("0.00");
    const html = await hostedPage(over);
    expect(html.match(OVERPAID_TEXT)?.[1]).toBe("5.00");
    expect(await hostedPage(exact)).not.toMatch(/more than asked/);
  });

  it("the CSV export has the excess in its own column", async () => {
    const res = await fetch(`${app.url}/v1/charges/export.csv`, { headers: { "x-api-key": app.testKey } });
    const [header, ...lines] = (await res.text())
      .trim()
      .split("\r\n")
      .map((l) => l.split(","));
    const column = header!.indexOf("amountOverpaid");
    expect(column).toBeGreaterThan(header!.indexOf("amountReceived"));
    const line = (id: string) => lines.find((l) => l[0] === id)!;
    expect(line(over)[column]).toBe("5.00");
    expect(line(exact)[column]).toBe("0.00");
  });
});
