// API keys limited to addresses (.docs/cli.md: an API key with an `ipAllowlist` refuses
// other addresses with 401 `api_key_ip_not_allowed`), on every door that takes a key; and rolling a
// key with an overlap.
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { OPERATOR } from "../../src/domain/confirmation.js";
import { rollSchema } from "../../src/domain/api-key-requests.js";
import { ApiKeyAuthenticator, createApiKey, LAST_USED_PRECISION_MS, parseIpAllowlist, revokeApiKey, rollApiKey } from "../../src/domain/api-keys.js";
import { parseInput } from "../../src/domain/validation.js";
import { AppError } from "../../src/domain/errors.js";
import { createUser } from "../../src/domain/users.js";
import { expectError, POLLING, startApp, type TestApp } from "../helpers/harness.js";
import { subscribe, wsClient } from "../helpers/live.js";
import { OPERATOR_ACTOR } from "../../src/domain/security-events.js";

describe("parseIpAllowlist", () => {
  it("takes IPv4 and IPv6 addresses and CIDR ranges, normalized", () => {
    expect(parseIpAllowlist([" 203.0.113.7 ", "198.51.100.0/24", "2001:DB8::/32", "::1"])).toEqual(["203.0.113.7", "198.51.100.0/24", "2001:db8::/32", "::1"]);
    expect(parseIpAllowlist([])).toEqual([]);
  });

  it("refuses anything else with 400 parameter_invalid naming ipAllowlist", () => {
    for (const bad of ["", "example.com", "10.0.0.1/33", "::1/129", "10.0.0.1/", "10.0.0.1/8/1", "10.0.0.256", "10.0.0.1/-1", "10.0.0.0/08x"]) {
      let error: unknown;
      try {
        parseIpAllowlist([bad]);
      } catch (e) {
        error = e;
      }
      expect(error, bad).toBeInstanceOf(AppError);
      expect((error as AppError).code, bad).toBe("parameter_invalid");
      expect((error as AppError).param, bad).toBe("ipAllowlist");
    }
    expect(() => parseIpAllowlist(Array.from({ length: 51 }, (_, i) => `203.0.113.${i}`))).toThrow(/at most 50 entries/);
  });
});

describe("a key with an allowlist", () => {
  let app: TestApp;
  let fenced: string;
  beforeAll(async () => {
    app = await startApp({ ...POLLING, TRUST_PROXY: "true", RATE_LIMIT_AUTH_FAILURES: "4" });
    fenced = (await createApiKey(app.db.prisma, app.merchant.merchant.id, false, ["203.0.113.0/24", "2001:db8::/32"], OPERATOR, OPERATOR_ACTOR)).secret;
  }, 60_000);
  afterAll(() => app?.stop());
  const from = (ip: string) => ({ "x-forwarded-for": ip });

  it("works from the addresses on it (IPv4, IPv6, IPv4 as mapped IPv6) over REST and GraphQL", async () => {
    for (const ip of ["203.0.113.9", "2001:db8::5", "::ffff:203.0.113.10"]) {
      expect((await app.call("GET", "/v1/customers", { key: fenced, headers: from(ip) })).status, ip).toBe(200);
    }
    const gql = await app.call("POST", "/graphql", { key: fenced, headers: from("203.0.113.11"), body: { query: "{ customers(first: 1) { totalCount } }" } });
    expect(gql.body.errors).toBeUndefined();
  });

  it("refuses any other address with 401 api_key_ip_not_allowed on every door, and counts it as a failed authentication", async () => {
    const refused = await app.call("GET", "/v1/customers", { key: fenced, headers: from("198.51.100.1") });
    expectError(refused, 401, "api_key_ip_not_allowed");
    expect(refused.body.message).toMatch(/cannot be used from 198\.51\.100\.1/);
    // An allowed address written by the client ahead of the one the proxy appended does not help.
    const spoofed = await app.call("GET", "/v1/customers", { key: fenced, headers: from("203.0.113.9, 198.51.100.3") });
    expectError(spoofed, 401, "api_key_ip_not_allowed");
    const gql = await app.call("POST", "/graphql", { key: fenced, headers: from("198.51.100.1"), body: { query: "{ customers(first: 1) { totalCount } }" } });
    expect(gql.body.errors[0].extensions.code).toBe("api_key_ip_not_allowed");
    const socket = wsClient(app.url, fenced, from("198.51.100.1"));
    const s = subscribe(socket, `subscription { chargeEvents { type } }`);
    await s.ended(5_000).catch(() => {});
    expect(socket.closes[0]?.reason).toMatch(/api_key_ip_not_allowed|cannot be used from/);
    await socket.dispose();
    // Four failures from 198.51.100.1 this minute (the limit here): the next attempt is 429.
    expectError(await app.call("GET", "/v1/customers", { key: fenced, headers: from("198.51.100.1") }), 401, "api_key_ip_not_allowed");
    expectError(await app.call("GET", "/v1/customers", { key: fenced, headers: from("198.51.100.1") }), 429, "rate_limited");
    // Keys without a list work from anywhere.
    expect((await app.call("GET", "/v1/customers", { headers: from("198.51.100.2") })).status).toBe(200);
  });
});

