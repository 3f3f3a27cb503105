// Emails to buyers and customers (.docs/email.md "To buyers and customers"), driven through the public
// API and read from the outbox: the invoice (on finalization with emailInvoices, and on send), the
// receipt at completion (emailReceipts; unsubscribing stops the next one), the refund claim link (on
// send, and at creation with emailRefunds), payment links asking the buyer's email, the settings, and
// hostile names, memos and addresses. Each link in an email is opened and must work.
import { randomBytes } from "node:crypto";
import { getAddress } from "ethers";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { enqueueReceipt } from "../../src/domain/buyer-emails.js";
import { OPERATOR } from "../../src/domain/confirmation.js";
import { createUser } from "../../src/domain/users.js";
import { ChainHistory } from "../helpers/ledger.js";
import { expectError, POLLING, startApp, type TestApp } from "../helpers/harness.js";

const BASE_SEPOLIA = 84532;
const BUYER = getAddress("0x00000000000000000000000000000000000b0b02");
const FEE_WALLET = getAddress("0x00000000000000000000000000000000000fee02");
const PASSWORD = "correct horse battery";
const HOSTILE_NAME = 'Shop <b>bold</b>\r\nBcc: evil@example.com "quoted"';
const INJECTED = "buyer@example.com\r\nBcc: evil@example.com";

let app: TestApp;
let chain: ChainHistory;
let merchantId: string;
let seq = 0;
const run = randomBytes(3).toString("hex");

beforeAll(async () => {
  app = await startApp({ ...POLLING, RATE_LIMIT_CREATE: "100000" });
  chain = new ChainHistory(app, BASE_SEPOLIA);
  merchantId = app.merchant.merchant.id;
}, 60_000);
afterAll(() => app?.stop());

/** Every setting off, the merchant named plainly: each test turns on what it needs. */
beforeEach(async () => {
  await app.db.prisma.merchant.update({
    where: { id: merchantId },
    data: { name: "Test Shop", emailInvoices: false, emailReceipts: false, emailRefunds: false, supportEmail: null },
  });
});

const settings = (data: Record<string, unknown>) => app.db.prisma.merchant.update({ where: { id: merchantId }, data });
const emailsAbout = (relatedId: string) => app.db.prisma.email.findMany({ where: { relatedId }, orderBy: { createdAt: "asc" } });
const newCustomer = async (extra: Record<string, unknown> = {}) => {
  const res = await app.call("POST", "/v1/customers", { body: { email: `buyer-${++seq}-${run}@example.com`, name: `Buyer ${seq}`, ...extra } });
  expect(res.status, res.text).toBe(201);
  return res.body as { id: string; email: string };
};
/** The link as the test's server serves it (emails carry the configured PUBLIC_URL's origin). */
const local = (link: string) => {
  const u = new URL(link);
  return `${app.url}${u.pathname}${u.search}`;
};
/** The one http(s) link in the text part that goes to our own hosted pages. */
const ownLink = (text: string, path: string) => {
  const found = text.match(new RegExp(`https?://[^\\s]+${path}[^\\s]*`));
  expect(found, text).not.toBeNull();
  return found![0];
};
const attachmentsOf = (e: { attachments: unknown }) => e.attachments as { filename: string; contentType: string; content: string }[];

async function invoiceFor(customerId: string, body: Record<string, unknown> = {}) {
  const res = await app.call("POST", "/v1/invoices", {
    body: { customerId, lineItems: [{ description: "Consulting", quantity: 2, unitAmount: "5.25" }], dueDate: "2026-12-31", ...body },
  });
  expect(res.status, res.text).toBe(201);
  return res.body as { id: string };
}

/** A charge (of `customerId`, or made by `make`) whose buyer paid `amount` on Base Sepolia, confirmed: RECEIVED. */
async function paidCharge(amount: string, opts: { customerId?: string; chargeId?: string; on?: ChainHistory } = {}) {
  const history = opts.on ?? chain;
  let id = opts.chargeId;
  if (!id) {
    const res = await app.call("POST", "/v1/charges", { body: { orderId: `order-${++seq}-${run}`, amount, customerId: opts.customerId } });
    expect(res.status, res.text).toBe(201);
    id = res.body.id as string;
  }
  const address = getAddress(`0x${(0xbe000000 + ++seq).toString(16).padStart(40, "0")}`);
  await app.db.prisma.charge.update({ where: { id }, data: { chainId: history.chainId, confirmations: 1, depositAddress: address, cloneAddress: address } });
  const txHash = await history.sees({ from: BUYER, to: address, amount });
  await history.confirm(new Date());
  return { id, address, txHash, history };
}

