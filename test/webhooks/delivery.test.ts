// Webhook delivery end to end: real changes through the API, the dispatcher, and receivers on
// 127.0.0.1 that verify every request with the official `standardwebhooks` package.
import http from "node:http";
import https from "node:https";
import { pino } from "pino";
import { Webhook } from "standardwebhooks";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { loadConfig } from "../../src/config.js";
import { openDatabase } from "../../src/db/client.js";
import { onQueuedDeliveries, recordEvents } from "../../src/domain/events.js";
import { parseInput } from "../../src/domain/validation.js";
import { createSchema } from "../../src/domain/webhook-endpoint-requests.js";
import { createWebhookEndpoint, rotateWebhookSecret } from "../../src/domain/webhook-endpoints.js";
import { type DeliveryResult, type DispatcherOptions, type Dispatcher, startWebhookDispatcher } from "../../src/jobs/webhook-dispatcher.js";
import { onWebhooksDue } from "../../src/realtime/doorbell.js";
import { openRealtime } from "../../src/realtime/index.js";
import { RETRY_DELAYS_MS } from "../../src/webhooks/schedule.js";
import { webhookHeaders } from "../../src/webhooks/signature.js";
import { waitFor } from "../helpers/chain.js";
import { expectError, POLLING, startApp, type TestApp } from "../helpers/harness.js";
import { type Receiver, startReceiver } from "../helpers/receiver.js";
import { OPERATOR_ACTOR } from "../../src/domain/security-events.js";

let app: TestApp;
const logger = pino({ level: "silent" });
const dispatchers: Dispatcher[] = [];
const receivers: Receiver[] = [];

beforeAll(async () => {
  app = await startApp(POLLING);
});
afterEach(async () => {
  await Promise.all(dispatchers.splice(0).map((d) => d.stop()));
  await Promise.all(receivers.splice(0).map((r) => r.close()));
});
afterAll(async () => {
  await app?.stop();
});

/** How often the dispatchers read their clock: at each claim, at a delivery's start and end, at a lease renewal while busy. */
let clockReads = 0;

function dispatch(options: DispatcherOptions = {}): Dispatcher {
  const clock = options.now ?? (() => new Date());
  const d = startWebhookDispatcher(app.db.prisma, logger, { intervalMs: 20, ...options, now: () => (clockReads++, clock()) });
  dispatchers.push(d);
  return d;
}

/**
 * Resolves once the clock was read twice more per dispatcher: at least one claim began after
 * everything so far was committed. For "nothing more is sent" (settled() also waits for that claim).
 */
async function nextClaims(): Promise<void> {
  const before = clockReads;
  await waitFor("the dispatchers' next claims", async () => clockReads >= before + 2 * dispatchers.length);
}

/** Lets the dispatchers claim again, then stops them (waiting for what they sent): the receiver has all it will get. */
async function settled(): Promise<void> {
  await nextClaims();
  await Promise.all(dispatchers.splice(0).map((d) => d.stop()));
}

/** A fresh merchant with a test-mode endpoint pointing at a fresh receiver. */
async function shop(eventTypes?: string[]) {
  const merchant = await app.newMerchant();
  const receiver = await startReceiver();
  receivers.push(receiver);
  const { endpoint, secret } = await createWebhookEndpoint(
    app.db.prisma,
    { merchantId: merchant.merchant.id, livemode: false },
    parseInput(createSchema, { url: receiver.url, events: eventTypes }),
    OPERATOR_ACTOR,
  );
  const key = merchant.apiKeys.test.secret;
  const call = (method: string, path: string, body?: unknown) => app.call(method, path, { key, body });
  return { merchant, receiver, endpoint, secret, key, call };
}

const verify = (secret: string, r: { body: string; headers: Record<string, string> }) =>
  new Webhook(secret).verify(r.body, r.headers) as { id: string; type: string };
const delivery = (eventId: string) => app.db.prisma.webhookDelivery.findFirstOrThrow({ where: { eventId } });

