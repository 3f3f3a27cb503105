// Paying an invoice on a real anvil with Circle's USDC: the hosted page's charges carry the money,
// the invoice counts what they confirm, partial money keeps it OPEN with the rest due, and it is PAID
// when nothing is left; a late payment is reported like any other.
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
  // Three confirmations: a block the producer was mining as it stopped still leaves a payment unconfirmed.
  devnet = await chain.enabled(3);
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

const getInvoice = async (id: string) => (await app.call("GET", `/v1/invoices/${id}`)).body;
const getCharge = async (id: string) => (await app.call("GET", `/v1/charges/${id}`)).body;
/** The hosted page's Pay, then the buyer's chain pick: the charge and where to send the money. */
async function payPress(invoiceId: string): Promise<{ id: string; cloneAddress: string; amount: string }> {
  const res = await fetch(`${app.url}/pay/invoices/${invoiceId}/pay`, {
    method: "POST",
    redirect: "manual",
    headers: { "content-type": "application/x-www-form-urlencoded" },
  });
  expect(res.status).toBe(303);
  const id = res.headers.get("location")!.split("/").pop()!;
  const picked = await app.call("POST", `/v1/public/charges/${id}/chain`, { body: { chainId: devnet.chainId }, key: null });
  return { id, cloneAddress: picked.body.cloneAddress, amount: picked.body.amount };
}
const eventTypes = async (id: string) =>
  (await app.db.prisma.event.findMany({ where: { data: { path: ["id"], equals: id } }, orderBy: { createdAt: "asc" } })).map((e) => e.type);