describe("rolling a key", () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startApp(POLLING);
  }, 60_000);
  afterAll(() => app?.stop());
  const merchantId = () => app.merchant.merchant.id;
  const status = async (key: string) => (await app.call("GET", "/v1/customers", { key })).status;

  it("makes a new key of the same mode and allowlist; the old one works until the overlap ends, checked at each use", async () => {
    const old = await createApiKey(app.db.prisma, merchantId(), false, ["127.0.0.1", "::1"], OPERATOR, OPERATOR_ACTOR);
    const rolled = await rollApiKey(app.db.prisma, old.id, { overlapHours: 24 }, OPERATOR, { actor: OPERATOR_ACTOR });
    expect(rolled.key).toMatchObject({ livemode: false, ipAllowlist: ["127.0.0.1", "::1"] });
    expect(rolled.key.secret).toMatch(/^sk_test_/);
    expect(rolled.previous.expiresAt.getTime() - Date.now()).toBeGreaterThan(23.9 * 3_600_000);
    expect(await status(old.secret)).toBe(200);
    expect(await status(rolled.key.secret)).toBe(200);

    // A key whose overlap ends while the lookup cache holds it stops at its end, not at the cache's.
    const short = await createApiKey(app.db.prisma, merchantId(), false, [], OPERATOR, OPERATOR_ACTOR);
    const { previous } = await rollApiKey(app.db.prisma, short.id, { overlapHours: 1 }, OPERATOR, {
      actor: OPERATOR_ACTOR,
      // Its overlap ends 2 s from now: time for the first use below even on a busy host.
      now: new Date(Date.now() - 3_600_000 + 2_000),
    });
    const authenticator = new ApiKeyAuthenticator(app.db.prisma, 60_000);
    expect((await authenticator.authenticate(short.secret, "127.0.0.1")).merchantId).toBe(merchantId());
    // The clock passes the overlap's end, far inside the cache's minute (kept: what is tested is wall time passing).
    await new Promise((r) => setTimeout(r, Math.max(0, previous.expiresAt.getTime() - Date.now() + 10)));
    await expect(authenticator.authenticate(short.secret, "127.0.0.1")).rejects.toMatchObject({ code: "api_key_invalid" });
  });

  it("with no overlap stops the old key at once; a rolled or revoked key cannot be rolled; the overlap is 0-168 hours", async () => {
    const old = await createApiKey(app.db.prisma, merchantId(), false, [], OPERATOR, OPERATOR_ACTOR);
    const rolled = await rollApiKey(app.db.prisma, old.id, { overlapHours: 0 }, OPERATOR, { actor: OPERATOR_ACTOR });
    const authenticator = new ApiKeyAuthenticator(app.db.prisma, 0);
    await expect(authenticator.authenticate(old.secret, "127.0.0.1")).rejects.toMatchObject({ code: "api_key_invalid" });
    await expect(rollApiKey(app.db.prisma, old.id, { overlapHours: 1 }, OPERATOR, { actor: OPERATOR_ACTOR })).rejects.toMatchObject({
      code: "parameter_invalid",
      param: "keyId",
    });
    await revokeApiKey(app.db.prisma, rolled.key.id, { actor: OPERATOR_ACTOR });
    await expect(rollApiKey(app.db.prisma, rolled.key.id, { overlapHours: 1 }, OPERATOR, { actor: OPERATOR_ACTOR })).rejects.toMatchObject({
      code: "parameter_invalid",
      param: "keyId",
    });
    const fresh = await createApiKey(app.db.prisma, merchantId(), false, [], OPERATOR, OPERATOR_ACTOR);
    for (const hours of [-1, 169, 1.5, Number.NaN]) {
      // As the doors call it: the roll's arguments parsed first (rollSchema), then the domain.
      const roll = async () => rollApiKey(app.db.prisma, fresh.id, parseInput(rollSchema, { overlapHours: hours }), OPERATOR, { actor: OPERATOR_ACTOR });
      await expect(roll()).rejects.toMatchObject({
        code: "parameter_invalid",
        param: "overlapHours",
      });
    }
    expect(await status(fresh.secret)).toBe(200);
  });

  it("twice at once makes one new key", async () => {
    const old = await createApiKey(app.db.prisma, merchantId(), false, [], OPERATOR, OPERATOR_ACTOR);
    const keys = () => app.db.prisma.apiKey.count({ where: { merchantId: merchantId() } });
    const before = await keys();
    const results = await Promise.allSettled([
      rollApiKey(app.db.prisma, old.id, { overlapHours: 1 }, OPERATOR, { actor: OPERATOR_ACTOR }),
      rollApiKey(app.db.prisma, old.id, { overlapHours: 1 }, OPERATOR, { actor: OPERATOR_ACTOR }),
    ]);
    expect(results.map((r) => r.status).sort()).toEqual(["fulfilled", "rejected"]);
    expect(await keys()).toBe(before + 1);
  });
});

