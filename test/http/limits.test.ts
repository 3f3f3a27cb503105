// Callers without a key, as .docs/api.md "Idempotency and rate limits" and "CORS" set them: per
// address budgets (public REST, the hosted page, anonymous GraphQL, live streams), subscribers per
// charge, failed authentications, the customer JWT route, the key cache, and cross-origin rules.
// Each test speaks from its own addresses (X-Forwarded-For, believed with TRUST_PROXY) so counters
// shared through Redis with other test files never meet.
import { randomBytes } from "node:crypto";
import { SignJWT } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ApiKeyAuthenticator } from "../../src/domain/api-keys.js";
import { Bulkhead } from "../../src/http/bulkhead.js";
import { loadConfig } from "../../src/config.js";
import { clientAddress } from "../../src/http/callers.js";
import { EventLoopLag } from "../../src/lib/event-loop-lag.js";
import { expectError, POLLING, startApp, type TestApp } from "../helpers/harness.js";
import { liveConnections, sseSubscribe, subscribe, wsClient } from "../helpers/live.js";
import { until } from "../helpers/wait.js";

const LIMITS = {
  TRUST_PROXY: "true",
  RATE_LIMIT_PUBLIC: "120",
  RATE_LIMIT_AUTH_FAILURES: "30",
  LIVE_STREAMS_PER_IP: "10",
  LIVE_SUBSCRIBERS_PER_CHARGE: "50",
  CORS_ORIGINS: "https://dash.example",
};
let app: TestApp;
beforeAll(async () => {
  app = await startApp({ ...POLLING, ...LIMITS });
}, 60_000);
afterAll(() => app?.stop());

/** A fresh client address (IPv6 documentation prefix, random: never another test's). */
let addresses = 0;
const nextAddress = () => `2001:db8::${(++addresses).toString(16)}:${randomBytes(2).toString("hex")}`;
const from = (ip: string) => ({ "x-forwarded-for": ip });
let orders = 0;
const newCharge = async () => (await app.call("POST", "/v1/charges", { body: { orderId: `lim-${++orders}`, amount: "5" } })).body.id as string;
const SESSION = `query($id: ID!) { paymentSession(chargeId: $id) { status } }`;
const SESSION_UPDATES = `subscription($id: ID!) { paymentSessionUpdated(chargeId: $id) { status amountRemaining } }`;
const gqlFrom = async (ip: string, query: string, variables: Record<string, unknown> = {}, key: string | null = null) =>
  (await app.call("POST", "/graphql", { key, headers: from(ip), body: { query, variables } })).body;

describe("the client address", () => {
  it("is the socket's peer, or behind TRUST_PROXY proxies the X-Forwarded-For entry the outermost one appended, never one the client wrote", () => {
    // The client sent "203.0.113.66" itself; the load balancer appended the address it saw.
    const headers = { "x-forwarded-for": "203.0.113.66, 198.51.100.7" };
    expect(clientAddress(headers, "10.0.0.2", 0)).toBe("10.0.0.2");
    expect(clientAddress(headers, "10.0.0.2", 1)).toBe("198.51.100.7");
    // A CDN then a load balancer: the CDN appended the client's address, the balancer the CDN's.
    expect(clientAddress({ "x-forwarded-for": "203.0.113.66, 198.51.100.7, 192.0.2.1" }, "10.0.0.2", 2)).toBe("198.51.100.7");
    // Fewer entries than proxies: all of them came from proxies; the farthest is the client.
    expect(clientAddress({ "x-forwarded-for": "198.51.100.7" }, "10.0.0.2", 2)).toBe("198.51.100.7");
    expect(clientAddress({}, "10.0.0.2", 1)).toBe("10.0.0.2");
  });

  it("takes TRUST_PROXY as true, false or a number of proxies", () => {
    expect(loadConfig({ TRUST_PROXY: "true" }).trustProxy).toBe(1);
    expect(loadConfig({ TRUST_PROXY: "false" }).trustProxy).toBe(0);
    expect(loadConfig({ TRUST_PROXY: "2" }).trustProxy).toBe(2);
    expect(() => loadConfig({ TRUST_PROXY: "yes" })).toThrow(/TRUST_PROXY/);
  });
});

