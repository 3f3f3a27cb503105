import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { newId } from "../../src/domain/ids.js";
import { customerCount, expectError, startApp, type TestApp } from "../helpers/harness.js";
import { until } from "../helpers/wait.js";

let app: TestApp;
beforeAll(async () => {
  app = await startApp();
});
afterAll(() => app?.stop());

const jane = { email: "jane@example.com", name: "Jane Doe" };

describe("create and retrieve", () => {
  it("creates with 201 and every field present, nulls for unset ones", async () => {
    const res = await app.call("POST", "/v1/customers", {
      body: { ...jane, email: "full@example.com", address: { line1: "1 Main St", country: "de" }, metadata: { tier: "gold", n: 3, vip: true } },
    });
    expect(res.status).toBe(201);
    expect(res.headers.get("x-request-id")).toMatch(/^req_/);
    expect(res.body).toEqual({
      id: expect.stringMatching(/^cus_[0-9A-Za-z]{24}$/),
      object: "customer",
      livemode: false,
      email: "full@example.com",
      name: "Jane Doe",
      phone: null,
      address: { line1: "1 Main St", line2: "", city: "", state: "", postalCode: "", country: "DE" },
      companyName: null,
      taxId: null,
      description: null,
      metadata: { tier: "gold", n: 3, vip: true },
      created: expect.any(Number),
      updated: expect.any(Number),
      createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      updatedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
    });
    expect(Math.abs(res.body.created - Date.now() / 1000)).toBeLessThan(60);
    const got = await app.call("GET", `/v1/customers/${res.body.id}`);
    expect(got.status).toBe(200);
    expect(got.body).toEqual(res.body);
  });

  it("refuses a duplicate email, also differing only in case, on create and on PATCH", async () => {
    const a = await app.call("POST", "/v1/customers", { body: { ...jane, email: "Dup@Example.com" } });
    expect(a.status).toBe(201);
    expectError(await app.call("POST", "/v1/customers", { body: { ...jane, email: "dup@example.COM" } }), 409, "customer_email_exists", "email");
    const b = await app.call("POST", "/v1/customers", { body: { ...jane, email: "other@example.com" } });
    expectError(await app.call("PATCH", `/v1/customers/${b.body.id}`, { body: { email: "DUP@example.com" } }), 409, "customer_email_exists", "email");
    expect((await app.call("GET", `/v1/customers/${b.body.id}`)).body.email).toBe("other@example.com");
  });

  it("lets the same email exist in the other mode and for another merchant", async () => {
    const email = "shared@example.com";
    expect((await app.call("POST", "/v1/customers", { body: { ...jane, email } })).status).toBe(201);
    expect((await app.call("POST", "/v1/customers", { key: app.liveKey, body: { ...jane, email } })).status).toBe(201);
    const other = await app.newMerchant();
    expect((await app.call("POST", "/v1/customers", { key: other.apiKeys.test.secret, body: { ...jane, email } })).status).toBe(201);
  });
});

describe("events recorded before address parts were strings", () => {
  it('read back over REST and GraphQL with "" parts, as a new event would be', async () => {
    const customer = (await app.call("POST", "/v1/customers", { body: { ...jane, email: "old-snapshot@example.com", address: { city: "Lyon" } } })).body;
    const [created] = (await app.call("GET", `/v1/events?type=customer.created&objectId=${customer.id}`)).body.data;
    // The snapshot as the release before stored it: parts not given were null.
    const old = { ...created.data, address: { line1: null, line2: null, city: "Lyon", state: null, postalCode: null, country: null } };
    await app.db.prisma.event.update({ where: { id: created.id }, data: { data: old } });
    const address = { line1: "", line2: "", city: "Lyon", state: "", postalCode: "", country: "" };
    expect((await app.call("GET", `/v1/events/${created.id}`)).body.data.address).toEqual(address);
    const gql = await app.gql(`query($id: ID!) { node(id: $id) { ... on Event { data } } }`, { id: created.id });
    expect(gql.data.node.data.address).toEqual(address);
  });
});