/** Pays the charge's money out to the merchant, confirmed: COMPLETED. */
async function complete(charge: { id: string; address: string; history: ChainHistory }, amount: string) {
  await charge.history.paysOut(charge.address, amount, FEE_WALLET);
  await charge.history.confirm(new Date());
  expect((await app.call("GET", `/v1/charges/${charge.id}`)).body.status).toBe("COMPLETED");
}

describe("invoice", () => {
  it("is sent on request with its PDF, in the merchant's name, with a link that opens the invoice", async () => {
    await settings({ supportEmail: "help@shop.example" });
    const customer = await newCustomer();
    const invoice = await invoiceFor(customer.id, { memo: "Thanks <script>alert(1)</script>\r\nBcc: evil@example.com" });
    expectError(await app.call("POST", `/v1/invoices/${invoice.id}/send`), 409, "invoice_not_sendable", "id");
    const finalized = await app.call("POST", `/v1/invoices/${invoice.id}/finalize`);
    expect(finalized.status).toBe(200);
    expect(await emailsAbout(invoice.id)).toEqual([]); // emailInvoices is off

    const sent = await app.call("POST", `/v1/invoices/${invoice.id}/send`);
    expect(sent.status, sent.text).toBe(200);
    expect(sent.body).toMatchObject({ id: invoice.id, status: "OPEN" });
    const [email, ...more] = await emailsAbout(invoice.id);
    expect(more).toEqual([]);
    // A void invoice asks for nothing: not sent.
    expect((await app.call("POST", `/v1/invoices/${invoice.id}/void`)).status).toBe(200);
    expectError(await app.call("POST", `/v1/invoices/${invoice.id}/send`), 409, "invoice_not_sendable", "id");
    expect(await emailsAbout(invoice.id)).toHaveLength(1);
    const number = finalized.body.number as string;
    expect(email).toMatchObject({
      type: "invoice",
      to: customer.email,
      merchantId,
      livemode: false,
      fromName: "Test Shop",
      replyTo: "help@shop.example",
      subject: `Invoice ${number} from Test Shop: 10.50 USDC due`,
      status: "QUEUED",
      inlineLogo: false,
      headers: null, // List-Unsubscribe is for receipts only
    });
    for (const part of [email!.html, email!.text]) {
      expect(part).toContain("10.50 USDC");
      expect(part).toContain(number);
      expect(part).toContain("2026-12-31");
      expect(part).toContain(finalized.body.hostedInvoiceUrl);
    }
    // The memo is said, escaped: no script reaches the HTML.
    expect(email!.html).not.toMatch(/<script/i);
    expect(email!.html).toContain("&#60;script&#62;");
    const [pdf] = attachmentsOf(email!);
    expect(pdf).toMatchObject({ filename: `${number}.pdf`, contentType: "application/pdf" });
    expect(Buffer.from(pdf!.content, "base64").subarray(0, 5).toString()).toBe("%PDF-");

    const page = await fetch(local(ownLink(email!.text, `/invoices/${invoice.id}`)));
    expect(page.status).toBe(200);
    expect(await page.text()).toContain(number);
  });

  it("is sent at finalization when emailInvoices is on, and refused for a customer who is gone", async () => {
    await settings({ emailInvoices: true });
    const customer = await newCustomer();
    const invoice = await invoiceFor(customer.id);
    expect(await emailsAbout(invoice.id)).toEqual([]);
    expect((await app.call("POST", `/v1/invoices/${invoice.id}/finalize`)).status).toBe(200);
    expect((await emailsAbout(invoice.id)).map((e) => [e.type, e.to])).toEqual([["invoice", customer.email]]);

    // GraphQL sends it again.
    const again = await app.gql("mutation($id: ID!) { sendInvoice(id: $id) { id status } }", { id: invoice.id });
    expect(again.errors).toBeUndefined();
    expect(await emailsAbout(invoice.id)).toHaveLength(2);

    expect((await app.call("DELETE", `/v1/customers/${customer.id}`)).status).toBe(200);
    expectError(await app.call("POST", `/v1/invoices/${invoice.id}/send`), 409, "invoice_not_sendable", "id");
    const refused = await app.gql("mutation($id: ID!) { sendInvoice(id: $id) { id } }", { id: invoice.id });
    expect(refused.errors?.[0].extensions.code).toBe("invoice_not_sendable");
    expect(await emailsAbout(invoice.id)).toHaveLength(2);
  });

  it("keeps a hostile merchant name to one line in headers and escaped in the HTML", async () => {
    await settings({ name: HOSTILE_NAME });
    const customer = await newCustomer({ name: "Eve <img src=x onerror=alert(1)>" });
    const invoice = await invoiceFor(customer.id);
    await app.call("POST", `/v1/invoices/${invoice.id}/finalize`);
    expect((await app.call("POST", `/v1/invoices/${invoice.id}/send`)).status).toBe(200);
    const [email] = await emailsAbout(invoice.id);
    for (const header of [email!.subject, email!.fromName!]) {
      expect(header).not.toMatch(/[\r\n]/);
      expect(header).toContain("Shop <b>bold</b> Bcc: evil@example.com");
    }
    expect(email!.html).not.toContain("<b>bold</b>");
    expect(email!.html).toContain("&#60;b&#62;bold&#60;/b&#62;");
    expect(email!.html).not.toContain("<img src=x");
    expect(email!.to).toBe(customer.email);
  });
});

