// Payment links over REST and GraphQL and their page: a charge per buyer with `paymentLinkId`, the
// per-address limit, retirement with a 410 page, and isolation between merchants and modes.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectError, POLLING, startApp, type TestApp } from "../helpers/harness.js";

let app: TestApp;
beforeAll(async () => {
  app = await startApp(POLLING);
}, 60_000);
afterAll(() => app?.stop());

const create = (body: Record<string, unknown>, key = app.testKey) => app.call("POST", "/v1/payment_links", { key, body });
/** A buyer presses Pay on the link's page (from `address`, when given, through the test's forwarded-for). */
const press = async (id: string, headers: Record<string, string> = {}) => {
  const res = await fetch(`${app.url}/pay/l/${id}`, {
    method: "POST",
    redirect: "manual",
    headers: { "content-type": "application/x-www-form-urlencoded", ...headers },
    body: "",
  });
  return { status: res.status, location: res.headers.get("location"), text: await res.text(), headers: res.headers };
};
/** A browser on the link's page: it keeps the page's cookie between presses, as Pay → Back → Pay does. */
const browser = () => {
  let cookie: string | null = null;
  return async (id: string, form: Record<string, string> = {}) => {
    const res = await fetch(`${app.url}/pay/l/${id}`, {
      method: "POST",
      redirect: "manual",
      headers: { "content-type": "application/x-www-form-urlencoded", ...(cookie && { cookie }) },
      body: new URLSearchParams(form).toString(),
    });
    const set = res.headers.get("set-cookie");
    if (set) cookie = set.split(";")[0]!;
    return { status: res.status, location: res.headers.get("location"), text: await res.text(), setCookie: set };
  };
};
const chargeOf = async (location: string | null) => (await app.call("GET", `/v1/charges/${location!.split("/").pop()}`)).body;