describe("authentication and isolation", () => {
  const endpoints = (id: string): [string, string, unknown?][] => [
    ["POST", "/v1/customers", jane],
    ["GET", `/v1/customers/${id}`],
    ["GET", "/v1/customers"],
    ["PATCH", `/v1/customers/${id}`, { name: "X" }],
    ["DELETE", `/v1/customers/${id}`],
  ];

  it("answers 401 api_key_missing and api_key_invalid on every customer endpoint", async () => {
    const id = newId("cus");
    for (const [method, path, body] of endpoints(id)) {
      expectError(await app.call(method, path, { key: null, body }), 401, "api_key_missing");
      for (const key of ["sk_test_short", "sk_test_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", "pk_test_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", "garbage"]) {
        expectError(await app.call(method, path, { key, body }), 401, "api_key_invalid");
      }
    }
    expect(await app.db.prisma.customer.count({ where: { name: "X" } })).toBe(0);
  });

  it("rejects a revoked key", async () => {
    const m = await app.newMerchant();
    const key = m.apiKeys.test.secret;
    expect((await app.call("GET", "/v1/customers", { key })).status).toBe(200);
    await app.db.prisma.apiKey.update({ where: { id: m.apiKeys.test.id }, data: { revokedAt: new Date() } });
    // Refused once the auth cache's entry lapses (its default TTL is 5 s), not later.
    const refused = await until(
      "the revoked key to be refused",
      async () => {
        const res = await app.call("GET", "/v1/customers", { key });
        return res.status !== 200 && res;
      },
      7_000,
      100,
    );
    expectError(refused, 401, "api_key_invalid");
  });

  it("shows another merchant's or mode's customer as 404 on read, update and delete", async () => {
    const mine = await app.call("POST", "/v1/customers", { body: { ...jane, email: "iso@example.com" } });
    const other = await app.newMerchant();
    for (const key of [other.apiKeys.test.secret, other.apiKeys.live.secret, app.liveKey]) {
      expectError(await app.call("GET", `/v1/customers/${mine.body.id}`, { key }), 404, "resource_missing", "id");
      expectError(await app.call("PATCH", `/v1/customers/${mine.body.id}`, { key, body: { name: "Hacked" } }), 404, "resource_missing", "id");
      expectError(await app.call("DELETE", `/v1/customers/${mine.body.id}`, { key }), 404, "resource_missing", "id");
      const list = await app.call("GET", "/v1/customers?limit=100", { key });
      expect(list.body.data.map((c: { id: string }) => c.id)).not.toContain(mine.body.id);
    }
    expect((await app.call("GET", `/v1/customers/${mine.body.id}`)).body.name).toBe("Jane Doe");
  });
});