describe("delivery", () => {
  it("reports every customer and charge change, signed so that the official verifier accepts it and only it", async () => {
    const { receiver, secret, call } = await shop();
    dispatch();
    const customer = (await call("POST", "/v1/customers", { email: "hook@example.com", name: "Hook" })).body;
    await call("PATCH", `/v1/customers/${customer.id}`, { name: "Hooked" });
    const charge = (await call("POST", "/v1/charges", { orderId: "hook-1", amount: "12.50", customerId: customer.id })).body;
    await call("DELETE", `/v1/charges/${charge.id}`);
    await call("DELETE", `/v1/customers/${customer.id}`);
    const got = await receiver.waitForCount(5);
    await settled();
    expect(got).toHaveLength(5);

    const events = got.map((r) => verify(secret, r));
    expect(events.map((e) => e.type).sort()).toEqual(["charge.cancelled", "charge.pending", "customer.created", "customer.deleted", "customer.updated"]);
    for (const [i, r] of got.entries()) {
      expect(r.headers["webhook-id"]).toBe(events[i]!.id);
      expect(r.headers["content-type"]).toBe("application/json");
      // The body is the event exactly as the API shows it.
      const shown = (await call("GET", `/v1/events/${events[i]!.id}`)).body;
      const { deliveries, ...event } = shown;
      expect(JSON.parse(r.body)).toEqual(event);
      expect(deliveries).toEqual([expect.objectContaining({ status: "succeeded", attempts: [expect.objectContaining({ statusCode: 200, succeeded: true })] })]);
    }
    const byType = Object.fromEntries(events.map((e) => [e.type, e as unknown as { data: Record<string, unknown> }]));
    expect(byType["charge.pending"]!.data).toMatchObject({ id: charge.id, status: "PENDING", amount: "12.50" });
    expect(byType["charge.cancelled"]!.data).toMatchObject({ id: charge.id, status: "CANCELLED" });
    expect(byType["customer.updated"]!.data).toMatchObject({ id: customer.id, name: "Hooked" });
    expect(byType["customer.deleted"]!.data).toMatchObject({ id: customer.id, deleted: true, email: "hook@example.com" });

    const sample = got[0]!;
    expect(() => verify(secret, { ...sample, body: sample.body.replace("livemode", "livemodf") })).toThrow();
    expect(() => verify("whsec_" + Buffer.alloc(32, 7).toString("base64"), sample)).toThrow();
    const stale = Math.floor(Date.now() / 1000) - 600;
    expect(() => verify(secret, { body: sample.body, headers: webhookHeaders(sample.headers["webhook-id"]!, stale, sample.body, [secret]) })).toThrow(
      /timestamp/i,
    );
    expect(() =>
      verify(secret, { body: sample.body, headers: webhookHeaders(sample.headers["webhook-id"]!, Math.floor(Date.now() / 1000), sample.body, [secret]) }),
    ).not.toThrow();
  });

  it("sends what this process commits at once, not at its next look for due deliveries", async () => {
    const { merchant, receiver, call } = await shop();
    const before = clockReads;
    // An interval no test outlasts: only the doorbell of the commit can start the claim.
    dispatch({ intervalMs: 600_000 });
    await waitFor("the dispatcher's first claim", async () => clockReads > before);
    // A statement on the root client and a transaction (the API's two ways of committing events).
    await call("POST", "/v1/customers", { email: "bell@example.com", name: "Bell" });
    await app.db.prisma.$transaction((tx) =>
      recordEvents(tx, [{ scope: { merchantId: merchant.merchant.id, livemode: false }, type: "customer.updated", data: { id: "cus_bell" } }]),
    );
    const got = await receiver.waitForCount(2, 10_000);
    expect(got.map((r) => (JSON.parse(r.body) as { type: string }).type).sort()).toEqual(["customer.created", "customer.updated"]);
  });

  it("rings the doorbell only after a commit that queued deliveries, whichever way it was written", async () => {
    let rings = 0;
    const stop = onQueuedDeliveries(app.db.prisma, () => rings++);
    try {
      const lonely = await app.newMerchant();
      const key = lonely.apiKeys.test.secret;
      expect((await app.call("POST", "/v1/customers", { key, body: { email: "alone@example.com", name: "Alone" } })).status).toBe(201);
      expect((await app.call("POST", "/v1/charges", { key, body: { orderId: "alone", amount: "5.00" } })).status).toBe(201);
      expect(rings).toBe(0);
      const { merchant, receiver, call } = await shop();
      await call("POST", "/v1/customers", { email: "ring@example.com", name: "Ring" });
      expect(rings).toBe(1);
      await call("POST", "/v1/charges", { orderId: "ring", amount: "5.00" });
      expect(rings).toBe(2);
      await app.db.prisma.$transaction((tx) =>
        recordEvents(tx, [{ scope: { merchantId: merchant.merchant.id, livemode: false }, type: "customer.updated", data: { id: "cus_ring" } }]),
      );
      expect(rings).toBe(3);
      // Delivered, so that no later test's dispatcher finds them.
      dispatch();
      await receiver.waitForCount(3);
      await settled();
    } finally {
      stop();
    }
  });

  it.runIf(process.env.REDIS_URL && process.env.DATABASE_URL)(
    "sends at once what another process commits, when they share Redis: the committing process rings",
    async () => {
      const { receiver, call } = await shop();
      // A worker of its own: its database pool (the API's commits never reach its announcer) and its Redis connections.
      const workerDb = await openDatabase({ url: app.databaseUrl! });
      const worker = openRealtime(loadConfig({ NODE_ENV: "test", REDIS_URL: process.env.REDIS_URL }), logger, { subscribe: true });
      let reads = 0;
      const d = startWebhookDispatcher(workerDb.prisma, logger, {
        // An interval no test outlasts: only a ring can start the claim.
        intervalMs: 600_000,
        now: () => (reads++, new Date()),
        doorbell: (ring) => onWebhooksDue(worker.pubsub, ring),
      });
      try {
        await waitFor("the worker's first claim", async () => reads > 0);
        await worker.pubsub.confirmed();
        await call("POST", "/v1/customers", { email: "far-bell@example.com", name: "Far bell" });
        const [got] = await receiver.waitForCount(1, 10_000);
        expect((JSON.parse(got!.body) as { type: string }).type).toBe("customer.created");
      } finally {
        await d.stop();
        await worker.pubsub.close();
        await workerDb.close();
      }
    },
  );

  it("retries a failing receiver at the scheduled delays with the same webhook-id until it succeeds", async () => {
    const { receiver, call } = await shop();
    let clock = new Date(Date.now() + 1000);
    dispatch({ now: () => clock });
    let calls = 0;
    receiver.respond((_r, res) => void res.writeHead(++calls <= 3 ? 500 : 200).end());
    await call("POST", "/v1/customers", { email: "retry@example.com", name: "Retry" });

    const first = await receiver.waitForCount(1);
    const eventId = first[0]!.headers["webhook-id"]!;
    for (let failures = 1; failures <= 3; failures++) {
      const row = await waitFor("the failure to be recorded", async () => {
        const d = await delivery(eventId);
        return d.attempts === failures ? d : undefined;
      });
      expect(row.status).toBe("PENDING");
      const delay = row.nextAttemptAt.getTime() - clock.getTime();
      const scheduled = RETRY_DELAYS_MS[failures - 1]!;
      expect(delay).toBeGreaterThanOrEqual(scheduled * 0.9);
      expect(delay).toBeLessThanOrEqual(scheduled * 1.1);
      // Not a moment early.
      clock = new Date(row.nextAttemptAt.getTime() - 1);
      await nextClaims();
      expect(receiver.received).toHaveLength(failures);
      clock = row.nextAttemptAt;
      await receiver.waitForCount(failures + 1);
    }
    await waitFor("success to be recorded", async () => (await delivery(eventId)).status === "SUCCEEDED");
    expect(receiver.received).toHaveLength(4);
    expect(new Set(receiver.received.map((r) => r.headers["webhook-id"]))).toEqual(new Set([eventId]));
    expect(new Set(receiver.received.map((r) => r.body)).size).toBe(1);
    const shown = (await call("GET", `/v1/events/${eventId}`)).body;
    expect(shown.deliveries[0].attempts.map((a: { statusCode: number }) => a.statusCode)).toEqual([500, 500, 500, 200]);
    expect(shown.deliveries[0]).toMatchObject({ status: "succeeded", nextAttemptAt: null });
  });

  it("gives up after the last scheduled retry and marks the delivery failed", async () => {
    const { receiver, call } = await shop();
    let clock = new Date(Date.now() + 1000);
    const results: DeliveryResult[] = [];
    dispatch({ now: () => clock, onResult: (r) => results.push(r) });
    receiver.respond((_r, res) => void res.writeHead(503).end());
    await call("POST", "/v1/customers", { email: "never@example.com", name: "Never" });
    const eventId = (await receiver.waitForCount(1))[0]!.headers["webhook-id"]!;
    for (let n = 1; n <= RETRY_DELAYS_MS.length; n++) {
      const row = await waitFor("the failure", async () => {
        const d = await delivery(eventId);
        return d.attempts === n ? d : undefined;
      });
      clock = row.nextAttemptAt;
      await receiver.waitForCount(n + 1);
    }
    const final = await waitFor("the delivery to fail", async () => {
      const d = await delivery(eventId);
      return d.status === "FAILED" ? d : undefined;
    });
    expect(final.attempts).toBe(RETRY_DELAYS_MS.length + 1);
    // What /metrics counts: each failed attempt that will be retried, then the one that gives up.
    expect(results).toEqual([...RETRY_DELAYS_MS.map(() => "retrying"), "failed"]);
    clock = new Date(clock.getTime() + 30 * 86_400_000);
    await settled();
    expect(receiver.received).toHaveLength(RETRY_DELAYS_MS.length + 1);
  });

  it("disables the endpoint when the receiver answers 410 Gone", async () => {
    const { receiver, endpoint, call } = await shop();
    const results: DeliveryResult[] = [];
    dispatch({ onResult: (r) => results.push(r) });
    receiver.respond((_r, res) => void res.writeHead(410).end());
    await call("POST", "/v1/customers", { email: "gone@example.com", name: "Gone" });
    const eventId = (await receiver.waitForCount(1))[0]!.headers["webhook-id"]!;
    await waitFor(
      "the endpoint to be disabled",
      async () => (await app.db.prisma.webhookEndpoint.findUniqueOrThrow({ where: { id: endpoint.id } })).disabledAt !== null,
    );
    expect((await delivery(eventId)).status).toBe("FAILED");
    expect(results).toEqual(["gone"]);
    // The security history has it, done by the service itself (no user, no address).
    const changes = await app.db.prisma.securityEvent.findMany({
      where: { type: "webhook_endpoint_changed", detail: { path: ["endpointId"], equals: endpoint.id } },
      orderBy: { createdAt: "asc" },
    });
    expect(changes.map((e) => (e.detail as { action: string }).action)).toEqual(["created", "disabled"]);
    expect(changes[1]).toMatchObject({ userId: null, ip: null, detail: { action: "disabled", reason: "gone", url: endpoint.url } });
    await call("POST", "/v1/customers", { email: "gone2@example.com", name: "Gone again" });
    await settled();
    expect(receiver.received).toHaveLength(1);
  });

  it("keeps the status and the first 2 KB of each response body with the attempt, and shows them over REST and GraphQL", async () => {
    const { receiver, call, key } = await shop();
    dispatch();
    // 2047 ASCII bytes then "é" (2 bytes) across the 2 KB edge, then 60 KB more: none of the tail is kept.
    const long = `${"x".repeat(2047)}é${"y".repeat(60_000)}`;
    receiver.respond((_r, res) => void res.writeHead(422, { "content-type": "text/plain; charset=utf-8" }).end(long));
    await call("POST", "/v1/customers", { email: "body@example.com", name: "Body" });
    const eventId = (await receiver.waitForCount(1))[0]!.headers["webhook-id"]!;
    await waitFor("the attempt", async () => ((await delivery(eventId)).attempts === 1 ? true : undefined));
    const [attempt] = (await call("GET", `/v1/events/${eventId}`)).body.deliveries[0].attempts;
    expect(attempt).toMatchObject({ statusCode: 422, succeeded: false });
    // The half of "é" inside the 2 KB is left out rather than stored broken.
    expect(attempt.responseBody).toBe("x".repeat(2047));
    const row = await app.db.prisma.webhookAttempt.findFirstOrThrow({ where: { eventId } });
    expect(Buffer.byteLength(row.responseBody!)).toBeLessThanOrEqual(2048);

    receiver.respond((_r, res) => void res.writeHead(200).end("thanks\u0000!"));
    await call("POST", "/v1/customers", { email: "body2@example.com", name: "Body two" });
    const second = (await receiver.waitForCount(2))[1]!.headers["webhook-id"]!;
    await waitFor("the second attempt", async () => ((await delivery(second)).status === "SUCCEEDED" ? true : undefined));
    const gql = await app.gql(
      `query ($id: ID!) { node(id: $id) { ... on Event { deliveries { attempts { statusCode responseBody } } } } }`,
      { id: second },
      key,
    );
    expect(gql.errors).toBeUndefined();
    expect(gql.data.node.deliveries[0].attempts).toEqual([{ statusCode: 200, responseBody: "thanks!" }]);
  });

  it("in production keeps only the status of a non-public address's answer (a test endpoint must not read internal services)", async () => {
    const { receiver, call } = await shop();
    dispatch({ keepPrivateResponses: false });
    receiver.respond((_r, res) => void res.writeHead(403).end("internal admin page"));
    await call("POST", "/v1/customers", { email: "private@example.com", name: "Private" });
    const eventId = (await receiver.waitForCount(1))[0]!.headers["webhook-id"]!;
    await waitFor("the attempt", async () => ((await delivery(eventId)).attempts === 1 ? true : undefined));
    const [attempt] = (await call("GET", `/v1/events/${eventId}`)).body.deliveries[0].attempts;
    expect(attempt).toMatchObject({ statusCode: 403, succeeded: false, responseBody: null });
  });

  it("counts a redirect as a failure and does not follow it", async () => {
    const { receiver, call } = await shop();
    const elsewhere = await startReceiver();
    receivers.push(elsewhere);
    dispatch();
    receiver.respond((_r, res) => void res.writeHead(302, { location: elsewhere.url }).end());
    await call("POST", "/v1/customers", { email: "moved@example.com", name: "Moved" });
    const eventId = (await receiver.waitForCount(1))[0]!.headers["webhook-id"]!;
    const row = await waitFor("the failure", async () => {
      const d = await delivery(eventId);
      return d.attempts === 1 ? d : undefined;
    });
    expect(row.status).toBe("PENDING");
    const [attempt] = (await call("GET", `/v1/events/${eventId}`)).body.deliveries[0].attempts;
    expect(attempt).toMatchObject({ statusCode: 302, succeeded: false });
    expect(attempt.error).toMatch(/redirect/);
    expect(elsewhere.received).toHaveLength(0);
  });

  it("cuts a receiver that does not answer at 15 s and schedules a retry", async () => {
    const { receiver, call } = await shop();
    dispatch();
    receiver.respond(() => {});
    await call("POST", "/v1/customers", { email: "slow@example.com", name: "Slow" });
    const eventId = (await receiver.waitForCount(1))[0]!.headers["webhook-id"]!;
    const row = await waitFor(
      "the timeout",
      async () => {
        const d = await delivery(eventId);
        return d.attempts === 1 ? d : undefined;
      },
      25_000,
    );
    expect(row.status).toBe("PENDING");
    const [attempt] = (await call("GET", `/v1/events/${eventId}`)).body.deliveries[0].attempts;
    expect(attempt).toMatchObject({ statusCode: null, succeeded: false, error: "no answer within 15 s" });
    expect(attempt.latencyMs).toBeGreaterThanOrEqual(15_000);
    expect(attempt.latencyMs).toBeLessThan(16_500);
  }, 40_000);

  it("does not let a receiver that hangs hold up the others", async () => {
    const stuck = await shop();
    const fine = await shop();
    dispatch({ concurrency: 20, perEndpoint: 5 });
    stuck.receiver.respond(() => {});
    const event = (merchantId: string, n: number) =>
      Array.from({ length: n }, (_, i) => ({ scope: { merchantId, livemode: false }, type: "customer.updated" as const, data: { i } }));
    await app.db.prisma.$transaction((tx) => recordEvents(tx, event(stuck.merchant.merchant.id, 40)));
    await stuck.receiver.waitForCount(5);
    await app.db.prisma.$transaction((tx) => recordEvents(tx, event(fine.merchant.merchant.id, 30)));
    await fine.receiver.waitForCount(30, 5_000);
    expect(stuck.receiver.received).toHaveLength(5);
    // Cut the hanging requests so the dispatcher stops at once.
    await stuck.receiver.close();
  });

  it("signs with both secrets during a rotation's overlap, and only the new one after", async () => {
    const { receiver, endpoint, secret: old, call } = await shop();
    dispatch();
    const scope = { merchantId: endpoint.merchantId, livemode: false };
    const rotated = await rotateWebhookSecret(app.db.prisma, scope, endpoint.id, { overlapHours: 24 }, OPERATOR_ACTOR);
    await call("POST", "/v1/customers", { email: "rot@example.com", name: "Rot" });
    const [during] = await receiver.waitForCount(1);
    expect(during!.headers["webhook-signature"]!.split(" ")).toHaveLength(2);
    expect(() => verify(old, during!)).not.toThrow();
    expect(() => verify(rotated.secret, during!)).not.toThrow();

    const again = await rotateWebhookSecret(app.db.prisma, scope, endpoint.id, { overlapHours: 0 }, OPERATOR_ACTOR);
    await call("POST", "/v1/customers", { email: "rot2@example.com", name: "Rot 2" });
    const after = (await receiver.waitForCount(2))[1]!;
    expect(() => verify(again.secret, after)).not.toThrow();
    expect(() => verify(rotated.secret, after)).toThrow();
  });

  it("sends an endpoint only the event types it asked for", async () => {
    const { receiver, call } = await shop(["charge.cancelled"]);
    dispatch();
    const charge = (await call("POST", "/v1/charges", { orderId: "only-cancel", amount: "5" })).body;
    await call("DELETE", `/v1/charges/${charge.id}`);
    await receiver.waitForCount(1);
    await settled();
    expect(receiver.received.map((r) => JSON.parse(r.body).type)).toEqual(["charge.cancelled"]);
  });

  it("leaves no event and no delivery behind a change that rolled back", async () => {
    const { merchant, call } = await shop();
    const counts = async () => [await app.db.prisma.event.count(), await app.db.prisma.webhookDelivery.count()];
    await call("POST", "/v1/customers", { email: "dup@example.com", name: "Dup" });
    const before = await counts();
    expectError(await call("POST", "/v1/customers", { email: "DUP@example.com", name: "Dup again" }), 409, "customer_email_exists", "email");
    await expect(
      app.db.prisma.$transaction(async (tx) => {
        await recordEvents(tx, [{ scope: { merchantId: merchant.merchant.id, livemode: false }, type: "customer.updated", data: { id: "cus_x" } }]);
        throw new Error("the change failed after its event was written");
      }),
    ).rejects.toThrow(/failed after/);
    expect(await counts()).toEqual(before);
  });

  it("never has two dispatchers send one delivery at once, and each is sent once", async () => {
    const { merchant, receiver } = await shop();
    const inFlight = new Map<string, number>();
    let overlaps = 0;
    receiver.respond((r, res) => {
      const id = r.headers["webhook-id"]!;
      inFlight.set(id, (inFlight.get(id) ?? 0) + 1);
      if (inFlight.get(id)! > 1) overlaps++;
      setTimeout(() => {
        inFlight.set(id, inFlight.get(id)! - 1);
        res.writeHead(204).end();
      }, 10);
    });
    const scope = { merchantId: merchant.merchant.id, livemode: false };
    await app.db.prisma.$transaction((tx) =>
      recordEvents(
        tx,
        Array.from({ length: 300 }, (_, i) => ({ scope, type: "customer.updated" as const, data: { i } })),
      ),
    );
    dispatch({ concurrency: 40 });
    dispatch({ concurrency: 40 });
    await receiver.waitForCount(300, 30_000);
    await waitFor(
      "all deliveries recorded",
      async () => (await app.db.prisma.webhookDelivery.count({ where: { endpoint: { merchantId: scope.merchantId }, status: "SUCCEEDED" } })) === 300,
    );
    await settled();
    expect(overlaps).toBe(0);
    expect(receiver.received).toHaveLength(300);
    expect(new Set(receiver.received.map((r) => r.headers["webhook-id"])).size).toBe(300);
  });

  it("in live mode, checks the address again at delivery and sends nothing to a private one", async () => {
    const merchant = await app.newMerchant();
    const publicDns = async () => [{ address: "93.184.215.14", family: 4 }];
    const { endpoint } = await createWebhookEndpoint(
      app.db.prisma,
      { merchantId: merchant.merchant.id, livemode: true },
      { url: "https://hooks.example.com/stablegate", events: [] },
      OPERATOR_ACTOR,
      publicDns,
    );
    const sends = [vi.spyOn(https, "request"), vi.spyOn(http, "request")];
    try {
      // The name now points inside the network (DNS rebinding): refused before any connection.
      dispatch({ resolve: async () => [{ address: "127.0.0.1", family: 4 }] });
      const live = merchant.apiKeys.live.secret;
      await app.call("POST", "/v1/customers", { key: live, body: { email: "live@example.com", name: "Live" } });
      const row = await waitFor("the refused attempt", async () => {
        const d = await app.db.prisma.webhookDelivery.findFirst({ where: { endpointId: endpoint.id } });
        return d && d.attempts === 1 ? d : undefined;
      });
      const shown = (await app.call("GET", `/v1/events/${row.eventId}`, { key: live })).body;
      expect(shown.deliveries[0].attempts[0]).toMatchObject({ statusCode: null, succeeded: false });
      expect(shown.deliveries[0].attempts[0].error).toMatch(/not sent: hooks.example.com resolves to 127.0.0.1/);
      // The spies see every request of the process: other tests' deliveries still being retried go to
      // their own receivers; none may go to this endpoint.
      for (const s of sends) expect(s.mock.calls.filter(([url]) => new URL(String(url)).hostname === "hooks.example.com")).toEqual([]);
    } finally {
      for (const s of sends) s.mockRestore();
    }
  });

  it("refuses to save a live endpoint on a private address, with the reason", async () => {
    const merchant = await app.newMerchant();
    for (const url of ["https://127.0.0.1/x", "https://10.0.0.1/x", "https://[::1]/x", "https://169.254.169.254/x", "http://hooks.example.com/x"]) {
      const error = await createWebhookEndpoint(
        app.db.prisma,
        { merchantId: merchant.merchant.id, livemode: true },
        { url, events: [] },
        OPERATOR_ACTOR,
        async () => [{ address: "93.184.215.14", family: 4 }],
      ).catch((e) => e);
      expect(error).toMatchObject({ code: "parameter_invalid", param: "url" });
    }
    const local = await createWebhookEndpoint(
      app.db.prisma,
      { merchantId: merchant.merchant.id, livemode: true },
      { url: "https://intranet.example/x", events: [] },
      OPERATOR_ACTOR,
      async () => [{ address: "192.168.1.5", family: 4 }],
    ).catch((e) => e);
    expect(local.message).toMatch(/intranet.example resolves to 192.168.1.5/);
    expect(await app.db.prisma.webhookEndpoint.count({ where: { merchantId: merchant.merchant.id } })).toBe(0);
  });
});

