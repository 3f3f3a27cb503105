// The per-request log line names the path, never the query string: queries carry customer emails
// and searches, and neither errors before routing nor unparsable requests bring them back. It
// carries the request id a trusted proxy sent (only a trusted one: anyone could forge it), health
// probes log at debug, and every line names its process.
import net from "node:net";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type { App } from "../../src/app.js";
import { createLogger } from "../../src/services.js";
import { loadConfig } from "../../src/config.js";
import { createMerchant } from "../../src/domain/merchants.js";
import { buildTestApp, freshDatabase, UNLIMITED_ADDRESS, WALLET } from "../helpers/harness.js";
import { recordingLogger } from "../helpers/logs.js";

const SECRET = "secret@example.com";
const log = recordingLogger();
let app: App;
let url: string;
/** The same service behind one trusted proxy (TRUST_PROXY=1). */
let proxied: App;
let proxiedUrl: string;
let key: string;
let drop: () => Promise<void>;

beforeAll(async () => {
  const fresh = await freshDatabase();
  drop = fresh.drop;
  const config = loadConfig({ NODE_ENV: "test", LOG_LEVEL: "info", REDIS_URL: process.env.REDIS_URL, PORT: "0", ...UNLIMITED_ADDRESS });
  app = await buildTestApp(config, { db: fresh.db, logger: log.logger });
  url = await app.start(0);
  proxied = await buildTestApp({ ...config, trustProxy: 1 }, { db: fresh.db, logger: log.logger });
  proxiedUrl = await proxied.start(0);
  const merchant = await createMerchant(fresh.db.prisma, { name: "Log Shop", testWallet: WALLET, liveWallet: WALLET }, { feeBps: 100 });
  key = merchant.apiKeys.test.secret;
});
afterAll(async () => {
  await app?.stop();
  await proxied?.stop();
  await drop?.();
});

const requestLines = () => log.lines().filter((l) => l.msg === "request");

describe("the request log line", () => {
  it.each([
    ["a listed search", "/v1/customers", 200],
    ["an unknown URL", "/v1/nothing", 404],
    ["a URL the router cannot decode", "/v1/customers/%zz", 400],
  ])("logs the path of %s without its query", async (_label, path, status) => {
    const res = await fetch(`${url}${path}?email=${SECRET}&query=${encodeURIComponent(SECRET)}`, { headers: { "x-api-key": key } });
    expect(res.status).toBe(status);
    const requestId = res.headers.get("x-request-id");
    await vi.waitFor(() => expect(requestLines().find((l) => l.requestId === requestId)).toMatchObject({ method: "GET", path, status }));
    expect(log.text()).not.toContain("secret");
  });

  it("logs a request Node could not parse by its request id and the parser's reason only", async () => {
    const socket = net.connect(Number(new URL(url).port), "127.0.0.1");
    let answer = "";
    socket.on("data", (d) => (answer += d));
    socket.write(`GET /v1/customers?email=${SECRET} HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n`);
    await new Promise((resolve) => socket.on("close", resolve));
    const requestId = /X-Request-Id: (\S+)/.exec(answer)?.[1];
    expect(log.lines().find((l) => l.requestId === requestId)).toMatchObject({ msg: "unparsable request", status: 400, reason: "HPE_INVALID_CONTENT_LENGTH" });
    expect(log.text()).not.toContain("secret");
  });
});

describe("request ids, probes and the process on each line", () => {
  const withId = (base: string, id: string) => fetch(`${base}/v1/customers`, { headers: { "x-api-key": key, "x-request-id": id } });

  it("keeps the X-Request-Id a trusted proxy sent, in the answer and the log line", async () => {
    const res = await withId(proxiedUrl, "caddy-3f2a.9b:1@edge");
    expect(res.headers.get("x-request-id")).toBe("caddy-3f2a.9b:1@edge");
    await vi.waitFor(() => expect(requestLines().find((l) => l.requestId === "caddy-3f2a.9b:1@edge")).toMatchObject({ path: "/v1/customers", status: 200 }));
  });

  it.each([
    ["without a trusted proxy", () => url, "client-chosen-id"],
    ["when it could forge a log line or flood one", () => proxiedUrl, `${"x".repeat(129)}`],
    ["when it holds characters a log reader would trip on", () => proxiedUrl, 'a"b{c}'],
  ])("makes its own request id %s", async (_label, base, sent) => {
    const res = await withId(base(), sent);
    const id = res.headers.get("x-request-id");
    expect(id).toBeTruthy();
    expect(id).not.toBe(sent);
    await vi.waitFor(() => expect(requestLines().find((l) => l.requestId === id)).toBeDefined());
  });

  it("logs health probes at debug only", async () => {
    for (const path of ["/healthz", "/readyz"]) expect((await fetch(`${url}${path}?probe=1`)).status).toBe(200);
    await fetch(`${url}/v1/customers`, { headers: { "x-api-key": key } });
    await vi.waitFor(() => expect(requestLines().some((l) => l.path === "/v1/customers")).toBe(true));
    const probes = requestLines().filter((l) => l.path === "/healthz" || l.path === "/readyz");
    expect(probes.map((l) => [l.path, l.level])).toEqual([
      ["/healthz", 20],
      ["/readyz", 20],
    ]);
  });

  it("names the service and the process (INSTANCE_ID, else host and pid) on every line", () => {
    const named = createLogger(loadConfig({ NODE_ENV: "test", INSTANCE_ID: "api-7" }), "stablegate-api");
    expect(named.bindings()).toEqual({ service: "stablegate-api", instance: "api-7" });
    const unnamed = createLogger(loadConfig({ NODE_ENV: "test" }), "stablegate-worker");
    expect(unnamed.bindings().instance).toMatch(new RegExp(`-${process.pid}$`));
  });
});