describe("validation", () => {
  const long = (n: number) => "x".repeat(n);
  const cases: [string, unknown, string, string | null][] = [
    ["missing email", { name: "A" }, "parameter_missing", "email"],
    ["missing name", { email: "a@b.co" }, "parameter_missing", "name"],
    ["email not a string", { email: 42, name: "A" }, "parameter_invalid", "email"],
    ["bad email", { email: "not-an-email", name: "A" }, "parameter_invalid", "email"],
    ["email with spaces", { email: "a b@c.co", name: "A" }, "parameter_invalid", "email"],
    ["email too long", { email: `${long(250)}@b.co`, name: "A" }, "parameter_invalid", "email"],
    ["empty name", { email: "a@b.co", name: "" }, "parameter_invalid", "name"],
    ["blank name", { email: "a@b.co", name: "   " }, "parameter_invalid", "name"],
    ["name too long", { email: "a@b.co", name: long(201) }, "parameter_invalid", "name"],
    ["name is a number", { email: "a@b.co", name: 7 }, "parameter_invalid", "name"],
    ["null name", { email: "a@b.co", name: null }, "parameter_invalid", "name"],
    ["phone too long", { ...jane, phone: long(51) }, "parameter_invalid", "phone"],
    ["phone is a number", { ...jane, phone: 5551234 }, "parameter_invalid", "phone"],
    ["address is a string", { ...jane, address: "1 Main St" }, "parameter_invalid", "address"],
    ["address is an array", { ...jane, address: [] }, "parameter_invalid", "address"],
    ["bad country", { ...jane, address: { country: "XX" } }, "parameter_invalid", "address.country"],
    ["three-letter country", { ...jane, address: { country: "DEU" } }, "parameter_invalid", "address.country"],
    ["unknown address field", { ...jane, address: { zip: "1" } }, "parameter_unknown", "address.zip"],
    ["address line too long", { ...jane, address: { line1: long(201) } }, "parameter_invalid", "address.line1"],
    ["companyName too long", { ...jane, companyName: long(201) }, "parameter_invalid", "companyName"],
    ["taxId too long", { ...jane, taxId: long(101) }, "parameter_invalid", "taxId"],
    ["description too long", { ...jane, description: long(1001) }, "parameter_invalid", "description"],
    ["unknown field", { ...jane, nickname: "JJ" }, "parameter_unknown", "nickname"],
    ["metadata is an array", { ...jane, metadata: ["a"] }, "parameter_invalid", "metadata"],
    ["metadata is a string", { ...jane, metadata: "a=b" }, "parameter_invalid", "metadata"],
    ["nested metadata", { ...jane, metadata: { a: { b: 1 } } }, "parameter_invalid", "metadata.a"],
    ["metadata value too long", { ...jane, metadata: { a: long(501) } }, "parameter_invalid", "metadata.a"],
    ["metadata key too long", { ...jane, metadata: { [long(41)]: "v" } }, "parameter_invalid", `metadata.${long(41)}`],
    ["metadata empty key", { ...jane, metadata: { "": "v" } }, "parameter_invalid", "metadata"],
    ["too many metadata keys", { ...jane, metadata: Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`k${i}`, i])) }, "parameter_invalid", "metadata"],
    ["body is an array", [jane], "body_invalid_json", null],
    ["body is a string", "jane", "body_invalid_json", null],
  ];

  it.each(cases)("%s → 400", async (_label, body, code, param) => {
    const before = await customerCount(app);
    expectError(await app.call("POST", "/v1/customers", { body }), 400, code, param);
    expect(await customerCount(app)).toBe(before);
  });

  it.each([
    ["non-JSON", "{email:", "application/json", "body_invalid_json"],
    ["wrong content type", JSON.stringify(jane), "text/plain", "body_invalid_json"],
    ["form encoding", "email=a%40b.co&name=A", "application/x-www-form-urlencoded", "body_invalid_json"],
    ["prototype pollution", '{"email":"p@b.co","name":"A","__proto__":{"x":1}}', "application/json", "body_invalid_json"],
    ["huge body", JSON.stringify({ ...jane, description: "x".repeat(200_000) }), "application/json", "parameter_invalid"],
  ])("%s → 400", async (_label, raw, type, code) => {
    const before = await customerCount(app);
    expectError(await app.call("POST", "/v1/customers", { raw, headers: { "content-type": type } }), 400, code, null);
    expect(await customerCount(app)).toBe(before);
  });

  it("validates PATCH the same way and changes nothing on failure", async () => {
    const c = await app.call("POST", "/v1/customers", { body: { ...jane, email: "patchval@example.com", phone: "1" } });
    for (const [body, code, param] of [
      [{ email: null }, "parameter_invalid", "email"],
      [{ name: null }, "parameter_invalid", "name"],
      [{ name: "" }, "parameter_invalid", "name"],
      [{ address: { country: "ZZ" } }, "parameter_invalid", "address.country"],
      [{ bogus: 1 }, "parameter_unknown", "bogus"],
      [{ phone: "2", metadata: { a: [1] } }, "parameter_invalid", "metadata.a"],
    ] as const) {
      expectError(await app.call("PATCH", `/v1/customers/${c.body.id}`, { body }), 400, code, param);
    }
    expect((await app.call("GET", `/v1/customers/${c.body.id}`)).body).toEqual(c.body);
  });
});

