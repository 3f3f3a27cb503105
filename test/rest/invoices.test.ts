// Invoices over REST and GraphQL: exact totals, the state machine with every forbidden step, numbering
// under concurrency, the hosted page's Pay, void with an open charge, the PDF's text, stats and
// isolation between merchants and modes. Paying on chain is test/chain/invoices.test.ts.
import { getAddress } from "ethers";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { reverseTransfers } from "../../src/domain/reversals.js";
import { ChainHistory } from "../helpers/ledger.js";
import { pdfText } from "../helpers/pdf.js";
import { expectError, liveChains, POLLING, SETTINGS, startApp, type TestApp } from "../helpers/harness.js";

let app: TestApp;
beforeAll(async () => {
  // The state machine and numbering tests make a few hundred invoices within a minute.
  app = await startApp({ ...POLLING, RATE_LIMIT_CREATE: "100000", RATE_LIMIT_READ: "100000", RATE_LIMIT_LIST: "100000" }, { chains: liveChains() });
}, 60_000);
afterAll(() => app?.stop());

let seq = 0;
const newCustomer = async (key = app.testKey, extra: Record<string, unknown> = {}) =>
  (await app.call("POST", "/v1/customers", { key, body: { email: `inv-${++seq}@example.com`, name: `Buyer ${seq}`, ...extra } })).body;
const LINES = [
  { description: "Consulting hours", quantity: 2, unitAmount: "5.25" },
  { description: "Third of a widget", quantity: 3, unitAmount: "0.333333" },
];
const draft = async (key = app.testKey, body: Record<string, unknown> = {}) => {
  const customer = await newCustomer(key);
  const res = await app.call("POST", "/v1/invoices", { key, body: { customerId: customer.id, lineItems: LINES, ...body } });
  expect(res.status).toBe(201);
  return res.body;
};
const get = async (id: string, key = app.testKey) => (await app.call("GET", `/v1/invoices/${id}`, { key })).body;
const step = (id: string, action: string, key = app.testKey) => app.call("POST", `/v1/invoices/${id}/${action}`, { key });
/** The hosted page's Pay, as the browser posts it (the redirect not followed). */
const pay = async (id: string) => {
  const res = await fetch(`${app.url}/pay/invoices/${id}/pay`, {
    method: "POST",
    redirect: "manual",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: "",
  });
  return { status: res.status, headers: res.headers, body: null, text: await res.text() };
};
const eventTypes = async (id: string) =>
  (await app.db.prisma.event.findMany({ where: { data: { path: ["id"], equals: id } }, orderBy: { createdAt: "asc" } })).map((e) => e.type);

