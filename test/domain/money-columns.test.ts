// The six money columns still int8 (charges.amount, invoices.total and the amounts of payment links,
// plans, subscriptions and pulls) become numeric(78,0) in the next release (prisma/contract-next/),
// while this release still serves: so this release's flows over them run here on both schemas, the
// one its migrations make and the one the staged contract step makes, with the same exact amounts.
// The payments are the real posting code's (test/helpers/ledger.ts), confirmed without a node.
import { fileURLToPath } from "node:url";
import { getAddress } from "ethers";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ChainHistory, chargeOn } from "../helpers/ledger.js";
import { liveChains, POLLING, startApp, type TestApp } from "../helpers/harness.js";

const CONTRACT_NEXT = fileURLToPath(new URL("../../prisma/contract-next/", import.meta.url));
const DEVNET = 31337;
const BUYER = getAddress("0x00000000000000000000000000000000000b0b47");
const FEE_WALLET = getAddress("0x00000000000000000000000000000000000fee47");
const COLUMNS = [
  ["charges", "amount"],
  ["invoices", "total"],
  ["payment_links", "amount"],
  ["plans", "amount"],
  ["subscriptions", "amount"],
  ["subscription_pulls", "amount"],
] as const;

describe.each([
  { shape: "bigint", alsoMigrate: undefined },
  { shape: "numeric", alsoMigrate: CONTRACT_NEXT },
])("with the money columns $shape", ({ shape, alsoMigrate }) => {
  let app: TestApp;
  let devnet: ChainHistory;
  let customerId: string;
  const now = new Date();

  beforeAll(async () => {
    app = await startApp(POLLING, { chains: liveChains(), alsoMigrate });
    devnet = new ChainHistory(app, DEVNET);
    customerId = (await app.call("POST", "/v1/customers", { body: { email: "money@example.com", name: "Buyer" } })).body.id;
  }, 120_000);
  afterAll(() => app?.stop());

  /** A charge's REST resource. */
  const charge = async (id: string) => (await app.call("GET", `/v1/charges/${id}`)).body;
  /** Gives `id` (a charge made without a chain) a chain and an address, as the buyer's pick does; its address. */
  const onDevnet = async (id: string, n: number) => {
    const address = getAddress(`0x${(0xa47000 + n).toString(16).padStart(40, "0")}`);
    await app.db.prisma.charge.update({ where: { id }, data: { chainId: DEVNET, confirmations: 1, depositAddress: address, cloneAddress: address } });
    return address;
  };

  it("has the six columns in that shape", async () => {
    const rows = await app.db.prisma.$queryRaw<{ table: string; column: string; type: string }[]>`
      SELECT table_name AS table, column_name AS column, data_type AS type FROM information_schema.columns
      WHERE table_schema = current_schema() AND (table_name, column_name) IN
        (('charges', 'amount'), ('invoices', 'total'), ('payment_links', 'amount'), ('plans', 'amount'), ('subscriptions', 'amount'), ('subscription_pulls', 'amount'))`;
    expect(rows).toHaveLength(COLUMNS.length);
    for (const row of rows) expect(row.type, `${row.table}.${row.column}`).toBe(shape);
  });

  it("takes charges through payment, payout, partial payment and cancel, and reads them back exactly", async () => {
    const paid = await chargeOn(app, app.testKey, DEVNET, "25.00");
    const partial = await chargeOn(app, app.testKey, DEVNET, "25.00");
    const cancelled = await app.call("POST", "/v1/charges", { body: { orderId: `money-cancel-${shape}`, amount: "7.50" } });
    expect(cancelled.status, cancelled.text).toBe(201);

    await devnet.sees({ from: BUYER, to: paid.address, amount: "25.00" }, { from: BUYER, to: partial.address, amount: "10.00" });
    await devnet.confirm(now);
    expect(await charge(paid.id)).toMatchObject({ status: "RECEIVED", amount: "25.00", amountReceived: "25.00" });
    await devnet.paysOut(paid.address, "25.00", FEE_WALLET);
    await devnet.confirm(now);

    expect(await charge(paid.id)).toMatchObject({ status: "COMPLETED", amount: "25.00", amountReceived: "25.00", feeAmount: "0.25", netAmount: "24.75" });
    expect(await charge(partial.id)).toMatchObject({ status: "PENDING", amount: "25.00", amountReceived: "10.00" });
    const publicView = await app.call("GET", `/v1/public/charges/${partial.id}`, { key: null });
    expect(publicView.body).toMatchObject({ amount: "25.00", amountReceived: "10.00", amountRemaining: "15.00" });
    const cancel = await app.call("DELETE", `/v1/charges/${cancelled.body.id}`);
    expect(cancel.body).toMatchObject({ status: "CANCELLED", amount: "7.50" });

    const listed = (await app.call("GET", "/v1/charges?limit=100")).body.data as { id: string; amount: string }[];
    expect(Object.fromEntries(listed.map((c) => [c.id, c.amount]))).toMatchObject({ [paid.id]: "25.00", [partial.id]: "25.00", [cancelled.body.id]: "7.50" });
    const found = (await app.call("GET", `/v1/charges?search=${encodeURIComponent("25.00")}`)).body.data.map((c: { id: string }) => c.id);
    expect(found.sort()).toEqual([paid.id, partial.id].sort());

    const csv = await app.call("GET", "/v1/charges/export.csv");
    expect(csv.status).toBe(200);
    const [header, ...lines] = csv.text.trim().split(/\r?\n/);
    const amountAt = header!.split(",").indexOf("amount");
    const csvAmounts = Object.fromEntries(lines.map((l) => l.split(",")).map((cells) => [cells[0], cells[amountAt]]));
    expect(csvAmounts).toMatchObject({ [paid.id]: "25.00", [partial.id]: "25.00", [cancelled.body.id]: "7.50" });

    const stats = await app.gql("{ chargeStats(days: 7) { completedVolume { amount } feesPaid } }");
    expect(stats.errors).toBeUndefined();
    expect(stats.data.chargeStats.completedVolume.map((d: { amount: string }) => d.amount)).toContain("25.00");
    expect(stats.data.chargeStats.feesPaid).toBe("0.25");
    const summary = await app.gql("{ ledgerSummary { grossReceived fees net } }");
    expect(summary.errors).toBeUndefined();
    expect(summary.data.ledgerSummary).toMatchObject({ grossReceived: "35.00", fees: "0.25" });
  });

  it("sells through a payment link at its amount times the quantity", async () => {
    const link = await app.call("POST", "/v1/payment_links", { body: { name: "Tickets", amount: "25", quantityMax: 4 } });
    expect(link.status, link.text).toBe(201);
    expect(link.body.amount).toBe("25.00");
    // The update locks the row and reads its amount in raw SQL, to check the new quantity's total.
    const updated = await app.call("PATCH", `/v1/payment_links/${link.body.id}`, { body: { quantityMax: 3 } });
    expect(updated.body).toMatchObject({ amount: "25.00", quantityMax: 3 });
    expect((await app.call("GET", `/v1/payment_links/${link.body.id}`)).body.amount).toBe("25.00");

    const pressed = await fetch(`${app.url}/pay/l/${link.body.id}`, {
      method: "POST",
      redirect: "manual",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: "quantity=3",
    });
    expect(pressed.status, await pressed.text()).toBe(303);
    const made = await charge(pressed.headers.get("location")!.split("/").pop()!);
    expect(made).toMatchObject({ amount: "75.00", paymentLinkId: link.body.id });
  });

  it("prices plans and subscriptions", async () => {
    const plan = await app.call("POST", "/v1/plans", { body: { name: "Pro", amount: "25", interval: "month" } });
    expect(plan.status, plan.text).toBe(201);
    expect(plan.body.amount).toBe("25.00");
    expect((await app.call("GET", `/v1/plans/${plan.body.id}`)).body.amount).toBe("25.00");
    const sub = await app.call("POST", "/v1/subscriptions", { body: { customerId, planId: plan.body.id } });
    expect(sub.status, sub.text).toBe(201);
    expect(sub.body.amount).toBe("25.00");
    expect((await app.call("GET", `/v1/subscriptions/${sub.body.id}`)).body.amount).toBe("25.00");
    const listed = (await app.call("GET", "/v1/subscriptions")).body.data as { id: string; amount: string }[];
    expect(listed.find((s) => s.id === sub.body.id)?.amount).toBe("25.00");
  });

  it("bills an invoice's total and settles it when its charge is paid", async () => {
    const lineItems = [
      { description: "Consulting hours", quantity: 2, unitAmount: "5.25" },
      { description: "Third of a widget", quantity: 3, unitAmount: "0.333333" },
    ];
    const draft = await app.call("POST", "/v1/invoices", { body: { customerId, lineItems } });
    expect(draft.status, draft.text).toBe(201);
    expect(draft.body).toMatchObject({ subtotal: "11.499999", total: "11.499999", amountDue: "11.499999" });
    const open = await app.call("POST", `/v1/invoices/${draft.body.id}/finalize`);
    expect(open.body).toMatchObject({ status: "OPEN", total: "11.499999", amountDue: "11.499999" });

    const pressed = await fetch(`${app.url}/pay/invoices/${draft.body.id}/pay`, {
      method: "POST",
      redirect: "manual",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: "",
    });
    expect(pressed.status).toBe(303);
    const chargeId = pressed.headers.get("location")!.split("/").pop()!;
    expect(await charge(chargeId)).toMatchObject({ amount: "11.499999", invoiceId: draft.body.id });

    await devnet.sees({ from: BUYER, to: await onDevnet(chargeId, 1), amount: "11.499999" });
    await devnet.confirm(now);
    const paid = (await app.call("GET", `/v1/invoices/${draft.body.id}`)).body;
    expect(paid).toMatchObject({ status: "PAID", total: "11.499999", amountPaid: "11.499999", amountDue: "0.00" });
  });
});