describe("receipt", () => {
  it("goes to the customer at completion with the transaction's explorer link and a one-click unsubscribe that works", async () => {
    await settings({ emailReceipts: true, supportEmail: "help@shop.example" });
    const customer = await newCustomer();
    const charge = await paidCharge("12.00", { customerId: customer.id });
    expect(await emailsAbout(charge.id)).toEqual([]); // RECEIVED is not a receipt yet
    await complete(charge, "12.00");
    const [receipt, ...more] = await emailsAbout(charge.id);
    expect(more).toEqual([]);
    const order = (await app.call("GET", `/v1/charges/${charge.id}`)).body.orderId;
    expect(receipt).toMatchObject({
      type: "receipt",
      to: customer.email,
      fromName: "Test Shop",
      replyTo: "help@shop.example",
      subject: "Your receipt from Test Shop: 12.00 USDC",
    });
    for (const part of [receipt!.html, receipt!.text]) {
      expect(part).toContain("12.00 USDC");
      expect(part).toContain(order);
      expect(part).toContain("Base Sepolia");
      expect(part).toContain(`https://sepolia.basescan.org/tx/${charge.txHash}`);
    }
    const headers = receipt!.headers as Record<string, string>;
    expect(headers["List-Unsubscribe-Post"]).toBe("List-Unsubscribe=One-Click");
    const unsubscribe = headers["List-Unsubscribe"]!.replace(/^<|>$/g, "");
    expect(receipt!.text).toContain(unsubscribe);

    // Opening the link only asks; a forged token is refused; the one-click POST records it.
    const asked = await fetch(local(unsubscribe));
    expect(asked.status).toBe(200);
    expect(await asked.text()).toContain(customer.email);
    expect(await app.db.prisma.emailSuppression.count({ where: { merchantId } })).toBe(0);
    const forged = local(unsubscribe).replace(/token=([^.]+)\.[^.]+\./, `token=$1.${Buffer.from("other@example.com").toString("base64url")}.`);
    expect((await fetch(forged, { method: "POST" })).status).toBe(404);
    const done = await fetch(local(unsubscribe), {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: "List-Unsubscribe=One-Click",
    });
    expect(done.status).toBe(200);
    expect(await app.db.prisma.emailSuppression.findMany({ where: { merchantId }, select: { email: true } })).toEqual([{ email: customer.email }]);

    // The next completed charge of that customer has no receipt.
    const next = await paidCharge("3.00", { customerId: customer.id });
    await complete(next, "3.00");
    expect(await emailsAbout(next.id)).toEqual([]);
  });

  it("names the transaction as text on a chain without an explorer", async () => {
    await settings({ emailReceipts: true });
    const customer = await newCustomer();
    const charge = await paidCharge("1.50", { customerId: customer.id, on: new ChainHistory(app, 31337) });
    await complete(charge, "1.50");
    const [receipt] = await emailsAbout(charge.id);
    expect(receipt!.text).toContain(`Transaction: ${charge.txHash}`);
    expect(receipt!.text).not.toContain("View the transaction");
    expect(receipt!.html).not.toContain("/tx/");
  });

  it("is not written with receipts off, and the completion then reads nothing of the buyer", async () => {
    const customer = await newCustomer();
    const charge = await paidCharge("4.00", { customerId: customer.id });
    app.queries.length = 0;
    await complete(charge, "4.00");
    expect(await emailsAbout(charge.id)).toEqual([]);
    // One read of the merchant's setting, and nothing about the buyer.
    expect(app.queries.filter((q) => /"email_receipts"/.test(q))).toHaveLength(1);
    expect(app.queries.filter((q) => /email_suppressions|"customers"|FROM customers/i.test(q))).toEqual([]);
  });

  it("is written with the change that completes the charge, or not at all", async () => {
    await settings({ emailReceipts: true });
    const customer = await newCustomer();
    const charge = await paidCharge("2.00", { customerId: customer.id });
    const row = await app.db.prisma.charge.findUniqueOrThrow({ where: { id: charge.id } });
    await expect(
      app.db.prisma.$transaction(async (tx) => {
        await enqueueReceipt(tx, row, app.settings);
        expect(await tx.email.count({ where: { relatedId: charge.id } })).toBe(1);
        throw new Error("rolled back");
      }),
    ).rejects.toThrow("rolled back");
    expect(await emailsAbout(charge.id)).toEqual([]);
  });
});