describe("payment links", () => {
  it("creates, lists, retrieves and updates a link; its amount never changes", async () => {
    const res = await create({ name: "Coffee beans, 1 kg", amount: "24", description: "Roasted this week", metadata: { sku: "BEANS-1" } });
    expect(res.status).toBe(201);
    const link = res.body;
    expect(link).toMatchObject({
      object: "payment_link",
      livemode: false,
      name: "Coffee beans, 1 kg",
      amount: "24.00",
      description: "Roasted this week",
      active: true,
      metadata: { sku: "BEANS-1" },
    });
    expect(link.id).toMatch(/^plink_[0-9A-Za-z]{24}$/);
    expect(link.url).toMatch(new RegExp(`/pay/l/${link.id}$`));
    expect((await app.call("GET", `/v1/payment_links/${link.id}`)).body).toEqual(link);
    expect((await app.call("GET", "/v1/payment_links?limit=100")).body.data.map((l: { id: string }) => l.id)).toContain(link.id);

    const updated = await app.call("PATCH", `/v1/payment_links/${link.id}`, { body: { name: "Beans", description: null, metadata: { sku: null } } });
    expect(updated.body).toMatchObject({ name: "Beans", description: null, metadata: null, amount: "24.00" });
    expectError(await app.call("PATCH", `/v1/payment_links/${link.id}`, { body: { amount: "1.00" } }), 400, "parameter_unknown", "amount");
  });

  it("refuses bad input naming the field, and creates nothing", async () => {
    const before = await app.db.prisma.paymentLink.count();
    expectError(await create({ amount: "5" }), 400, "parameter_missing", "name");
    expectError(await create({ name: " ", amount: "5" }), 400, "parameter_invalid", "name");
    expectError(await create({ name: "x" }), 400, "parameter_missing", "amount");
    for (const amount of ["0", "-1", "1.0000001", "abc", "100000000"]) expectError(await create({ name: "x", amount }), 400, "parameter_invalid", "amount");
    expectError(await create({ name: "x", amount: 5 }), 400, "parameter_invalid", "amount");
    expectError(await create({ name: "x", amount: "5", successUrl: "javascript:alert(1)" }), 400, "parameter_invalid", "successUrl");
    expectError(await create({ name: "x", amount: "5", successUrl: "http://shop.example/ok" }, app.liveKey), 400, "parameter_invalid", "successUrl");
    expect(await app.db.prisma.paymentLink.count()).toBe(before);
  });

  it("gives five buyers five charges of the link's amount, each with paymentLinkId and its own orderId", async () => {
    const link = (
      await create({ name: "Ticket", amount: "12.50", description: "Admission", successUrl: "https://shop.example/thanks", metadata: { event: "x" } })
    ).body;
    const page = await fetch(link.url.replace(/^https?:\/\/[^/]+/, app.url));
    const html = await page.text();
    expect(page.status).toBe(200);
    for (const text of ["Ticket", "12.50 USDC", "Admission", "Test Shop"]) expect(html).toContain(text);

    const presses = await Promise.all(Array.from({ length: 5 }, () => press(link.id)));
    expect(presses.map((p) => p.status)).toEqual(Array(5).fill(303));
    const charges = await Promise.all(presses.map((p) => chargeOf(p.location)));
    expect(new Set(charges.map((c) => c.id)).size).toBe(5);
    expect(new Set(charges.map((c) => c.orderId)).size).toBe(5);
    for (const c of charges) {
      expect(c).toMatchObject({
        paymentLinkId: link.id,
        amount: "12.50",
        description: "Admission",
        successUrl: "https://shop.example/thanks",
        status: "PENDING",
        metadata: { event: "x" },
      });
      expect(c.orderId.startsWith(`${link.id}-`)).toBe(true);
    }
    const gql = await app.gql(
      `query($id: ID!) { paymentLink(id: $id) { charges { totalCount } } charge(id: $c) { paymentLink { id name } } }`.replace("$id: ID!", "$id: ID!, $c: ID!"),
      {
        id: link.id,
        c: charges[0].id,
      },
    );
    expect(gql.data).toEqual({ paymentLink: { charges: { totalCount: 5 } }, charge: { paymentLink: { id: link.id, name: "Ticket" } } });
  });

  it("lets one address start 20 payments a minute from one link, not more; other links and addresses are apart", async () => {
    const [a, b] = [(await create({ name: "A", amount: "1" })).body, (await create({ name: "B", amount: "1" })).body];
    for (let i = 0; i < 20; i++) expect((await press(a.id)).status).toBe(303);
    const refused = await press(a.id);
    expect(refused.status).toBe(429);
    expect(refused.headers.get("retry-after")).toMatch(/^\d+$/);
    expect(refused.text).toContain("<h1>Too many attempts</h1>");
    expect(await app.db.prisma.charge.count({ where: { paymentLinkId: a.id } })).toBe(20);
    expect((await press(b.id)).status).toBe(303);
  });

  it("a retired link shows a 410 page and makes no charge; reactivated, it takes payments again", async () => {
    const link = (await create({ name: "Retiring", amount: "3" })).body;
    expect((await app.call("PATCH", `/v1/payment_links/${link.id}`, { body: { active: false } })).body.active).toBe(false);
    const page = await fetch(`${app.url}/pay/l/${link.id}`);
    expect(page.status).toBe(410);
    expect(await page.text()).toContain("no longer takes payments");
    expect((await press(link.id)).status).toBe(410);
    expect(await app.db.prisma.charge.count({ where: { paymentLinkId: link.id } })).toBe(0);
    expect((await app.call("GET", "/v1/payment_links?active=false&limit=100")).body.data.map((l: { id: string }) => l.id)).toContain(link.id);
    await app.call("PATCH", `/v1/payment_links/${link.id}`, { body: { active: true } });
    expect((await press(link.id)).status).toBe(303);
    expect((await fetch(`${app.url}/pay/l/plink_${"x".repeat(24)}`)).status).toBe(404);
  });

  it("another merchant or the other mode sees none of it", async () => {
    const link = (await create({ name: "Mine", amount: "2" })).body;
    const other = await app.newMerchant();
    for (const key of [other.apiKeys.test.secret, app.liveKey]) {
      expectError(await app.call("GET", `/v1/payment_links/${link.id}`, { key }), 404, "resource_missing", "id");
      expectError(await app.call("PATCH", `/v1/payment_links/${link.id}`, { key, body: { active: false } }), 404, "resource_missing", "id");
      expect((await app.call("GET", "/v1/payment_links?limit=100", { key })).body.data.map((l: { id: string }) => l.id)).not.toContain(link.id);
      expect((await app.gql(`query($id: ID!) { paymentLink(id: $id) { id } }`, { id: link.id }, key)).errors?.[0]?.extensions?.code).toBe("resource_missing");
    }
    expect((await app.call("GET", `/v1/payment_links/${link.id}`)).body.active).toBe(true);
  });

  it("GraphQL creates and retires links like REST", async () => {
    const created = await app.gql(`mutation { createPaymentLink(input: { name: "Via GraphQL", amount: "9.99" }) { id amount url active } }`);
    expect(created.data.createPaymentLink).toMatchObject({ amount: "9.99", active: true });
    const id = created.data.createPaymentLink.id;
    const retired = await app.gql(`mutation($id: ID!) { updatePaymentLink(id: $id, input: { active: false }) { active } }`, { id });
    expect(retired.data.updatePaymentLink.active).toBe(false);
    const listed = await app.gql(`{ paymentLinks(active: false, first: 100) { edges { node { id } } } }`);
    expect(listed.data.paymentLinks.edges.map((e: { node: { id: string } }) => e.node.id)).toContain(id);
  });
});

