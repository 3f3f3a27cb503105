// /v1/emails (.docs/email.md "The emails API"): the outbox as the key's merchant and mode see it,
// filtered by recipient, type and status, paged by cursor; never another merchant's nor the
// operator's emails; bad filters refused naming the parameter.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Email, Stablegate, StablegateError } from "../../src/sdk/index.js";
import { expectError, startApp, type TestApp } from "../helpers/harness.js";
import { writeEmail } from "../helpers/email-rows.js";

let app: TestApp;
beforeAll(async () => {
  app = await startApp();
});
afterAll(() => app?.stop());

const ids = (res: { body: { data: { id: string }[] } }) => res.body.data.map((e) => e.id);

describe("/v1/emails", () => {
  it("shows an email exactly as the API describes it", async () => {
    const id = await writeEmail(app.db.prisma, app.merchant.merchant.id, {
      type: "invoice",
      to: "Ada@Example.com",
      subject: "Invoice INV-1",
      heading: "Invoice INV-1",
      paragraphs: ["Amount due: 12.00 USDC"],
      relatedId: "inv_123",
      status: "FAILED",
      attempts: 3,
      lastError: "550 5.1.1 mailbox unavailable",
    });
    const res = await app.call("GET", `/v1/emails/${id}`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      id,
      object: "email",
      livemode: false,
      type: "invoice",
      to: "ada@example.com",
      subject: "Invoice INV-1",
      status: "failed",
      relatedId: "inv_123",
      attempts: 3,
      lastError: "550 5.1.1 mailbox unavailable",
      text: expect.stringContaining("Amount due: 12.00 USDC"),
      createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT.*Z$/),
      sentAt: null,
    });
    const sent = await writeEmail(app.db.prisma, app.merchant.merchant.id, { status: "SENT", attempts: 1 });
    expect((await app.call("GET", `/v1/emails/${sent}`)).body).toMatchObject({ status: "sent", attempts: 1, sentAt: expect.any(String) });
  });

  it("lists newest first in pages, by cursor both ways", async () => {
    const merchant = await app.newMerchant();
    const key = merchant.apiKeys.test.secret;
    for (let i = 0; i < 5; i++) await writeEmail(app.db.prisma, merchant.merchant.id, { to: `p${i}@example.com` });
    const stored = await app.db.prisma.email.findMany({
      where: { merchantId: merchant.merchant.id },
      orderBy: [{ createdAt: "desc" }, { id: "desc" }],
      select: { id: true },
    });
    const order = stored.map((e) => e.id);
    const first = await app.call("GET", "/v1/emails?limit=2", { key });
    expect(first.body).toMatchObject({ object: "list", hasMore: true });
    expect(ids(first)).toEqual(order.slice(0, 2));
    const second = await app.call("GET", `/v1/emails?limit=2&startingAfter=${order[1]}`, { key });
    expect(ids(second)).toEqual(order.slice(2, 4));
    const last = await app.call("GET", `/v1/emails?limit=2&startingAfter=${order[3]}`, { key });
    expect(last.body).toMatchObject({ hasMore: false });
    expect(ids(last)).toEqual(order.slice(4));
    const back = await app.call("GET", `/v1/emails?limit=2&endingBefore=${order[4]}`, { key });
    expect(ids(back)).toEqual(order.slice(2, 4));
  });

  it("filters by recipient (any case, the whole address), type and status", async () => {
    const merchant = await app.newMerchant();
    const key = merchant.apiKeys.test.secret;
    const m = merchant.merchant.id;
    const toAda = await writeEmail(app.db.prisma, m, { to: "ada@example.com", type: "invoice", status: "HELD" });
    const reset = await writeEmail(app.db.prisma, m, { to: "ops@example.com", type: "password_reset", status: "SENT" });
    const receipt = await writeEmail(app.db.prisma, m, { to: "ada@example.com", type: "receipt" });
    const list = async (query: string) => ids(await app.call("GET", `/v1/emails?${query}`, { key })).sort();
    expect(await list("to=ADA%40Example.COM")).toEqual([toAda, receipt].sort());
    expect(await list("to=ada")).toEqual([]);
    expect(await list("type=password_reset")).toEqual([reset]);
    expect(await list("status=held")).toEqual([toAda]);
    expect(await list("status=queued")).toEqual([receipt]);
    expect(await list("to=ada%40example.com&type=invoice")).toEqual([toAda]);
  });

  it("never shows another merchant's emails, the other mode's, or the operator's", async () => {
    const other = await app.newMerchant();
    const theirs = await writeEmail(app.db.prisma, other.merchant.id, { to: "theirs@example.com" });
    const live = await writeEmail(app.db.prisma, app.merchant.merchant.id, { to: "live@example.com", livemode: true });
    const operator = await writeEmail(app.db.prisma, null, { to: "alerts@example.com", type: "alert" });
    for (const id of [theirs, live, operator]) expectError(await app.call("GET", `/v1/emails/${id}`), 404, "resource_missing", "id");
    const all = ids(await app.call("GET", "/v1/emails?limit=100"));
    for (const id of [theirs, live, operator]) expect(all).not.toContain(id);
    // The live key sees its live email, and only that.
    expect(ids(await app.call("GET", "/v1/emails?limit=100", { key: app.liveKey }))).toEqual([live]);
    // Another merchant's email is no cursor either.
    expectError(await app.call("GET", `/v1/emails?startingAfter=${theirs}`), 400, "resource_missing", "startingAfter");
  });

  it("answers 404 for an unknown email and refuses bad filters, naming them", async () => {
    expectError(await app.call("GET", "/v1/emails/eml_doesnotexist000000000000"), 404, "resource_missing", "id");
    expectError(await app.call("GET", "/v1/emails?type=newsletter"), 400, "parameter_invalid", "type");
    expectError(await app.call("GET", "/v1/emails?status=SENT"), 400, "parameter_invalid", "status");
    expectError(await app.call("GET", "/v1/emails?limit=101"), 400, "parameter_invalid", "limit");
    expectError(await app.call("GET", "/v1/emails?from=a%40b.c"), 400, "parameter_unknown", "from");
    expectError(await app.call("GET", "/v1/emails", { key: null }), 401, "api_key_missing");
  });
});

describe("the SDK", () => {
  it("lists (every page when iterated, with filters) and retrieves emails", async () => {
    const merchant = await app.newMerchant();
    const sdk = new Stablegate({ apiKey: merchant.apiKeys.test.secret, baseUrl: app.url });
    const made: string[] = [];
    for (let i = 0; i < 3; i++) made.push(await writeEmail(app.db.prisma, merchant.merchant.id, { type: i === 0 ? "invoice" : "receipt" }));
    const seen: Email[] = [];
    for await (const e of sdk.emails.list({ limit: 1 })) seen.push(e);
    expect(seen.map((e) => e.id).sort()).toEqual([...made].sort());
    const invoices = await sdk.emails.list({ type: "invoice" });
    expect(invoices.data.map((e) => e.id)).toEqual([made[0]]);
    const one = await sdk.emails.retrieve(made[0]!);
    expect(one).toEqual(seen.find((e) => e.id === made[0]));
    expect(one.status satisfies "queued" | "sent" | "failed" | "held").toBe("queued");
    const missing = await sdk.emails.retrieve("eml_doesnotexist000000000000").catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(StablegateError);
    expect(missing).toMatchObject({ status: 404, code: "resource_missing" });
  });
});