describe("drafts", () => {
  it("prices lines exactly in base units, and a draft has no number, page or charge yet", async () => {
    const invoice = await draft(app.testKey, { dueDate: "2026-12-31", memo: "Thanks!", metadata: { ref: "A-1" } });
    expect(invoice).toMatchObject({
      object: "invoice",
      livemode: false,
      status: "DRAFT",
      number: null,
      currency: "USDC",
      lineItems: [
        { description: "Consulting hours", quantity: 2, unitAmount: "5.25", amount: "10.50" },
        { description: "Third of a widget", quantity: 3, unitAmount: "0.333333", amount: "0.999999" },
      ],
      subtotal: "11.499999",
      total: "11.499999",
      amountPaid: "0.00",
      amountDue: "11.499999",
      dueDate: "2026-12-31T23:59:59.999Z",
      memo: "Thanks!",
      metadata: { ref: "A-1" },
      hostedInvoiceUrl: null,
      finalizedAt: null,
    });
    expect(invoice.id).toMatch(/^inv_[0-9A-Za-z]{24}$/);
    expect(await eventTypes(invoice.id)).toEqual(["invoice.created"]);
  });

  it("refuses bad input naming the field, and creates nothing", async () => {
    const customer = await newCustomer();
    const before = await app.db.prisma.invoice.count();
    const line = LINES[0]!;
    const bad: [Record<string, unknown>, string][] = [
      [{ lineItems: LINES }, "customerId"],
      [{ customerId: customer.id }, "lineItems"],
      [{ customerId: customer.id, lineItems: [] }, "lineItems"],
      [{ customerId: customer.id, lineItems: Array.from({ length: 101 }, () => line) }, "lineItems"],
      [{ customerId: customer.id, lineItems: [{ ...line, quantity: 0 }] }, "lineItems[0].quantity"],
      [{ customerId: customer.id, lineItems: [line, { ...line, quantity: 10_001 }] }, "lineItems[1].quantity"],
      [{ customerId: customer.id, lineItems: [{ ...line, quantity: 1.5 }] }, "lineItems[0].quantity"],
      [{ customerId: customer.id, lineItems: [{ ...line, unitAmount: "0" }] }, "lineItems[0].unitAmount"],
      [{ customerId: customer.id, lineItems: [{ ...line, unitAmount: "1.0000001" }] }, "lineItems[0].unitAmount"],
      [{ customerId: customer.id, lineItems: [{ ...line, unitAmount: 5 }] }, "lineItems[0].unitAmount"],
      [{ customerId: customer.id, lineItems: [{ ...line, description: "  " }] }, "lineItems[0].description"],
      [{ customerId: customer.id, lineItems: [{ ...line, extra: 1 }] }, "lineItems[0].extra"],
      [{ customerId: customer.id, lineItems: [{ ...line, quantity: 10_000, unitAmount: "1000000" }] }, "lineItems"],
      [{ customerId: customer.id, lineItems: LINES, dueDate: "next week" }, "dueDate"],
    ];
    for (const [body, param] of bad) {
      const res = await app.call("POST", "/v1/invoices", { body });
      expect(res.status, JSON.stringify(body).slice(0, 80)).toBe(400);
      expect(res.body.param).toBe(param);
    }
    expectError(await app.call("POST", "/v1/invoices", { body: { customerId: "cus_unknown", lineItems: LINES } }), 400, "resource_missing", "customerId");
    expect(await app.db.prisma.invoice.count()).toBe(before);
  });

  it("refuses a due date in the past (create, edit, and finalizing a draft whose date has passed since), naming dueDate and changing nothing", async () => {
    const customer = await newCustomer();
    const yesterday = new Date(Date.now() - 86_400_000).toISOString().slice(0, 10);
    const today = new Date().toISOString().slice(0, 10);
    const before = await app.db.prisma.invoice.count();
    for (const dueDate of [yesterday, "2019-05-01", new Date(Date.now() - 60_000).toISOString()]) {
      const res = await app.call("POST", "/v1/invoices", { body: { customerId: customer.id, lineItems: LINES, dueDate } });
      expectError(res, 400, "parameter_invalid", "dueDate");
      expect(res.body.message).toMatch(/^Invalid dueDate: \d{4}-\d\d-\d\d is in the past/);
    }
    expect(await app.db.prisma.invoice.count()).toBe(before);
    // Today is due at the end of the day: accepted.
    const invoice = await draft(app.testKey, { dueDate: today });
    expectError(await app.call("PATCH", `/v1/invoices/${invoice.id}`, { body: { dueDate: yesterday } }), 400, "parameter_invalid", "dueDate");
    expect((await get(invoice.id)).dueDate).toBe(`${today}T23:59:59.999Z`);
    // A draft made earlier whose due date has passed since is not issued until it gets a new one.
    await app.db.prisma.invoice.update({ where: { id: invoice.id }, data: { dueDate: new Date(`${yesterday}T23:59:59.999Z`) } });
    const refused = await step(invoice.id, "finalize");
    expectError(refused, 400, "parameter_invalid", "dueDate");
    expect(refused.body.message).toBe(
      `Invoice ${invoice.id} was due ${yesterday}, which has passed: give it a dueDate of today or later (or none) before finalizing it.`,
    );
    expect(await get(invoice.id)).toMatchObject({ status: "DRAFT", number: null });
    expect((await app.call("PATCH", `/v1/invoices/${invoice.id}`, { body: { dueDate: null } })).status).toBe(200);
    expect((await step(invoice.id, "finalize")).body).toMatchObject({ status: "OPEN", dueDate: null });
  });

  it("edits a draft (lines replaced, metadata merged) and deletes it; invoice.updated and invoice.deleted", async () => {
    const invoice = await draft(app.testKey, { metadata: { a: "1", b: "2" } });
    const other = await newCustomer();
    const res = await app.call("PATCH", `/v1/invoices/${invoice.id}`, {
      body: { customerId: other.id, lineItems: [{ description: "One thing", quantity: 1, unitAmount: "7" }], memo: null, metadata: { b: null, c: "3" } },
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ customerId: other.id, total: "7.00", amountDue: "7.00", memo: null, metadata: { a: "1", c: "3" } });
    expect(res.body.lineItems).toHaveLength(1);
    const removed = await app.call("DELETE", `/v1/invoices/${invoice.id}`);
    expect(removed.body).toEqual({ id: invoice.id, object: "invoice", deleted: true });
    expectError(await app.call("GET", `/v1/invoices/${invoice.id}`), 404, "resource_missing", "id");
    expect(await eventTypes(invoice.id)).toEqual(["invoice.created", "invoice.updated", "invoice.deleted"]);
  });
});