describe("requests without a key", () => {
  it("public REST and the hosted page share one budget per address: 120 a minute, then 429 with Retry-After; other addresses and keys are untouched", async () => {
    const id = await newCharge();
    const ip = nextAddress();
    const statuses: number[] = [];
    for (let i = 0; i < 60; i++) statuses.push((await app.call("GET", `/v1/public/charges/${id}`, { key: null, headers: from(ip) })).status);
    for (let i = 0; i < 60; i++) statuses.push((await fetch(`${app.url}/pay/${id}`, { headers: from(ip) })).status);
    expect(statuses.every((s) => s === 200)).toBe(true);
    const refused = await app.call("GET", `/v1/public/charges/${id}`, { key: null, headers: from(ip) });
    expectError(refused, 429, "rate_limited");
    expect(refused.body.message).toMatch(/without an API key from this address: the limit is 120 per minute/);
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
    expect((await fetch(`${app.url}/pay/${id}`, { headers: from(ip) })).status).toBe(429);
    expect((await app.call("GET", `/v1/public/charges/${id}`, { key: null, headers: from(nextAddress()) })).status).toBe(200);
    expect((await app.call("GET", `/v1/charges/${id}`, { headers: from(ip) })).status).toBe(200);
  });

  it("anonymous GraphQL spends the address's budget, one unit per root field (aliases included)", async () => {
    const id = await newCharge();
    const ip = nextAddress();
    const aliased = `query($id: ID!) { ${Array.from({ length: 15 }, (_, i) => `s${i}: paymentSession(chargeId: $id) { status }`).join(" ")} }`;
    for (let i = 0; i < 7; i++) expect((await gqlFrom(ip, aliased, { id })).errors).toBeUndefined(); // 105 units
    for (let i = 0; i < 10; i++) expect((await gqlFrom(ip, SESSION, { id })).errors).toBeUndefined(); // 115
    // 15 more do not fit: the operation fails as a whole, with the GraphQL error.
    const over = await gqlFrom(ip, aliased, { id });
    expect(over.data).toBeUndefined();
    expect(over.errors[0].extensions).toMatchObject({ code: "rate_limited", statusCode: 429 });
    // Spent: refused before the body is even read (HTTP 429, the flat error body).
    const refused = await app.call("POST", "/graphql", { key: null, headers: from(ip), body: { query: SESSION, variables: { id } } });
    expectError(refused, 429, "rate_limited");
    expect((await gqlFrom(nextAddress(), SESSION, { id })).errors).toBeUndefined();
  });

  it("at most 10 live streams per address (SSE and WebSocket together); the 11th is refused, another address is not", async () => {
    const id = await newCharge();
    const ip = nextAddress();
    const streams = Array.from({ length: 6 }, () => sseSubscribe(app.url, SESSION_UPDATES, { id }, undefined, from(ip)));
    await Promise.all(streams.map((s) => s.waitFor(1)));
    const sockets = Array.from({ length: 4 }, () => wsClient(app.url, undefined, from(ip)));
    const wsStreams = sockets.map((c) => subscribe(c, SESSION_UPDATES, { id }));
    await Promise.all(wsStreams.map((s) => s.waitFor(1)));
    try {
      const sse = sseSubscribe(app.url, SESSION_UPDATES, { id }, undefined, from(ip));
      await sse.ended(5_000);
      expect(JSON.stringify(sse.errors)).toContain("rate_limited");
      const socket = wsClient(app.url, undefined, from(ip));
      const ws = subscribe(socket, SESSION_UPDATES, { id });
      await ws.ended(5_000).catch(() => {});
      expect(socket.closes[0]?.code).toBe(4429);
      await socket.dispose();
      const elsewhere = sseSubscribe(app.url, SESSION_UPDATES, { id }, undefined, from(nextAddress()));
      await elsewhere.waitFor(1);
      elsewhere.stop();
      await liveConnections(app.url, "anonymous", 10);
      // Closing one frees its place.
      streams[0]!.stop();
      await liveConnections(app.url, "anonymous", 9);
      const again = sseSubscribe(app.url, SESSION_UPDATES, { id }, undefined, from(ip));
      await again.waitFor(1);
      again.stop();
    } finally {
      for (const s of [...streams, ...wsStreams]) s.stop();
      await Promise.all(sockets.map((c) => c.dispose()));
    }
  });

  it("a charge takes at most 50 live subscribers per process, and a change is read once however many follow it", async () => {
    const id = await newCharge();
    const subscribers = Array.from({ length: 50 }, (_, i) => sseSubscribe(app.url, SESSION_UPDATES, { id }, undefined, from(`198.51.100.${i % 5}`)));
    try {
      await Promise.all(subscribers.map((s) => s.waitFor(1)));
      const extra = sseSubscribe(app.url, SESSION_UPDATES, { id }, undefined, from(nextAddress()));
      await extra.ended(5_000);
      expect(JSON.stringify(extra.errors)).toMatch(/rate_limited.*50 live subscribers|50 live subscribers.*rate_limited/);
      // Refused when admitted, before it ran: a resolver's error would carry the field's path.
      expect(extra.errors.flat()[0]).not.toHaveProperty("path");

      // The hosted page's view reads the charge with its payments: a change costs the same reads
      // with 50 subscribers as with one.
      const readsOfChange = async (charge: string, followers: { values: any[]; waitFor(n: number): Promise<unknown> }[]) => {
        const before = app.queries.length;
        expect((await app.call("DELETE", `/v1/charges/${charge}`)).status).toBe(200);
        await Promise.all(followers.map((s) => s.waitFor(2)));
        // Every follower's second value came from the change's one reload: its reads are all in.
        expect(followers.every((s) => s.values[1].paymentSessionUpdated.status === "CANCELLED")).toBe(true);
        return app.queries.slice(before).filter((q) => /payments/.test(q)).length;
      };
      const lone = await newCharge();
      const follower = sseSubscribe(app.url, SESSION_UPDATES, { id: lone }, undefined, from(nextAddress()));
      await follower.waitFor(1);
      try {
        expect(await readsOfChange(id, subscribers)).toBe(await readsOfChange(lone, [follower]));
      } finally {
        follower.stop();
      }
    } finally {
      for (const s of subscribers) s.stop();
    }
  });
});