describe("payment links collecting the buyer's email", () => {
  it("asks for it before Pay, keeps it on the charge, and sends the receipt there", async () => {
    await settings({ emailReceipts: true });
    const made = await app.call("POST", "/v1/payment_links", { body: { name: "Coffee beans", amount: "6.00", collectEmail: true } });
    expect(made.status, made.text).toBe(201);
    expect(made.body.collectEmail).toBe(true);
    const link = made.body.id as string;
    const page = await (await fetch(local(made.body.url))).text();
    expect(page).toMatch(/<label for="email">[^<]+<\/label><br><input id="email" name="email" type="email" required/);

    const post = (body: string) =>
      fetch(local(made.body.url), { method: "POST", redirect: "manual", headers: { "content-type": "application/x-www-form-urlencoded" }, body });
    const before = await app.db.prisma.charge.count({ where: { paymentLinkId: link } });
    for (const bad of ["", "not-an-email", INJECTED]) {
      const refused = await post(new URLSearchParams({ email: bad }).toString());
      expect(refused.status, bad).toBe(400);
      expect(await refused.text()).toContain('role="alert"');
    }
    expect(await app.db.prisma.charge.count({ where: { paymentLinkId: link } })).toBe(before);

    const paid = await post(new URLSearchParams({ email: `Link-${run}@Example.com` }).toString());
    expect(paid.status).toBe(303);
    const chargeId = paid.headers.get("location")!.split("/").pop()!;
    const charge = await app.call("GET", `/v1/charges/${chargeId}`);
    expect(charge.body).toMatchObject({ paymentLinkId: link, customerEmail: `link-${run}@example.com`, customerId: null });
    const viaGraphql = await app.gql("query($id: ID!) { node(id: $id) { ... on Charge { customerEmail } } }", { id: chargeId });
    expect(viaGraphql.data.node.customerEmail).toBe(`link-${run}@example.com`);

    const paidCharge_ = await paidCharge("6.00", { chargeId });
    await complete(paidCharge_, "6.00");
    expect((await emailsAbout(chargeId)).map((e) => [e.type, e.to])).toEqual([["receipt", `link-${run}@example.com`]]);

    // Turned off, the page asks nothing and the charge keeps no email.
    const patched = await app.call("PATCH", `/v1/payment_links/${link}`, { body: { collectEmail: false } });
    expect(patched.body.collectEmail).toBe(false);
    expect(await (await fetch(local(made.body.url))).text()).not.toContain('name="email"');
    const plain = await post("");
    expect(plain.status).toBe(303);
    const plainId = plain.headers.get("location")!.split("/").pop()!;
    expect((await app.call("GET", `/v1/charges/${plainId}`)).body.customerEmail).toBeNull();
    const gql = await app.gql("query($id: ID!) { node(id: $id) { ... on PaymentLink { collectEmail } } }", { id: link });
    expect(gql.data.node.collectEmail).toBe(false);
  });
});