describe("PATCH semantics", () => {
  it("replaces given fields, clears with null, merges metadata, replaces the address, bumps updated", async () => {
    const c = await app.call("POST", "/v1/customers", {
      body: {
        ...jane,
        email: "patch@example.com",
        phone: "+1",
        companyName: "ACME",
        address: { line1: "1 Main", city: "Berlin", country: "DE" },
        metadata: { a: "1", b: "2" },
      },
    });
    // `updated` counts whole seconds: the clock moves on to the next one before the change.
    await until("the next second", () => Math.floor(Date.now() / 1000) > c.body.created);
    const p = await app.call("PATCH", `/v1/customers/${c.body.id}`, {
      body: { name: "Jane Roe", phone: null, address: { line1: "2 Side St", country: "fr" }, metadata: { a: null, c: 3 } },
    });
    expect(p.status).toBe(200);
    expect(p.body).toMatchObject({
      name: "Jane Roe",
      phone: null,
      companyName: "ACME",
      email: "patch@example.com",
      address: { line1: "2 Side St", line2: "", city: "", state: "", postalCode: "", country: "FR" },
      metadata: { b: "2", c: 3 },
    });
    expect(p.body.updated).toBeGreaterThan(c.body.updated);
    expect(p.body.created).toBe(c.body.created);
    const cleared = await app.call("PATCH", `/v1/customers/${c.body.id}`, { body: { metadata: null, address: null } });
    expect(cleared.body).toMatchObject({ metadata: null, address: null });
  });

  it("refuses a merge that would exceed 50 metadata keys", async () => {
    const full = Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`k${i}`, i]));
    const c = await app.call("POST", "/v1/customers", { body: { ...jane, email: "meta50@example.com", metadata: full } });
    expect(c.status).toBe(201);
    expectError(await app.call("PATCH", `/v1/customers/${c.body.id}`, { body: { metadata: { extra: 1 } } }), 400, "parameter_invalid", "metadata");
    expect((await app.call("PATCH", `/v1/customers/${c.body.id}`, { body: { metadata: { k0: null, extra: 1 } } })).status).toBe(200);
  });

  it("keeps concurrent metadata patches", async () => {
    const c = await app.call("POST", "/v1/customers", { body: { ...jane, email: "conc-meta@example.com" } });
    await Promise.all(Array.from({ length: 10 }, (_, i) => app.call("PATCH", `/v1/customers/${c.body.id}`, { body: { metadata: { [`k${i}`]: i } } })));
    expect(Object.keys((await app.call("GET", `/v1/customers/${c.body.id}`)).body.metadata)).toHaveLength(10);
  });
});

describe("list", () => {
  let m: { key: string; ids: string[] };
  beforeAll(async () => {
    const merchant = await app.newMerchant();
    const key = merchant.apiKeys.test.secret;
    const ids: string[] = [];
    for (let i = 0; i < 25; i++) {
      const body = { email: `user${i}@list.example`, name: i % 5 === 0 ? `Percent 100%_${i}` : `User ${i}`, companyName: i === 7 ? "Globex" : undefined };
      ids.push((await app.call("POST", "/v1/customers", { key, body })).body.id);
    }
    m = { key, ids: ids.reverse() }; // newest first
  });

  it("pages newest first with limit, startingAfter and endingBefore", async () => {
    const first = await app.call("GET", "/v1/customers", { key: m.key });
    expect(first.body).toMatchObject({ object: "list", hasMore: true });
    expect(first.body.data.map((c: any) => c.id)).toEqual(m.ids.slice(0, 10));
    const next = await app.call("GET", `/v1/customers?limit=10&startingAfter=${m.ids[9]}`, { key: m.key });
    expect(next.body.data.map((c: any) => c.id)).toEqual(m.ids.slice(10, 20));
    const last = await app.call("GET", `/v1/customers?limit=10&startingAfter=${m.ids[19]}`, { key: m.key });
    expect(last.body.data.map((c: any) => c.id)).toEqual(m.ids.slice(20));
    expect(last.body.hasMore).toBe(false);
    const back = await app.call("GET", `/v1/customers?limit=5&endingBefore=${m.ids[10]}`, { key: m.key });
    expect(back.body.data.map((c: any) => c.id)).toEqual(m.ids.slice(5, 10));
    expect(back.body.hasMore).toBe(true);
    const all = await app.call("GET", "/v1/customers?limit=100", { key: m.key });
    expect(all.body.data).toHaveLength(25);
  });

  it("filters by exact email case-insensitively and searches substrings literally", async () => {
    const byEmail = await app.call("GET", "/v1/customers?email=USER3@LIST.EXAMPLE", { key: m.key });
    expect(byEmail.body.data.map((c: any) => c.email)).toEqual(["user3@list.example"]);
    const partial = await app.call("GET", "/v1/customers?email=user3", { key: m.key });
    expect(partial.body.data).toEqual([]);
    const search = await app.call("GET", "/v1/customers?query=GLOBEX", { key: m.key });
    expect(search.body.data.map((c: any) => c.email)).toEqual(["user7@list.example"]);
    const literal = await app.call("GET", `/v1/customers?limit=100&query=${encodeURIComponent("100%_")}`, { key: m.key });
    expect(literal.body.data).toHaveLength(5);
    const underscore = await app.call("GET", "/v1/customers?limit=100&query=_", { key: m.key });
    expect(underscore.body.data).toHaveLength(5);
  });

  it.each([
    ["limit=0", "parameter_invalid", "limit"],
    ["limit=101", "parameter_invalid", "limit"],
    ["limit=abc", "parameter_invalid", "limit"],
    ["limit=1.5", "parameter_invalid", "limit"],
    ["limit=1&limit=2", "parameter_invalid", "limit"],
    ["sort=name", "parameter_unknown", "sort"],
    [`startingAfter=cus_${"x".repeat(24)}`, "resource_missing", "startingAfter"],
    ["startingAfter=cus_a&endingBefore=cus_b", "parameter_invalid", "endingBefore"],
    [`query=${"q".repeat(101)}`, "parameter_invalid", "query"],
  ])("?%s → 400", async (qs, code, param) => {
    expectError(await app.call("GET", `/v1/customers?${qs}`, { key: m.key }), 400, code, param);
  });
});