describe("the state machine", () => {
  /** An invoice in each status, reached the way a merchant (or the chain) would. */
  async function inStatus(status: string) {
    const invoice = await draft();
    if (status === "DRAFT") return invoice;
    expect((await step(invoice.id, "finalize")).status).toBe(200);
    if (status === "UNCOLLECTIBLE") expect((await step(invoice.id, "mark_uncollectible")).status).toBe(200);
    if (status === "VOID") expect((await step(invoice.id, "void")).status).toBe(200);
    // Money confirmed on chain makes it PAID: the chain tests take that path; here its outcome.
    if (status === "PAID")
      await app.db.prisma.invoice.update({ where: { id: invoice.id }, data: { status: "PAID", amountPaid: "11499999", paidAt: new Date() } });
    return get(invoice.id);
  }

  const edit = (id: string) => app.call("PATCH", `/v1/invoices/${id}`, { body: { memo: "changed" } });
  const remove = (id: string) => app.call("DELETE", `/v1/invoices/${id}`);
  const ACTIONS: Record<string, (id: string) => Promise<{ status: number; body: any; headers: Headers }>> = {
    update: edit,
    delete: remove,
    finalize: (id) => step(id, "finalize"),
    void: (id) => step(id, "void"),
    mark_uncollectible: (id) => step(id, "mark_uncollectible"),
    pay: pay,
  };
  // What each action does from each status: the status it leaves, or the refusal. A repeat of a final
  // step (void, mark uncollectible) answers the invoice unchanged.
  const TABLE: Record<string, Record<string, string | number>> = {
    DRAFT: { update: "DRAFT", delete: "deleted", finalize: "OPEN", void: 409, mark_uncollectible: 409, pay: 404 },
    OPEN: { update: 409, delete: 409, finalize: 409, void: "VOID", mark_uncollectible: "UNCOLLECTIBLE", pay: "charge" },
    UNCOLLECTIBLE: { update: 409, delete: 409, finalize: 409, void: "VOID", mark_uncollectible: "UNCOLLECTIBLE", pay: "charge" },
    PAID: { update: 409, delete: 409, finalize: 409, void: 409, mark_uncollectible: 409, pay: 409 },
    VOID: { update: 409, delete: 409, finalize: 409, void: "VOID", mark_uncollectible: 409, pay: 409 },
  };
  const cases = Object.entries(TABLE).flatMap(([from, actions]) => Object.entries(actions).map(([action, outcome]) => [from, action, outcome] as const));

  it.each(cases)("%s + %s → %s", async (from, action, outcome) => {
    const invoice = await inStatus(from);
    const res = await ACTIONS[action]!(invoice.id);
    if (typeof outcome === "number") {
      const code = action === "pay" ? (outcome === 404 ? "resource_missing" : "invoice_not_payable") : "invoice_not_editable";
      if (action === "pay") {
        expect(res.status).toBe(outcome);
      } else {
        expectError(res, outcome, code, "id");
        expect(res.body.message).toContain(`is ${from}`);
      }
      // A refused step changes nothing.
      expect(await get(invoice.id)).toEqual(invoice);
    } else if (outcome === "deleted") {
      expect(res.status).toBe(200);
      expectError(await app.call("GET", `/v1/invoices/${invoice.id}`), 404, "resource_missing");
    } else if (outcome === "charge") {
      expect(res.status).toBe(303);
      expect(res.headers.get("location")).toMatch(/^\/pay\/chrg_/);
      expect((await get(invoice.id)).status).toBe(from);
    } else {
      expect(res.status).toBe(200);
      expect(res.body.status).toBe(outcome);
    }
  });
});