describe("paying an invoice", () => {
  it("in two charges, partial then the rest, to PAID; a late payment is the charge's (reported, paid out, refundable), not the invoice's", async () => {
    const customer = (await app.call("POST", "/v1/customers", { body: { email: "payer@example.com", name: "Payer" } })).body;
    const invoice = (
      await app.call("POST", "/v1/invoices", {
        body: {
          customerId: customer.id,
          lineItems: [
            { description: "Annual plan", quantity: 1, unitAmount: "24.00" },
            { description: "Setup", quantity: 2, unitAmount: "3.00" },
          ],
        },
      })
    ).body;
    await app.call("POST", `/v1/invoices/${invoice.id}/finalize`);
    const buyer = chain.wallet(3);

    // The buyer sends a third of it, then walks away: the charge expires underpaid.
    const first = await payPress(invoice.id);
    expect(first.amount).toBe("30.00");
    await chain.pay(buyer, first.cloneAddress, usdc("10"));
    await waitFor("the partial payment's confirmation", async () => (await getInvoice(invoice.id)).amountPaid === "10.00");
    expect(await getInvoice(invoice.id)).toMatchObject({ status: "OPEN", amountPaid: "10.00", amountDue: "20.00", paidAt: null });
    expect((await app.call("POST", `/v1/test_helpers/charges/${first.id}/expire`)).body.status).toBe("EXPIRED");

    // Back on the invoice, Pay makes a new charge for the rest.
    const second = await payPress(invoice.id);
    expect(second.id).not.toBe(first.id);
    expect(second.amount).toBe("20.00");
    await chain.pay(buyer, second.cloneAddress, usdc("20"));
    await waitFor("the invoice to be paid", async () => (await getInvoice(invoice.id)).status === "PAID");
    const paid = await getInvoice(invoice.id);
    expect(paid).toMatchObject({ amountPaid: "30.00", amountDue: "0.00" });
    expect(paid.paidAt).not.toBeNull();
    await waitFor("the second charge's payout", async () => (await getCharge(second.id)).status === "COMPLETED");
    expect(await eventTypes(invoice.id)).toEqual(["invoice.created", "invoice.finalized", "invoice.updated", "invoice.paid"]);
    const page = await (await fetch(`${app.url}/pay/invoices/${invoice.id}`)).text();
    expect(page).toContain('data-status="PAID"');
    expect(page).not.toContain('/pay"');

    // Money sent to a paid invoice's charge afterwards: a late payment of the charge, paid out as ever,
    // refundable; the invoice's total was paid, and its amountPaid stays what paid it.
    await chain.pay(buyer, second.cloneAddress, usdc("1"));
    await waitFor("the late payment", async () => (await eventTypes(second.id)).includes("charge.late_payment"));
    await waitFor("the charge to count it", async () => (await getCharge(second.id)).amountReceived === "21.00");
    expect(await getInvoice(invoice.id)).toMatchObject({ status: "PAID", amountPaid: "30.00", amountDue: "0.00" });
    const rows = await app.db.prisma.balanceTransaction.findMany({ where: { chargeId: second.id, type: "payment" }, orderBy: { createdAt: "asc" } });
    expect(rows.map((r) => [r.amount.toFixed(), r.invoiceId])).toEqual([
      ["20000000", invoice.id],
      ["1000000", null],
    ]);
    const fresh = await fetch(`${app.url}/pay/invoices/${invoice.id}/pay`, { method: "POST", redirect: "manual" });
    expect(fresh.status).toBe(409);
  });

  it("money that reaches a voided invoice's charge is the charge's (late, paid out, refundable), never the invoice's", async () => {
    const customer = (await app.call("POST", "/v1/customers", { body: { email: "late-void@example.com", name: "Late" } })).body;
    const invoice = (
      await app.call("POST", "/v1/invoices", { body: { customerId: customer.id, lineItems: [{ description: "Thing", quantity: 1, unitAmount: "7" }] } })
    ).body;
    await app.call("POST", `/v1/invoices/${invoice.id}/finalize`);
    const charge = await payPress(invoice.id);
    const voided = await app.call("POST", `/v1/invoices/${invoice.id}/void`);
    expect(voided.body.status).toBe("VOID");
    expect((await getCharge(charge.id)).status).toBe("CANCELLED");
    await chain.pay(chain.wallet(3), charge.cloneAddress, usdc("7"));
    await waitFor("the late payment", async () => (await eventTypes(charge.id)).includes("charge.late_payment"));
    const paid = await waitFor("its payout", async () => {
      const c = await getCharge(charge.id);
      return c.netAmount === "6.93" ? c : undefined;
    });
    expect(paid).toMatchObject({ status: "CANCELLED", amountReceived: "7.00" });
    expect(await getInvoice(invoice.id)).toMatchObject({ status: "VOID", amountPaid: "0.00" });
    expect(await eventTypes(invoice.id)).not.toContain("invoice.paid");
    const refund = await app.call("POST", `/v1/charges/${charge.id}/refunds`, { body: { address: chain.wallet(3).address } });
    expect(refund.status, refund.text).toBe(201);
    expect(refund.body.amount).toBe("7.00");
  });

  it("a void waits for a payment still being confirmed", async () => {
    const customer = (await app.call("POST", "/v1/customers", { body: { email: "voider@example.com", name: "Voider" } })).body;
    const invoice = (
      await app.call("POST", "/v1/invoices", { body: { customerId: customer.id, lineItems: [{ description: "Thing", quantity: 1, unitAmount: "5" }] } })
    ).body;
    await app.call("POST", `/v1/invoices/${invoice.id}/finalize`);
    const charge = await payPress(invoice.id);
    stopProducer();
    try {
      await chain.pay(chain.wallet(3), charge.cloneAddress, usdc("5"));
      await waitFor("the payment to be seen", async () => (await app.db.prisma.chainTransfer.count({ where: { kind: "PAYMENT", chargeId: charge.id } })) === 1);
      const refused = await app.call("POST", `/v1/invoices/${invoice.id}/void`);
      expect(refused.status).toBe(409);
      expect(refused.body).toMatchObject({ code: "charge_payment_confirming", message: expect.stringContaining("on its way") });
    } finally {
      startProducer();
    }
    await waitFor("the invoice to be paid", async () => (await getInvoice(invoice.id)).status === "PAID");
    expect((await app.call("POST", `/v1/invoices/${invoice.id}/void`)).status).toBe(409);
  });
});