describe("expand=stats and delete", () => {
  it("counts charges and invoices, sums completed charges exactly, and nulls links on delete", async () => {
    const c = await app.call("POST", "/v1/customers", { body: { ...jane, email: "stats@example.com" } });
    const { merchantId } = { merchantId: app.merchant.merchant.id };
    const charge = (amount: bigint, status: "COMPLETED" | "PENDING" | "EXPIRED", received: bigint | null) => ({
      id: newId("chrg"),
      merchantId,
      livemode: false,
      customerId: c.body.id,
      orderId: newId("inv"),
      amount,
      amountReceived: received === null ? null : received.toString(),
      status,
      feeBps: 100,
      settlementWallet: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8",
      expiresAt: new Date(Date.now() + 60_000),
    });
    // 0.1 + 0.2 and friends: a float sum would not be exact.
    await app.db.prisma.charge.createMany({
      data: [
        charge(100_000n, "COMPLETED", 100_000n),
        charge(200_000n, "COMPLETED", 200_000n),
        charge(1n, "COMPLETED", 1n),
        charge(5_000_000n, "PENDING", null),
        charge(7n, "EXPIRED", null),
      ],
    });
    // Drafts are not counted: two issued invoices and one draft count 2.
    const statuses = ["OPEN", "PAID", "DRAFT"] as const;
    await app.db.prisma.invoice.createMany({
      data: statuses.map((status) => ({ id: newId("inv"), merchantId, livemode: false, customerId: c.body.id, status })),
    });

    const got = await app.call("GET", `/v1/customers/${c.body.id}?expand=stats`);
    expect(got.body).toMatchObject({ invoiceCount: 2, chargeCount: 5, totalSpent: "0.300001" });
    expect((await app.call("GET", `/v1/customers/${c.body.id}`)).body).not.toHaveProperty("chargeCount");
    expectError(await app.call("GET", `/v1/customers/${c.body.id}?expand=charges`), 400, "parameter_invalid", "expand");
    expectError(await app.call("GET", `/v1/customers/${c.body.id}?include=stats`), 400, "parameter_unknown", "include");

    const del = await app.call("DELETE", `/v1/customers/${c.body.id}`);
    expect(del.status).toBe(200);
    expect(del.body).toEqual({ id: c.body.id, object: "customer", deleted: true });
    expect(await app.db.prisma.charge.count({ where: { merchantId, customerId: null, orderId: { startsWith: "inv_" } } })).toBe(5);
    expect(await app.db.prisma.invoice.count({ where: { merchantId, customerId: null } })).toBe(3);
    expectError(await app.call("GET", `/v1/customers/${c.body.id}`), 404, "resource_missing", "id");
    expectError(await app.call("DELETE", `/v1/customers/${c.body.id}`), 404, "resource_missing", "id");
  });

  it("reports zero stats as 0 and 0.00", async () => {
    const c = await app.call("POST", "/v1/customers", { body: { ...jane, email: "nostats@example.com" } });
    expect((await app.call("GET", `/v1/customers/${c.body.id}?expand=stats`)).body).toMatchObject({ invoiceCount: 0, chargeCount: 0, totalSpent: "0.00" });
  });
});

describe("plumbing", () => {
  it("answers unknown routes with the error body", async () => {
    expectError(await app.call("GET", "/v1/nope"), 404, "resource_missing", null);
  });

  it("reports health and readiness", async () => {
    expect((await app.call("GET", "/healthz", { key: null })).body).toEqual({ status: "ok" });
    expect((await app.call("GET", "/readyz", { key: null })).body).toMatchObject({ status: "ok", database: "ok" });
  });

  it("sends rate-limit headers", async () => {
    const res = await app.call("GET", "/v1/customers");
    expect(res.headers.get("ratelimit-limit")).toBe("60");
    expect(Number(res.headers.get("ratelimit-remaining"))).toBeLessThan(60);
  });
});