describe("a key's name and last use", () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startApp(POLLING);
  }, 60_000);
  afterAll(() => app?.stop());
  afterEach(() => void vi.useRealTimers());
  const merchantId = () => app.merchant.merchant.id;
  const lastUsed = async (id: string) => (await app.db.prisma.apiKey.findUniqueOrThrow({ where: { id } })).lastUsedAt?.getTime() ?? null;

  it("is named at creation (trimmed, at most 100 characters), and a rolled key keeps the name", async () => {
    const key = await createApiKey(app.db.prisma, merchantId(), false, [], OPERATOR, OPERATOR_ACTOR, "  Shop backend ");
    expect(key.name).toBe("Shop backend");
    expect((await rollApiKey(app.db.prisma, key.id, { overlapHours: 0 }, OPERATOR, { actor: OPERATOR_ACTOR })).key.name).toBe("Shop backend");
    expect((await createApiKey(app.db.prisma, merchantId(), false, [], OPERATOR, OPERATOR_ACTOR, "   ")).name).toBeNull();
    const keys = await app.db.prisma.apiKey.count();
    await expect(createApiKey(app.db.prisma, merchantId(), false, [], OPERATOR, OPERATOR_ACTOR, "n".repeat(101))).rejects.toMatchObject({
      code: "parameter_invalid",
      param: "name",
    });
    expect(await app.db.prisma.apiKey.count()).toBe(keys);
  });

  it("records the last use at most once a minute per key, across processes too", async () => {
    const key = await createApiKey(app.db.prisma, merchantId(), false, [], OPERATOR, OPERATOR_ACTOR);
    expect(await lastUsed(key.id)).toBeNull();
    vi.useFakeTimers({ toFake: ["Date"] });
    const t0 = Date.now();
    const authenticator = new ApiKeyAuthenticator(app.db.prisma, 5 * 60_000);
    const writes = vi.spyOn(app.db.prisma.apiKey, "updateMany");
    await authenticator.authenticate(key.secret, "127.0.0.1");
    expect(await lastUsed(key.id)).toBe(t0);
    // A minute of requests, from this process and from another (no cache: it reads the stored stamp).
    const other = new ApiKeyAuthenticator(app.db.prisma, 0);
    for (let i = 0; i < 20; i++) {
      vi.setSystemTime(t0 + i * 2_000);
      await authenticator.authenticate(key.secret, "127.0.0.1");
      await other.authenticate(key.secret, "127.0.0.1");
    }
    expect(writes).toHaveBeenCalledTimes(1);
    expect(await lastUsed(key.id)).toBe(t0);
    vi.setSystemTime(t0 + LAST_USED_PRECISION_MS + 1);
    await authenticator.authenticate(key.secret, "127.0.0.1");
    expect(await lastUsed(key.id)).toBe(t0 + LAST_USED_PRECISION_MS + 1);
    writes.mockRestore();
  });

  it("shows the name and the last use over GraphQL; createApiKey takes the name", async () => {
    const user = await createUser(app.db.prisma, merchantId(), { email: `keys-${Date.now()}@example.com`, password: "correct horse battery" }, OPERATOR);
    const signedIn = await app.call("POST", "/dashboard/session", { key: null, body: { email: user.email, password: "correct horse battery" } });
    const headers = { cookie: signedIn.headers.get("set-cookie")!.split(";")[0]!, "x-csrf-token": signedIn.body.csrfToken };
    const gql = async (query: string, variables?: Record<string, unknown>) =>
      (await app.call("POST", "/graphql", { key: null, body: { query, variables }, headers })).body;
    const made = await gql(
      `mutation ($n: String) { createApiKey(mode: TEST, name: $n, password: "correct horse battery") { secret apiKey { id name lastUsedAt } } }`,
      {
        n: "Reports",
      },
    );
    expect(made.errors).toBeUndefined();
    expect(made.data.createApiKey.apiKey).toMatchObject({ name: "Reports", lastUsedAt: null });
    expect((await app.call("GET", "/v1/customers", { key: made.data.createApiKey.secret })).status).toBe(200);
    const listed = await gql(`{ apiKeys { id name lastUsedAt } }`);
    const row = listed.data.apiKeys.find((k: { id: string }) => k.id === made.data.createApiKey.apiKey.id);
    expect(row.name).toBe("Reports");
    expect(Date.now() - Date.parse(row.lastUsedAt)).toBeLessThan(60_000);
    const long = await gql(`mutation { createApiKey(mode: TEST, name: "${"n".repeat(101)}", password: "correct horse battery") { secret } }`);
    expect(long.errors[0].extensions).toMatchObject({ code: "parameter_invalid", param: "name" });
  });
});