describe("the anonymous bulkhead", () => {
  it("lets `limit` run, `queue` wait in order, and refuses the rest at once; a place passes to the next in line", async () => {
    const bulkhead = new Bulkhead(2, 1);
    const [a, b] = [await bulkhead.enter(), await bulkhead.enter()];
    let thirdIn = false;
    const third = bulkhead.enter().then((release) => ((thirdIn = true), release));
    await expect(bulkhead.enter()).rejects.toMatchObject({ code: "rate_limited" });
    // Every promise that could settle has (a macrotask runs after all of them): the third still waits.
    await new Promise((r) => setImmediate(r));
    expect(thirdIn).toBe(false);
    a();
    a(); // twice: still one place
    const c = await third;
    expect(thirdIn).toBe(true);
    const fourth = bulkhead.enter(); // both places taken again: it waits for one
    b();
    await expect(fourth).resolves.toBeTypeOf("function");
    c();
  });

  it("refuses every anonymous request while the event loop runs later than the threshold with every anonymous place taken, and admits again once it catches up", async () => {
    const lag = new EventLoopLag();
    try {
      const bulkhead = new Bulkhead(2, 10, { lag, atMs: 10 });
      const first = await bulkhead.enter();
      // Kept: the lag is sampled by a timer in wall time; a few calm samples first.
      await new Promise((r) => setTimeout(r, 50));
      expect(() => bulkhead.refuseWhenSaturated()).not.toThrow();
      // A saturated loop: every tick runs 30 ms late for a while.
      for (let i = 0; i < 8; i++) {
        const until = performance.now() + 30;
        while (performance.now() < until);
        await new Promise((r) => setImmediate(r));
      }
      expect(lag.ms).toBeGreaterThan(10);
      // A late loop with places free (a busy machine, a process starting): still admitted.
      expect(() => bulkhead.refuseWhenSaturated()).not.toThrow();
      const second = await bulkhead.enter();
      expect(lag.ms).toBeGreaterThan(10);
      expect(() => bulkhead.refuseWhenSaturated()).toThrow(expect.objectContaining({ code: "rate_limited", headers: { "Retry-After": "1" } }));
      await expect(bulkhead.enter()).rejects.toMatchObject({ code: "rate_limited" });
      await until("the loop caught up", () => lag.ms < 10);
      second();
      first();
      const release = await bulkhead.enter();
      release();
    } finally {
      lag.stop();
    }
  });

  it("reads one late tick (a garbage collection) as no saturation", () => {
    const lag = new EventLoopLag();
    lag.stop();
    lag.observe(15);
    expect(lag.ms).toBeLessThan(10);
    for (let i = 0; i < 4; i++) lag.observe(15);
    expect(lag.ms).toBeGreaterThan(10);
  });
});