describe("a payment link's quantity", () => {
  it("is off unless quantityMax is set; quantityMax is a whole number 2-1000 that keeps every charge within the limit", async () => {
    const plain = (await create({ name: "Plain", amount: "3" })).body;
    expect(plain.quantityMax).toBeNull();
    const before = await app.db.prisma.paymentLink.count();
    for (const quantityMax of [1, 0, 1001, 2.5, "3", true])
      expectError(await create({ name: "x", amount: "3", quantityMax }), 400, "parameter_invalid", "quantityMax");
    // 1000 × 5,000 USDC is above the 1,000,000 USDC charge limit: at most 200 here.
    const tooMuch = await create({ name: "x", amount: "5000", quantityMax: 1000 });
    expectError(tooMuch, 400, "parameter_invalid", "quantityMax");
    expect(tooMuch.body.message).toMatch(/at most 200 here/);
    expect(await app.db.prisma.paymentLink.count()).toBe(before);

    const link = (await create({ name: "Big", amount: "5000", quantityMax: 200 })).body;
    expect(link.quantityMax).toBe(200);
    expectError(await app.call("PATCH", `/v1/payment_links/${link.id}`, { body: { quantityMax: 201 } }), 400, "parameter_invalid", "quantityMax");
    expect((await app.call("PATCH", `/v1/payment_links/${link.id}`, { body: { quantityMax: null } })).body.quantityMax).toBeNull();

    const gql = await app.gql(`mutation { createPaymentLink(input: { name: "Mugs", amount: "8", quantityMax: 6 }) { id quantityMax } }`);
    expect(gql.data.createPaymentLink.quantityMax).toBe(6);
    const bad = await app.gql(`mutation { createPaymentLink(input: { name: "Mugs", amount: "8", quantityMax: 1 }) { id } }`);
    expect(bad.errors?.[0]?.extensions).toMatchObject({ code: "parameter_invalid", param: "quantityMax" });
  });

  it("lets the buyer pick 1..quantityMax on the page; the charge is amount × quantity and says so", async () => {
    const link = (await create({ name: "Mug", amount: "8.25", quantityMax: 6 })).body;
    const page = await (await fetch(`${app.url}/pay/l/${link.id}`)).text();
    expect(page).toContain("8.25 USDC each");
    expect(page).toMatch(/<input id="quantity" name="quantity" type="number" required min="1" max="6"/);
    const pay = browser();
    const paid = await pay(link.id, { quantity: "3" });
    expect(paid.status).toBe(303);
    expect(await chargeOf(paid.location)).toMatchObject({ amount: "24.75", description: "Mug × 3", paymentLinkId: link.id });
    for (const quantity of ["0", "7", "2.5", "abc", "", "-1"]) {
      const refused = await pay(link.id, { quantity });
      expect(refused.status, quantity).toBe(400);
      expect(refused.text).toContain("Choose a quantity from 1 to 6.");
    }
    expect(await app.db.prisma.charge.count({ where: { paymentLinkId: link.id } })).toBe(1);
    // A link without a quantity makes charges of its amount whatever the form says.
    const plain = (await create({ name: "Plain", amount: "3" })).body;
    expect((await chargeOf((await pay(plain.id, { quantity: "4" })).location)).amount).toBe("3.00");
  });
});