describe("numbering", () => {
  it("gives 20 concurrent finalizes the numbers 1 to 20, once each; modes and merchants count apart", async () => {
    const merchant = await app.newMerchant();
    const key = merchant.apiKeys.test.secret;
    const drafts = await Promise.all(Array.from({ length: 20 }, () => draft(key)));
    const results = await Promise.all(drafts.map((d) => step(d.id, "finalize", key)));
    expect(results.map((r) => r.status)).toEqual(Array(20).fill(200));
    const numbers = results.map((r) => r.body.number).sort();
    expect(numbers).toEqual(Array.from({ length: 20 }, (_, i) => `INV-${String(i + 1).padStart(6, "0")}`));

    // Live mode and another merchant start at 1.
    const live = await draft(merchant.apiKeys.live.secret);
    expect((await step(live.id, "finalize", merchant.apiKeys.live.secret)).body.number).toBe("INV-000001");
    const other = await app.newMerchant();
    const theirs = await draft(other.apiKeys.test.secret);
    expect((await step(theirs.id, "finalize", other.apiKeys.test.secret)).body.number).toBe("INV-000001");

    // A finalize that fails takes no number: its customer was deleted meanwhile.
    const orphan = await draft(key);
    await app.call("DELETE", `/v1/customers/${orphan.customerId}`, { key });
    expectError(await step(orphan.id, "finalize", key), 400, "parameter_missing", "customerId");
    const next = await draft(key);
    expect((await step(next.id, "finalize", key)).body.number).toBe("INV-000021");
  });

  it("freezes the customer's billing details at finalization", async () => {
    const customer = await newCustomer(app.testKey, { companyName: "Acme GmbH", taxId: "DE123456789" });
    const invoice = (await app.call("POST", "/v1/invoices", { body: { customerId: customer.id, lineItems: LINES } })).body;
    const finalized = (await step(invoice.id, "finalize")).body;
    expect(finalized.status).toBe("OPEN");
    expect(finalized.hostedInvoiceUrl).toMatch(new RegExp(`^https?://[^/]+/pay/invoices/${invoice.id}$`));
    await app.call("PATCH", `/v1/customers/${customer.id}`, { body: { companyName: "Renamed Ltd" } });
    const page = await app.call("GET", `/pay/invoices/${invoice.id}`, { key: null });
    expect(page.status).toBe(200);
    expect(page.text).toContain("Acme GmbH");
    expect(page.text).toContain("Tax ID: DE123456789");
    expect(page.text).not.toContain("Renamed Ltd");
    expect(page.headers.get("content-security-policy")).toContain("default-src 'none'");
  });
});

