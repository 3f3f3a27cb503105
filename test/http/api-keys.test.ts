// API keys limited to addresses (.docs/cli.md: an API key with an `ipAllowlist` refuses
// other addresses with 401 `api_key_ip_not_allowed`), on every door that takes a key; and rolling a
// key with an overlap.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { OPERATOR } from "../../src/domain/confirmation.js";
import { ApiKeyAuthenticator, createApiKey, parseIpAllowlist, revokeApiKey, rollApiKey } from "../../src/domain/api-keys.js";
import { AppError } from "../../src/domain/errors.js";
import { expectError, POLLING, startApp, type TestApp } from "../helpers/harness.js";
import { subscribe, wsClient } from "../helpers/live.js";
import { OPERATOR as BY_OPERATOR } from "../../src/domain/security-events.js";

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
    fenced = (await createApiKey(app.db.prisma, app.merchant.merchant.id, false, ["203.0.113.0/24", "2001:db8::/32"], OPERATOR, BY_OPERATOR)).secret;
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
    const old = await createApiKey(app.db.prisma, merchantId(), false, ["127.0.0.1", "::1"], OPERATOR, BY_OPERATOR);
    const rolled = await rollApiKey(app.db.prisma, old.id, { overlapHours: 24 }, OPERATOR, { actor: BY_OPERATOR });
    expect(rolled.key).toMatchObject({ livemode: false, ipAllowlist: ["127.0.0.1", "::1"] });
    expect(rolled.key.secret).toMatch(/^sk_test_/);
    expect(rolled.previous.expiresAt.getTime() - Date.now()).toBeGreaterThan(23.9 * 3_600_000);
    expect(await status(old.secret)).toBe(200);
    expect(await status(rolled.key.secret)).toBe(200);

    // A key whose overlap ends while the lookup cache holds it stops at its end, not at the cache's.
    const short = await createApiKey(app.db.prisma, merchantId(), false, [], OPERATOR, BY_OPERATOR);
    await rollApiKey(app.db.prisma, short.id, { overlapHours: 1 }, OPERATOR, { actor: BY_OPERATOR, now: new Date(Date.now() - 3_600_000 + 300) });
    const authenticator = new ApiKeyAuthenticator(app.db.prisma, 60_000);
    expect((await authenticator.authenticate(short.secret, "127.0.0.1")).merchantId).toBe(merchantId());
    await new Promise((r) => setTimeout(r, 400));
    await expect(authenticator.authenticate(short.secret, "127.0.0.1")).rejects.toMatchObject({ code: "api_key_invalid" });
  });

  it("with no overlap stops the old key at once; a rolled or revoked key cannot be rolled; the overlap is 0-168 hours", async () => {
    const old = await createApiKey(app.db.prisma, merchantId(), false, [], OPERATOR, BY_OPERATOR);
    const rolled = await rollApiKey(app.db.prisma, old.id, { overlapHours: 0 }, OPERATOR, { actor: BY_OPERATOR });
    const authenticator = new ApiKeyAuthenticator(app.db.prisma, 0);
    await expect(authenticator.authenticate(old.secret, "127.0.0.1")).rejects.toMatchObject({ code: "api_key_invalid" });
    await expect(rollApiKey(app.db.prisma, old.id, { overlapHours: 1 }, OPERATOR, { actor: BY_OPERATOR })).rejects.toMatchObject({
      code: "parameter_invalid",
      param: "keyId",
    });
    await revokeApiKey(app.db.prisma, rolled.key.id, { actor: BY_OPERATOR });
    await expect(rollApiKey(app.db.prisma, rolled.key.id, { overlapHours: 1 }, OPERATOR, { actor: BY_OPERATOR })).rejects.toMatchObject({
      code: "parameter_invalid",
      param: "keyId",
    });
    const fresh = await createApiKey(app.db.prisma, merchantId(), false, [], OPERATOR, BY_OPERATOR);
    for (const hours of [-1, 169, 1.5, Number.NaN]) {
      await expect(rollApiKey(app.db.prisma, fresh.id, { overlapHours: hours }, OPERATOR, { actor: BY_OPERATOR })).rejects.toMatchObject({
        code: "parameter_invalid",
        param: "overlapHours",
      });
    }
    expect(await status(fresh.secret)).toBe(200);
  });

  it("twice at once makes one new key", async () => {
    const old = await createApiKey(app.db.prisma, merchantId(), false, [], OPERATOR, BY_OPERATOR);
    const keys = () => app.db.prisma.apiKey.count({ where: { merchantId: merchantId() } });
    const before = await keys();
    const results = await Promise.allSettled([
      rollApiKey(app.db.prisma, old.id, { overlapHours: 1 }, OPERATOR, { actor: BY_OPERATOR }),
      rollApiKey(app.db.prisma, old.id, { overlapHours: 1 }, OPERATOR, { actor: BY_OPERATOR }),
    ]);
    expect(results.map((r) => r.status).sort()).toEqual(["fulfilled", "rejected"]);
    expect(await keys()).toBe(before + 1);
  });
});