describe("refund claim link", () => {
  it("is sent on request to the charge's customer, its link opens the claim page, and only while it waits for an address", async () => {
    await settings({ supportEmail: "refunds@shop.example" });
    const customer = await newCustomer();
    const charge = await paidCharge("9.00", { customerId: customer.id });
    const refund = await app.call("POST", `/v1/charges/${charge.id}/refunds`, {
      body: { amount: "4.00", reason: "Broken <i>mug</i>\r\nBcc: evil@example.com" },
    });
    expect(refund.status, refund.text).toBe(201);
    expect(refund.body.status).toBe("AWAITING_ADDRESS");
    expect(await emailsAbout(refund.body.id)).toEqual([]); // emailRefunds is off

    const sent = await app.call("POST", `/v1/refunds/${refund.body.id}/send`);
    expect(sent.status, sent.text).toBe(200);
    expect(sent.body).toMatchObject({ id: refund.body.id, status: "AWAITING_ADDRESS" });
    const [email] = await emailsAbout(refund.body.id);
    expect(email).toMatchObject({
      type: "refund_claim",
      to: customer.email,
      fromName: "Test Shop",
      replyTo: "refunds@shop.example",
      subject: "Test Shop is refunding you 4.00 USDC",
    });
    expect(email!.html).toContain("Broken &#60;i&#62;mug&#60;/i&#62;");
    expect(email!.text).toContain(refund.body.claimUrl);
    const page = await fetch(local(ownLink(email!.text, `/refunds/${refund.body.id}`)));
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('name="address"');

    const viaGraphql = await app.gql("mutation($id: ID!) { sendRefundClaim(id: $id) { id status } }", { id: refund.body.id });
    expect(viaGraphql.errors).toBeUndefined();
    expect(await emailsAbout(refund.body.id)).toHaveLength(2);

    const withAddress = await app.call("POST", `/v1/charges/${charge.id}/refunds`, { body: { amount: "1.00", address: BUYER } });
    expect(withAddress.status, withAddress.text).toBe(201);
    expectError(await app.call("POST", `/v1/refunds/${withAddress.body.id}/send`), 409, "refund_not_sendable", "id");
    expect(await emailsAbout(withAddress.body.id)).toEqual([]);
  });

  it("is sent at creation when emailRefunds is on; a charge without an email gets none and cannot be sent", async () => {
    await settings({ emailRefunds: true });
    const customer = await newCustomer();
    const charge = await paidCharge("5.00", { customerId: customer.id });
    const refund = await app.call("POST", `/v1/charges/${charge.id}/refunds`, { body: { amount: "2.00" } });
    expect((await emailsAbout(refund.body.id)).map((e) => [e.type, e.to])).toEqual([["refund_claim", customer.email]]);

    const anonymous = await paidCharge("5.00");
    const unsendable = await app.call("POST", `/v1/charges/${anonymous.id}/refunds`, { body: { amount: "2.00" } });
    expect(unsendable.status).toBe(201);
    expect(await emailsAbout(unsendable.body.id)).toEqual([]);
    expectError(await app.call("POST", `/v1/refunds/${unsendable.body.id}/send`), 409, "refund_not_sendable", "id");
  });
});

describe("settings", () => {
  it("are read and changed with updateMerchantSettings; a support email with a header injection is refused naming the field", async () => {
    const user = await createUser(app.db.prisma, merchantId, { email: `owner-${run}@example.com`, password: PASSWORD }, OPERATOR);
    const signIn = await app.call("POST", "/dashboard/session", { key: null, body: { email: user.email, password: PASSWORD } });
    expect(signIn.status, signIn.text).toBe(201);
    const headers = { cookie: signIn.headers.get("set-cookie")!.split(";")[0]!, "x-csrf-token": signIn.body.csrfToken };
    const gql = async (query: string, variables?: Record<string, unknown>) =>
      (await app.call("POST", "/graphql", { key: null, body: { query, variables }, headers })).body;
    const FIELDS = "emailInvoices emailReceipts emailRefunds supportEmail";

    expect((await gql(`{ viewer { merchant { ${FIELDS} } } }`)).data.viewer.merchant).toEqual({
      emailInvoices: false,
      emailReceipts: false,
      emailRefunds: false,
      supportEmail: null,
    });
    const changed = await gql(`mutation($input: MerchantSettingsInput!) { updateMerchantSettings(input: $input) { ${FIELDS} } }`, {
      input: { emailInvoices: true, emailReceipts: true, emailRefunds: true, supportEmail: "help@shop.example" },
    });
    expect(changed.data.updateMerchantSettings).toEqual({ emailInvoices: true, emailReceipts: true, emailRefunds: true, supportEmail: "help@shop.example" });
    for (const bad of [INJECTED, "two@example.com, three@example.com", "Help <help@shop.example>", "nope"]) {
      const refused = await gql("mutation($s: String) { updateMerchantSettings(input: { supportEmail: $s }) { supportEmail } }", { s: bad });
      expect(refused.errors?.[0].extensions, bad).toMatchObject({ code: "parameter_invalid", param: "supportEmail" });
    }
    const cleared = await gql("mutation { updateMerchantSettings(input: { supportEmail: null, emailReceipts: false }) { supportEmail emailReceipts } }");
    expect(cleared.data.updateMerchantSettings).toEqual({ supportEmail: null, emailReceipts: false });
  });

  it("refuses a customer email with a header injection, naming the field, and queues nothing", async () => {
    const before = await app.db.prisma.email.count();
    expectError(await app.call("POST", "/v1/customers", { body: { email: INJECTED, name: "Eve" } }), 400, "parameter_invalid", "email");
    expect(await app.db.prisma.email.count()).toBe(before);
  });
});