describe("paying from the hosted page", () => {
  it("makes one charge for what is due, with the invoice as its order, and reuses it while open", async () => {
    const invoice = await draft();
    await step(invoice.id, "finalize");
    const first = await pay(invoice.id);
    expect(first.status).toBe(303);
    const chargeId = first.headers.get("location")!.split("/").pop()!;
    const charge = (await app.call("GET", `/v1/charges/${chargeId}`)).body;
    expect(charge).toMatchObject({
      orderId: invoice.id,
      invoiceId: invoice.id,
      amount: "11.499999",
      customerId: invoice.customerId,
      status: "PENDING",
      successUrl: (await get(invoice.id)).hostedInvoiceUrl,
    });
    // A second press, or a second buyer, pays the same charge.
    const again = await Promise.all([pay(invoice.id), pay(invoice.id)]);
    expect(again.map((r) => r.headers.get("location"))).toEqual([first.headers.get("location"), first.headers.get("location")]);
    expect(await app.db.prisma.charge.count({ where: { invoiceId: invoice.id } })).toBe(1);

    const gql = await app.gql(`query($id: ID!) { charge(id: $id) { invoice { number status amountDue } } }`, { id: chargeId });
    expect(gql.data.charge.invoice).toEqual({ number: (await get(invoice.id)).number, status: "OPEN", amountDue: "11.499999" });
  });

  it("void cancels the open charge when nothing arrived, and is refused once money was paid", async () => {
    const invoice = await draft();
    await step(invoice.id, "finalize");
    const chargeId = (await pay(invoice.id)).headers.get("location")!.split("/").pop()!;
    const voided = await step(invoice.id, "void");
    expect(voided.body).toMatchObject({ status: "VOID", amountDue: "11.499999" });
    expect((await app.call("GET", `/v1/charges/${chargeId}`)).body.status).toBe("CANCELLED");
    expect(await eventTypes(chargeId)).toEqual(["charge.pending", "charge.cancelled"]);
    expect(await eventTypes(invoice.id)).toEqual(["invoice.created", "invoice.finalized", "invoice.voided"]);
    expect((await pay(invoice.id)).status).toBe(409);

    const paid = await draft();
    await step(paid.id, "finalize");
    await app.db.prisma.invoice.update({ where: { id: paid.id }, data: { amountPaid: "1000000" } });
    const refused = await step(paid.id, "void");
    expectError(refused, 409, "invoice_not_editable", "id");
    expect(refused.body.message).toContain("1.00 USDC was paid on it");
    expect((await step(paid.id, "mark_uncollectible")).body.status).toBe("UNCOLLECTIBLE");
  });

  it("is OPEN again, its number kept, when a reorg takes back the payment that paid it (invoice.updated)", async () => {
    const invoice = await draft();
    const { number } = (await step(invoice.id, "finalize")).body;
    const chargeId = (await pay(invoice.id)).headers.get("location")!.split("/").pop()!;
    // The buyer's pick of the devnet, as the hosted page makes it; the payment as the indexer records it (no node).
    const address = getAddress("0x00000000000000000000000000000000000a1e01");
    await app.db.prisma.charge.update({ where: { id: chargeId }, data: { chainId: 31337, confirmations: 1, depositAddress: address, cloneAddress: address } });
    const devnet = new ChainHistory(app, 31337);
    await devnet.sees({ from: getAddress("0x00000000000000000000000000000000000b0b02"), to: address, amount: "11.499999" });
    await devnet.confirm(new Date());
    expect(await get(invoice.id)).toMatchObject({ status: "PAID", amountPaid: "11.499999", amountDue: "0.00" });

    const payment = await app.db.prisma.chainTransfer.findFirstOrThrow({ where: { chargeId, kind: "PAYMENT" } });
    await reverseTransfers(app.db.prisma, SETTINGS, [payment.id], "test reorg");
    expect(await get(invoice.id)).toMatchObject({ status: "OPEN", number, amountPaid: "0.00", amountDue: "11.499999", paidAt: null });
    expect(await eventTypes(invoice.id)).toEqual(["invoice.created", "invoice.finalized", "invoice.paid", "invoice.updated"]);
    // Due again: the hosted page takes a payment for it.
    expect((await pay(invoice.id)).status).toBe(303);
  });
});

describe("the PDF", () => {
  it("is the same document over REST and on the hosted page, and its text carries the totals", async () => {
    const customer = await newCustomer(app.testKey, { companyName: "Acme GmbH", taxId: "DE123456789" });
    const invoice = (await app.call("POST", "/v1/invoices", { body: { customerId: customer.id, lineItems: LINES, memo: "Net 30" } })).body;
    const draftPdf = await fetch(`${app.url}/v1/invoices/${invoice.id}/pdf`, { headers: { "x-api-key": app.testKey } });
    expect(draftPdf.status).toBe(200);
    expect((await fetch(`${app.url}/pay/invoices/${invoice.id}/pdf`)).status).toBe(404);

    const { number } = (await step(invoice.id, "finalize")).body;
    const rest = await fetch(`${app.url}/v1/invoices/${invoice.id}/pdf`, { headers: { "x-api-key": app.testKey } });
    expect(rest.headers.get("content-type")).toBe("application/pdf");
    expect(rest.headers.get("content-disposition")).toBe(`inline; filename="${number}.pdf"`);
    const text = await pdfText(Buffer.from(await rest.arrayBuffer()));
    for (const expected of [number, "Acme GmbH", "Tax ID: DE123456789", "Consulting hours", "10.50", "0.999999", "11.499999", "Net 30"]) {
      expect(text).toContain(expected);
    }
    expect(text).toMatch(/Total\s+11\.499999 USDC/);
    expect(text).toMatch(/Amount due\s+11\.499999 USDC/);
    const hosted = await fetch(`${app.url}/pay/invoices/${invoice.id}/pdf`);
    expect(hosted.headers.get("content-type")).toBe("application/pdf");
    expect(await pdfText(Buffer.from(await hosted.arrayBuffer()))).toBe(text);
  });
});