describe("the events API", () => {
  it("lists events newest first, filters by type, pages with startingAfter, and keeps merchants and modes apart", async () => {
    const { call, key } = await shop();
    for (let i = 0; i < 3; i++) await call("POST", "/v1/charges", { orderId: `list-${i}`, amount: "1" });
    await call("POST", "/v1/customers", { email: "lister@example.com", name: "Lister" });
    const all = (await call("GET", "/v1/events?limit=10")).body;
    expect(all.object).toBe("list");
    expect(all.data.map((e: { type: string }) => e.type)).toEqual(["customer.created", "charge.pending", "charge.pending", "charge.pending"]);
    expect(Object.keys(all.data[0]).sort()).toEqual(["data", "id", "livemode", "timestamp", "type"]);
    const charges = (await call("GET", "/v1/events?type=charge.pending&limit=2")).body;
    expect(charges.data).toHaveLength(2);
    expect(charges.hasMore).toBe(true);
    const rest = (await call("GET", `/v1/events?type=charge.pending&limit=2&startingAfter=${charges.data[1].id}`)).body;
    expect(rest).toMatchObject({ hasMore: false, data: [{ type: "charge.pending" }] });
    expect(rest.data[0].id).toBe(all.data[3].id);
    expectError(await call("GET", "/v1/events?type=charge.paid"), 400, "parameter_invalid", "type");
    expectError(await call("GET", "/v1/events?startingAfter=evt_nope"), 400, "resource_missing", "startingAfter");
    // Another merchant, and this merchant's live mode, see none of them.
    expectError(await app.call("GET", `/v1/events/${all.data[0].id}`), 404, "resource_missing", "id");
    expect(key).not.toBe(app.testKey);
  });

  it("resends an event now with the same webhook-id", async () => {
    const { receiver, call } = await shop();
    dispatch();
    await call("POST", "/v1/customers", { email: "resend@example.com", name: "Resend" });
    const [first] = await receiver.waitForCount(1);
    const id = first!.headers["webhook-id"]!;
    await waitFor("the success", async () => (await delivery(id)).status === "SUCCEEDED");
    const resent = await call("POST", `/v1/events/${id}/resend`);
    expect(resent.status).toBe(200);
    expect(resent.body).toMatchObject({ id, deliveries: [{ status: "pending" }] });
    const second = (await receiver.waitForCount(2))[1]!;
    expect(second.headers["webhook-id"]).toBe(id);
    expect(second.body).toBe(first!.body);
    await waitFor("two attempts", async () => (await call("GET", `/v1/events/${id}`)).body.deliveries[0].attempts.length === 2);
    expectError(await call("POST", "/v1/events/evt_000000000000000000000000/resend"), 404, "resource_missing", "id");
  });

  it("sends a mock event of any type in test mode, signed and delivered like a real one", async () => {
    const { receiver, secret, call, merchant } = await shop();
    dispatch();
    const sent = await call("POST", "/v1/webhooks/test", { type: "charge.completed" });
    expect(sent.status).toBe(201);
    expect(sent.body).toMatchObject({ type: "charge.completed", livemode: false, data: { object: "charge", status: "COMPLETED", overpaidAmount: "0.00" } });
    const [got] = await receiver.waitForCount(1);
    expect(verify(secret, got!)).toMatchObject({ id: sent.body.id, type: "charge.completed" });

    expectError(await call("POST", "/v1/webhooks/test", { type: "charge.paid" }), 400, "parameter_invalid", "type");
    expectError(await call("POST", "/v1/webhooks/test", {}), 400, "parameter_missing", "type");
    expectError(await app.call("POST", "/v1/webhooks/test", { key: merchant.apiKeys.live.secret, body: { type: "charge.completed" } }), 400, "test_mode_only");
    const bare = await app.newMerchant();
    const before = await app.db.prisma.event.count();
    expectError(
      await app.call("POST", "/v1/webhooks/test", { key: bare.apiKeys.test.secret, body: { type: "customer.created" } }),
      400,
      "webhook_endpoint_missing",
    );
    expect(await app.db.prisma.event.count()).toBe(before);
  });

  it("serves events, deliveries and sendTestWebhook over GraphQL", async () => {
    const { receiver, key } = await shop();
    dispatch();
    const sent = await app.gql(`mutation { sendTestWebhook(type: "customer.created") { id type data } }`, {}, key);
    expect(sent.errors).toBeUndefined();
    expect(sent.data.sendTestWebhook).toMatchObject({ type: "customer.created", data: { object: "customer" } });
    await receiver.waitForCount(1);
    await waitFor("the success", async () => (await delivery(sent.data.sendTestWebhook.id)).status === "SUCCEEDED");
    const listed = await app.gql(
      `{ events(first: 5, type: "customer.created") { totalCount edges { node { id type timestamp livemode deliveries { url status attempts { statusCode succeeded } } } } } }`,
      {},
      key,
    );
    expect(listed.errors).toBeUndefined();
    expect(listed.data.events.totalCount).toBe(1);
    expect(listed.data.events.edges[0].node).toMatchObject({
      id: sent.data.sendTestWebhook.id,
      livemode: false,
      deliveries: [{ url: receiver.url, status: "SUCCEEDED", attempts: [{ statusCode: 200, succeeded: true }] }],
    });
    const bad = await app.gql(`{ events(type: "nope") { totalCount } }`, {}, key);
    expect(bad.errors?.[0].extensions.code).toBe("parameter_invalid");
  });
});