describe("failed authentication", () => {
  it("30 failures a minute from one address, then 429 for every key it sends (even a good one); a missing key is no failure", async () => {
    const ip = nextAddress();
    for (let i = 0; i < 40; i++) expectError(await app.call("GET", "/v1/customers", { key: null, headers: from(ip) }), 401, "api_key_missing");
    for (let i = 0; i < 30; i++) {
      const bad = `sk_test_${randomBytes(24).toString("hex")}`;
      expectError(await app.call("GET", "/v1/customers", { key: bad, headers: from(ip) }), 401, "api_key_invalid");
    }
    const blocked = await app.call("GET", "/v1/customers", { headers: from(ip) });
    expectError(blocked, 429, "rate_limited");
    expect(blocked.body.message).toMatch(/failed authentications from this address/);
    // GraphQL and WebSocket ask the same gate.
    const gql = await gqlFrom(ip, "{ customers(first: 1) { edges { node { id } } } }", {}, app.testKey);
    expect(JSON.stringify(gql.errors)).toContain("rate_limited");
    const socket = wsClient(app.url, app.testKey, from(ip));
    const s = subscribe(socket, SESSION_UPDATES, { id: "chrg_x" });
    await s.ended(5_000).catch(() => {});
    expect(socket.closes[0]?.code).toBe(4429);
    await socket.dispose();
    expect((await app.call("GET", "/v1/customers", { headers: from(nextAddress()) })).status).toBe(200);
  });

  it("a flood of made-up keys does not push real keys out of the cache", async () => {
    const authenticator = new ApiKeyAuthenticator(app.db.prisma, 60_000, { hits: 100, misses: 10 });
    await authenticator.authenticate(app.testKey, "127.0.0.1");
    for (let i = 0; i < 300; i++) await authenticator.authenticate(`sk_test_${randomBytes(24).toString("hex")}`, "127.0.0.1").catch(() => {});
    const before = app.queries.length;
    expect((await authenticator.authenticate(app.testKey, "127.0.0.1")).merchantId).toBe(app.merchant.merchant.id);
    expect(app.queries.length).toBe(before);
  });
});