describe("stats, lists and isolation", () => {
  it("invoiceCount counts a customer's invoices that are not drafts; lists filter by status and customer", async () => {
    const customer = await newCustomer();
    const make = async () => (await app.call("POST", "/v1/invoices", { body: { customerId: customer.id, lineItems: LINES } })).body;
    const [a, b] = [await make(), await make()];
    await make();
    await step(a.id, "finalize");
    await step(b.id, "finalize");
    await step(b.id, "void");
    expect((await app.call("GET", `/v1/customers/${customer.id}?expand=stats`)).body.invoiceCount).toBe(2);
    const open = (await app.call("GET", `/v1/invoices?customerId=${customer.id}&status=OPEN`)).body;
    expect(open.data.map((i: { id: string }) => i.id)).toEqual([a.id]);
    const all = (await app.call("GET", `/v1/invoices?customerId=${customer.id}&limit=2`)).body;
    expect(all.data).toHaveLength(2);
    expect(all.hasMore).toBe(true);
    const gql = await app.gql(`query($id: ID!) { customer(id: $id) { stats { invoiceCount } invoices { totalCount edges { node { id status } } } } }`, {
      id: customer.id,
    });
    expect(gql.data.customer.stats.invoiceCount).toBe(2);
    expect(gql.data.customer.invoices.totalCount).toBe(3);
  });

  it("another merchant or the other mode sees none of it", async () => {
    const invoice = await draft();
    await step(invoice.id, "finalize");
    const other = await app.newMerchant();
    for (const key of [other.apiKeys.test.secret, app.liveKey]) {
      expectError(await app.call("GET", `/v1/invoices/${invoice.id}`, { key }), 404, "resource_missing", "id");
      expectError(await app.call("PATCH", `/v1/invoices/${invoice.id}`, { key, body: { memo: "x" } }), 404, "resource_missing", "id");
      for (const action of ["finalize", "void", "mark_uncollectible"]) expectError(await step(invoice.id, action, key), 404, "resource_missing", "id");
      expectError(await app.call("GET", `/v1/invoices/${invoice.id}/pdf`, { key }), 404, "resource_missing", "id");
      expectError(await app.call("DELETE", `/v1/invoices/${invoice.id}`, { key }), 404, "resource_missing", "id");
      const list = (await app.call("GET", "/v1/invoices?limit=100", { key })).body.data as { id: string }[];
      expect(list.map((i) => i.id)).not.toContain(invoice.id);
      expect((await app.gql(`query($id: ID!) { invoice(id: $id) { id } }`, { id: invoice.id }, key)).errors?.[0]?.extensions?.code).toBe("resource_missing");
    }
    // Nor can they bill one of this merchant's customers.
    expectError(
      await app.call("POST", "/v1/invoices", { key: other.apiKeys.test.secret, body: { customerId: invoice.customerId, lineItems: LINES } }),
      400,
      "resource_missing",
      "customerId",
    );
    expect((await get(invoice.id)).status).toBe("OPEN");
  });

  it("GraphQL drafts, finalizes and voids like REST", async () => {
    const customer = await newCustomer();
    const created = await app.gql(
      `mutation($input: CreateInvoiceInput!) { createInvoice(input: $input) { id status total amountDue lineItems { amount } customer { id } } }`,
      { input: { customerId: customer.id, lineItems: LINES, dueDate: "2026-12-31" } },
    );
    expect(created.data.createInvoice).toMatchObject({ status: "DRAFT", total: "11.499999", lineItems: [{ amount: "10.50" }, { amount: "0.999999" }] });
    const id = created.data.createInvoice.id;
    const finalized = await app.gql(`mutation($id: ID!) { finalizeInvoice(id: $id) { status number hostedInvoiceUrl pdfUrl } }`, { id });
    expect(finalized.data.finalizeInvoice).toMatchObject({ status: "OPEN", number: expect.stringMatching(/^INV-\d{6}$/) });
    expect(finalized.data.finalizeInvoice.pdfUrl).toBe(`${finalized.data.finalizeInvoice.hostedInvoiceUrl}/pdf`);
    const refused = await app.gql(`mutation($id: ID!) { updateInvoice(id: $id, input: { memo: "x" }) { id } }`, { id });
    expect(refused.errors?.[0]?.extensions?.code).toBe("invoice_not_editable");
    expect((await app.gql(`mutation($id: ID!) { voidInvoice(id: $id) { status voidedAt } }`, { id })).data.voidInvoice.status).toBe("VOID");
  });
});