describe("one PENDING charge per buyer session", () => {
  it("Pay → Back → Pay reuses the charge the same browser made; another browser, another quantity or email, or a charge no longer PENDING makes a new one", async () => {
    const link = (await create({ name: "Scarf", amount: "20", quantityMax: 3, collectEmail: true })).body;
    const pay = browser();
    const first = await pay(link.id, { email: "ann@example.com", quantity: "1" });
    expect(first.status).toBe(303);
    expect(first.setCookie).toMatch(new RegExp(`^sg_link=[0-9A-Za-z]{32}; Path=/pay/l/${link.id}; Max-Age=86400; HttpOnly; SameSite=Lax`));
    const again = await pay(link.id, { email: "Ann@example.com ", quantity: "1" });
    expect(again.location).toBe(first.location);
    expect(await app.db.prisma.charge.count({ where: { paymentLinkId: link.id } })).toBe(1);
    // The cookie's token itself is never stored: only its hash.
    const stored = await app.db.prisma.charge.findFirstOrThrow({ where: { paymentLinkId: link.id } });
    expect(stored.linkSessionHash).toMatch(/^[0-9a-f]{64}$/);
    expect(first.setCookie).not.toContain(stored.linkSessionHash);

    const two = await pay(link.id, { email: "ann@example.com", quantity: "2" });
    expect(two.location).not.toBe(first.location);
    const otherEmail = await pay(link.id, { email: "bob@example.com", quantity: "2" });
    expect(otherEmail.location).not.toBe(two.location);
    // Back to quantity 1 and Ann's email: her first charge, still PENDING.
    expect((await pay(link.id, { email: "ann@example.com", quantity: "1" })).location).toBe(first.location);
    const elsewhere = await browser()(link.id, { email: "ann@example.com", quantity: "1" });
    expect(elsewhere.location).not.toBe(first.location);

    const firstId = first.location!.split("/").pop()!;
    expect((await app.call("DELETE", `/v1/charges/${firstId}`)).status).toBe(200);
    const afterCancel = await pay(link.id, { email: "ann@example.com", quantity: "1" });
    expect(afterCancel.location).not.toBe(first.location);
    expect(await app.db.prisma.charge.count({ where: { paymentLinkId: link.id } })).toBe(5);
  });

  it("two presses of one browser at once make one charge", async () => {
    const link = (await create({ name: "Hat", amount: "4" })).body;
    const pay = browser();
    // The first press gives the browser its cookie; its charge is cancelled so that the next ones need a new one.
    const first = await pay(link.id);
    expect((await app.call("DELETE", `/v1/charges/${first.location!.split("/").pop()}`)).status).toBe(200);
    const both = await Promise.all([pay(link.id), pay(link.id)]);
    expect(both[0].location).toBe(both[1].location);
    expect(await app.db.prisma.charge.count({ where: { paymentLinkId: link.id } })).toBe(2);
  });
});