describe("POST /v1/customers/jwt", () => {
  let jwtApp: TestApp;
  beforeAll(async () => {
    jwtApp = await startApp({ ...POLLING, ...LIMITS, RATE_LIMIT_PUBLIC: "30", RATE_LIMIT_CREATE: "20" });
  }, 60_000);
  afterAll(() => jwtApp?.stop());
  const sign = (email: string) => {
    const { id, secret } = jwtApp.merchant.jwtSecrets.test;
    return new SignJWT({ email }).setProtectedHeader({ alg: "HS256", kid: id }).setIssuedAt().setExpirationTime("10m").sign(new TextEncoder().encode(secret));
  };
  const post = async (email: string, ip: string) =>
    jwtApp.call("POST", "/v1/customers/jwt", { key: null, headers: { ...from(ip), authorization: `Bearer ${await sign(email)}` }, body: {} });

  it("is limited per address and per email, so one browser cannot spend the merchant's budget", async () => {
    // One email from many addresses: its own budget (the create limit, 20) runs out; other emails go on.
    for (let i = 0; i < 20; i++) expect((await post("jane@example.com", nextAddress())).status).toBeLessThan(300);
    expectError(await post("jane@example.com", nextAddress()), 429, "rate_limited");
    expect((await post("john@example.com", nextAddress())).status).toBe(201);
    // Many emails from one address: the address's budget (30) runs out; other addresses go on.
    const ip = nextAddress();
    for (let i = 0; i < 30; i++) expect((await post(`buyer-${i}@example.com`, ip)).status).toBe(201);
    expectError(await post("one-more@example.com", ip), 429, "rate_limited");
    expect((await post("one-more@example.com", nextAddress())).status).toBe(201);
  });
});

describe("CORS", () => {
  const preflight = (path: string, origin: string, method = "POST") =>
    fetch(`${app.url}${path}`, {
      method: "OPTIONS",
      headers: { origin, "access-control-request-method": method, "access-control-request-headers": "content-type" },
    });

  it("public endpoints answer any origin, without credentials", async () => {
    for (const path of ["/v1/public/charges/chrg_x", "/v1/public/charges/chrg_x/chain", "/v1/customers/jwt"]) {
      const res = await preflight(path, "https://shop.example");
      expect(res.status, path).toBe(204);
      expect(res.headers.get("access-control-allow-origin"), path).toBe("*");
      expect(res.headers.get("access-control-allow-credentials"), path).toBeNull();
      expect(res.headers.get("access-control-allow-methods"), path).toContain("POST");
    }
    const id = await newCharge();
    const res = await fetch(`${app.url}/v1/public/charges/${id}`, { headers: { origin: "https://shop.example" } });
    expect(res.headers.get("access-control-allow-origin")).toBe("*");
    expect(res.headers.get("access-control-expose-headers")).toContain("X-Request-Id");
  });

  it("keyed REST and /graphql answer only CORS_ORIGINS; another origin's preflight is 204 without Access-Control-Allow-Origin", async () => {
    for (const path of ["/v1/customers", "/v1/charges/chrg_x", "/graphql"]) {
      const evil = await preflight(path, "https://evil.example");
      expect(evil.status, path).toBe(204);
      expect(evil.headers.get("access-control-allow-origin"), path).toBeNull();
      const dash = await preflight(path, "https://dash.example");
      expect(dash.status, path).toBe(204);
      expect(dash.headers.get("access-control-allow-origin"), path).toBe("https://dash.example");
      expect(dash.headers.get("access-control-allow-headers"), path).toContain("X-API-Key");
      expect(dash.headers.get("vary"), path).toContain("Origin");
    }
    const gql = await fetch(`${app.url}/graphql`, {
      method: "POST",
      headers: { origin: "https://evil.example", "content-type": "application/json", "x-api-key": app.testKey },
      body: JSON.stringify({ query: "{ __typename }" }),
    });
    expect(gql.headers.get("access-control-allow-origin")).toBeNull();
    expect(gql.headers.get("access-control-allow-credentials")).toBeNull();
    const rest = await fetch(`${app.url}/v1/customers`, { headers: { origin: "https://dash.example", "x-api-key": app.testKey } });
    expect(rest.headers.get("access-control-allow-origin")).toBe("https://dash.example");
  });
});
